// Real-run evaluation of the run monitor: imports public agent trajectories fetched into
// fetched/ (never committed; see docs/tripwires.md "Real runs" for the sources) with the
// importers, replays every run through the monitor, and prints alerts per rule (per 100 runs)
// and per run. Run: npm run tripwires:realruns [-- fetched/dir format …] [--samples out.ndjson]
import { existsSync, writeFileSync } from "node:fs";
import { parseFact } from "../src/contract/parse-fact.ts";
import type { AgentEvent } from "../src/contract/facts.ts";
import { IMPORTERS, importLogs, isImportFormat, logFiles } from "../src/ingest/importers/import-logs.ts";
import type { ImportFormat } from "../src/ingest/importers/run-builder.ts";
import { compareAlerts } from "../src/tripwires/alert.ts";
import { createRunMonitor } from "../src/tripwires/monitor.ts";
import type { TripwireAlert } from "../src/tripwires/alert.ts";

/** Where `fetch`ed public material is unpacked, by format (docs/tripwires.md lists the repositories). */
const DEFAULT_SOURCES: readonly [string, ImportFormat][] = [
  ["fetched/swe-agent", "swe-agent"],
  ["fetched/mini-swe-agent", "mini-swe-agent"],
  ["fetched/openhands", "openhands"],
  ["fetched/claude-code", "claude-code"],
  ["fetched/codex", "codex"],
];

const args = process.argv.slice(2);
const explain = args.includes("--explain");
if (explain) args.splice(args.indexOf("--explain"), 1);
const samplesAt = args.indexOf("--samples");
const samplesPath = samplesAt === -1 ? undefined : args[samplesAt + 1];
const positional = samplesAt === -1 ? args : [...args.slice(0, samplesAt), ...args.slice(samplesAt + 2)];
const sources: [string, ImportFormat][] = [];
for (let index = 0; index + 1 < positional.length; index += 2) {
  const format = positional[index + 1] ?? "";
  if (!isImportFormat(format)) throw new Error(`unknown format ${format}`);
  sources.push([positional[index] ?? "", format]);
}
if (sources.length === 0) sources.push(...DEFAULT_SOURCES.filter(([path]) => existsSync(path)));
if (sources.length === 0) {
  process.stderr.write(
    "no fetched trajectories: fetch public trajectories into fetched/<format>/ first (docs/tripwires.md, Real runs)\n",
  );
  process.exit(2);
}

const BASE_TIME = Date.parse("2026-01-01T00:00:00Z"); // derived times must not depend on checkout mtimes
const byRule = new Map<string, number>();
const perRun: { format: string; runId: string; steps: number; alerts: TripwireAlert[]; events: AgentEvent[] }[] = [];
let runs = 0;
for (const [path, format] of sources) {
  const files = logFiles([path], IMPORTERS[format]);
  const eventsByRun = new Map<string, AgentEvent[]>();
  const summary = importLogs(format, files, { baseTimeMs: BASE_TIME }, (fact) => {
    const parsed = parseFact(fact);
    if (!parsed.ok || (parsed.fact.type !== "agent_step" && parsed.fact.type !== "sandbox_event")) return;
    const list = eventsByRun.get(parsed.fact.run_id) ?? [];
    list.push(parsed.fact);
    eventsByRun.set(parsed.fact.run_id, list);
  });
  process.stdout.write(
    `${format.padEnd(15)} ${path}: ${summary.files} files, ${summary.runs} runs, ${summary.steps} steps, ${summary.facts} facts\n`,
  );
  for (const [runId, events] of eventsByRun) {
    runs++;
    const monitor = createRunMonitor();
    const alerts = events.flatMap((event) => monitor.process(event).alerts).sort(compareAlerts);
    for (const alert of alerts) byRule.set(alert.rule_id, (byRule.get(alert.rule_id) ?? 0) + 1);
    perRun.push({
      format,
      runId,
      steps: events.filter((event) => event.type === "agent_step").length,
      alerts,
      events: explain ? events : [],
    });
  }
}

process.stdout.write(`\n${runs} runs\n\nrule                          alerts  per 100 runs\n`);
for (const [rule, count] of [...byRule.entries()].sort())
  process.stdout.write(
    `${rule.padEnd(28)} ${String(count).padStart(7)}  ${((count * 100) / runs).toFixed(1).padStart(12)}\n`,
  );
process.stdout.write("\nruns with alerts (format, run, steps, alerts by rule):\n");
for (const run of perRun.filter((entry) => entry.alerts.length > 0)) {
  const counts = new Map<string, number>();
  for (const alert of run.alerts) counts.set(alert.rule_id, (counts.get(alert.rule_id) ?? 0) + 1);
  process.stdout.write(
    `  ${run.format} ${run.runId} steps=${run.steps} ${[...counts.entries()].map(([rule, count]) => `${rule}=${count}`).join(" ")}\n`,
  );
}
if (explain) {
  // For hand-judging: each loop alert with the agent steps of its seq range.
  for (const run of perRun) {
    for (const alert of run.alerts.filter((entry) => entry.kind !== "DESTRUCTIVE")) {
      process.stdout.write(
        `\n## ${alert.rule_id} ${run.format} ${run.runId} seq ${alert.evidence.seq_from}..${alert.evidence.seq_to}\n`,
      );
      for (const event of run.events) {
        if (event.type !== "agent_step" || event.seq < alert.evidence.seq_from || event.seq > alert.evidence.seq_to)
          continue;
        const digest = (event.observation_digest ?? "").slice(7, 15);
        process.stdout.write(
          `  ${String(event.seq).padStart(4)} ${event.kind.padEnd(9)} ${(event.status ?? "-").padEnd(5)} ${digest} ${event.actor ?? ""} ${(event.input ?? "").slice(0, 150).replaceAll("\n", "⏎")}\n`,
        );
      }
    }
  }
}
if (samplesPath !== undefined) {
  writeFileSync(
    samplesPath,
    perRun.flatMap((run) => run.alerts.map((alert) => JSON.stringify({ format: run.format, ...alert }))).join("\n") +
      "\n",
  );
  process.stdout.write(`\nevery alert → ${samplesPath}\n`);
}
