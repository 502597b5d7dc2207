import { readFileSync } from "node:fs";
import type { SandboxEvent } from "../../../src/contract/facts.ts";
import { createRunMonitor } from "../../../src/tripwires/monitor.ts";

/** The labelled command corpus and its scoring, shared by the test and `npm run tripwires:corpus`. */
export interface CorpusRow {
  readonly command: string;
  readonly cwd: string;
  readonly workspace_root: string;
  readonly kind: "shell" | "sql";
  readonly label: "destructive" | "benign";
  readonly rule?: string;
  readonly note: string;
}

export interface CorpusResult {
  readonly row: CorpusRow;
  readonly alertedRules: readonly string[];
}

export interface CorpusScore {
  readonly total: number;
  readonly truePositives: number;
  readonly falsePositives: number;
  readonly falseNegatives: number;
  readonly precision: number;
  readonly recall: number;
  /** Destructive rows that alerted, but not with their expected rule. */
  readonly wrongRule: readonly CorpusResult[];
  readonly misses: readonly CorpusResult[];
  readonly falseAlarms: readonly CorpusResult[];
}

export const CORPUS_PATH = new URL("../../fixtures/tripwires/commands.jsonl", import.meta.url);

export function loadCorpus(): CorpusRow[] {
  return readFileSync(CORPUS_PATH, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as CorpusRow);
}

/** Each row runs as the only record of its own run, as an `exec` (or `sql`) sandbox event. */
export function evaluateCorpus(rows: readonly CorpusRow[]): CorpusScore {
  const monitor = createRunMonitor();
  const results = rows.map((row, index): CorpusResult => {
    const event: SandboxEvent = {
      contract: "agentops.observation@1.0.0",
      type: "sandbox_event",
      fact_id: `corpus-${index}`,
      event_time: 1_700_000_000_000,
      provenance: null,
      run_id: `corpus-run-${index}`,
      seq: 0,
      kind: row.kind === "sql" ? "sql" : "exec",
      command: row.command,
      argv: undefined,
      path: undefined,
      // An empty cwd or workspace root is a record that carries none (an agent's own tool call).
      cwd: row.cwd === "" ? undefined : row.cwd,
      workspace_root: row.workspace_root === "" ? undefined : row.workspace_root,
      target: undefined,
      exit_code: undefined,
    };
    const alerts = monitor.process(event).alerts.filter((alert) => alert.kind === "DESTRUCTIVE");
    return { row, alertedRules: [...new Set(alerts.map((alert) => alert.rule_id))] };
  });
  const positives = results.filter((result) => result.alertedRules.length > 0);
  const truePositives = positives.filter((result) => result.row.label === "destructive").length;
  const falseAlarms = positives.filter((result) => result.row.label === "benign");
  const misses = results.filter((result) => result.row.label === "destructive" && result.alertedRules.length === 0);
  const wrongRule = results.filter(
    (result) =>
      result.row.label === "destructive" &&
      result.alertedRules.length > 0 &&
      result.row.rule !== undefined &&
      !result.alertedRules.includes(result.row.rule),
  );
  return {
    total: rows.length,
    truePositives,
    falsePositives: falseAlarms.length,
    falseNegatives: misses.length,
    precision: positives.length === 0 ? 1 : truePositives / positives.length,
    recall: truePositives + misses.length === 0 ? 1 : truePositives / (truePositives + misses.length),
    wrongRule,
    misses,
    falseAlarms,
  };
}

export function formatScore(score: CorpusScore): string {
  const lines = [
    `tripwire corpus: ${score.total} rows, TP ${score.truePositives}, FP ${score.falsePositives}, FN ${score.falseNegatives}`,
    `precision ${score.precision.toFixed(4)}  recall ${score.recall.toFixed(4)}  wrong-rule ${score.wrongRule.length}`,
  ];
  for (const miss of score.misses)
    lines.push(`  MISS      ${JSON.stringify(miss.row.command)} (expected ${miss.row.rule ?? "?"})`);
  for (const alarm of score.falseAlarms)
    lines.push(`  FALSE     ${JSON.stringify(alarm.row.command)} -> ${alarm.alertedRules.join(",")}`);
  for (const wrong of score.wrongRule)
    lines.push(
      `  WRONGRULE ${JSON.stringify(wrong.row.command)} expected ${wrong.row.rule ?? "?"} got ${wrong.alertedRules.join(",")}`,
    );
  return lines.join("\n");
}
