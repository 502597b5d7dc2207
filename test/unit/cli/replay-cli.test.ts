import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Rng } from "../../../src/workload/prng.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const NODE = join(ROOT, "node_modules/.bin/node");
const SAMPLE = join(ROOT, "samples/facts.ndjson");

function agentops(...args: string[]) {
  const run = spawnSync(NODE, [join(ROOT, "bin/agentops"), ...args], { encoding: "utf8", cwd: ROOT });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A seeded shuffle (the workload generator's PRNG), so a failure can be reproduced. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const rng = new Rng(seed);
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rng.next() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

describe("agentops replay (embedded, end to end through the CLI)", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentops-replay-"));

  it(
    "the bundled sample, and the same lines shuffled and redelivered, give byte-identical results and alerts",
    { timeout: 120_000 },
    () => {
      const lines = readFileSync(SAMPLE, "utf8")
        .split("\n")
        .filter((line) => line !== "");
      // Redelivering metric facts is a no-op; agent events keep their per-run order (the run monitor
      // reads a run in arrival order, as Kafka delivers one run's partition).
      const agentEvent = (line: string): boolean =>
        line.includes('"type":"agent_step"') || line.includes('"type":"sandbox_event"');
      const metricLines = lines.filter((line) => !agentEvent(line));
      const mixed = [...shuffled([...metricLines, ...metricLines.slice(0, 500)], 7), ...lines.filter(agentEvent)];
      const shuffledFile = join(dir, "shuffled.ndjson");
      writeFileSync(shuffledFile, `${mixed.join("\n")}\n`);

      const first = agentops(
        "replay",
        "--input",
        SAMPLE,
        "--output",
        join(dir, "a.ndjson"),
        "--alerts",
        join(dir, "a-alerts.ndjson"),
        "--dlq",
        join(dir, "a-dlq.ndjson"),
      );
      const second = agentops(
        "replay",
        "--input",
        shuffledFile,
        "--output",
        join(dir, "b.ndjson"),
        "--alerts",
        join(dir, "b-alerts.ndjson"),
      );
      expect(first.code, first.stderr).toBe(0);
      expect(second.code, second.stderr).toBe(0);
      const results = readFileSync(join(dir, "a.ndjson"), "utf8");
      expect(results.split("\n").filter((line) => line !== "").length).toBeGreaterThan(100);
      expect(readFileSync(join(dir, "b.ndjson"), "utf8")).toBe(results);
      expect(readFileSync(join(dir, "b-alerts.ndjson"), "utf8")).toBe(
        readFileSync(join(dir, "a-alerts.ndjson"), "utf8"),
      );
      expect(first.stdout).toMatch(/metric\s+results\s+published/);
    },
  );

  it("rejected lines go to the dead-letter file with their line number and reason, and conflicts are listed", () => {
    const dlq = readFileSync(join(dir, "a-dlq.ndjson"), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map(
        (line) =>
          JSON.parse(line) as {
            reason: string;
            record_rejected: boolean;
            source: { line?: number; versions?: { fact_id: string; line: number }[] };
          },
      );
    const rejected = dlq.filter((letter) => letter.record_rejected && letter.reason !== "CONFLICT");
    expect(rejected.map((letter) => letter.reason).sort()).toEqual([
      "DUPLICATE_FIELD",
      "INVALID_TIMESTAMP",
      "INVALID_TIMESTAMP",
      "MALFORMED_JSON",
      "UNSUPPORTED_CONTRACT",
      "UNSUPPORTED_CONTRACT",
      "UNSUPPORTED_CONTRACT",
    ]);
    // Revision 2: invalid measures are reported without rejecting their fact, with its line.
    const measures = dlq.filter((letter) => letter.reason === "INVALID_MEASURE");
    expect(measures.length).toBeGreaterThan(10);
    for (const letter of measures) expect(letter.record_rejected).toBe(false);
    // Conflicts (and later TERMINAL summaries) name the line of every version.
    const conflicts = dlq.filter(
      (letter) => letter.reason === "CONFLICT" || letter.reason === "LATER_TERMINAL_SUMMARY",
    );
    expect(conflicts.some((letter) => letter.reason === "LATER_TERMINAL_SUMMARY")).toBe(true);
    for (const letter of conflicts) {
      expect(letter.source.versions?.length).toBeGreaterThanOrEqual(2);
      for (const version of letter.source.versions ?? [])
        expect(readFileSync(SAMPLE, "utf8").split("\n")[version.line - 1]).toContain(version.fact_id);
    }
    const lines = readFileSync(SAMPLE, "utf8").split("\n");
    for (const letter of rejected) {
      expect(letter.source.line).toBeGreaterThan(0);
      expect(lines[(letter.source.line as number) - 1]).toBeDefined();
    }
    expect(dlq.some((letter) => letter.reason === "CONFLICT")).toBe(true);
  });

  it("a bad flag names the flag and the fix, exit code 2", { timeout: 60_000 }, () => {
    const run = agentops("replay", "--input", SAMPLE, "--output", join(dir, "x.ndjson"), "--coverage-threshold", "100");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--coverage-threshold");
    expect(run.stderr).toContain("Fix:");
    const window = agentops("replay", "--input", SAMPLE, "--output", join(dir, "x.ndjson"), "--window", "7h");
    expect(window.code).toBe(2);
    expect(window.stderr).toContain("--window");
  });

  // One process per command (eleven now): allow for a loaded, shared machine.
  it("every command answers --help", { timeout: 300_000 }, () => {
    const help = agentops("--help");
    const names = [...help.stdout.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1] as string);
    expect(names).toEqual(
      expect.arrayContaining([
        "replay",
        "run",
        "produce",
        "otlp",
        "hook",
        "results",
        "alerts",
        "generate",
        "topics",
        "catalog",
      ]),
    );
    for (const name of names) {
      const run = agentops(name, "--help");
      expect(run.code, name).toBe(0);
      expect(run.stdout, name).toContain("Usage:");
    }
  });
});
