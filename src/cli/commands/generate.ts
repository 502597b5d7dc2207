import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { CliCommand } from "../command.ts";
import { integerFlag, parseFlags, requiredStringFlag, stringFlag } from "../flags.ts";
import { DEFAULT_SEED, DEFAULT_TASKS } from "../../workload/workload.ts";
import { writeWorkload, type WriteProgress } from "../../workload/writer.ts";

const USAGE = `Usage: agentops generate --out <file.ndjson> [--tasks N] [--seed S] [--facts N]

Writes a synthetic, deterministic observation workload as NDJSON (contract agentops.observation@1.0.0,
one JSON record a line): tasks with their Deliveries, model calls, costs (USD, EUR, JPY), packets,
repairs, defined-task snapshots and monitored agent runs, with a few percent of every anomaly the
engine handles (estimated/shared costs, missing durations, open Deliveries, mixed outcomes,
incomplete attribution, conflicts, exact redeliveries, unsupported-contract and malformed lines,
loops, redundant steps and destructive commands). Same seed and size → byte-identical file.

Flags:
  --out <file>   where to write (required; overwritten)
  --tasks N      number of tasks (default ${DEFAULT_TASKS}; ≈ 20 lines per task)
  --facts N      approximate number of lines instead (e.g. 1000000); overrides --tasks
  --seed S       PRNG seed, a whole number (default ${DEFAULT_SEED})
  -h, --help     show this text

Progress goes to stderr when it is a terminal; a summary is printed at the end.`;

function describe(progress: WriteProgress): string {
  return `${progress.lines.toLocaleString("en-US")} lines, ${(progress.bytes / 1_048_576).toFixed(1)} MiB, ${progress.batches} batch(es)`;
}

export const generateCommand: CliCommand = {
  name: "generate",
  summary: "write a deterministic synthetic observation workload (NDJSON) for demos, tests and benchmarks",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(
      argv,
      { out: { type: "string" }, tasks: { type: "string" }, facts: { type: "string" }, seed: { type: "string" } },
      "generate",
    );
    const out = resolve(requiredStringFlag(flags, "out", "give the output file, e.g. --out samples/facts.ndjson"));
    const seed = integerFlag(flags, "seed", DEFAULT_SEED, 0, 4_294_967_295);
    const tasks = integerFlag(flags, "tasks", DEFAULT_TASKS, 1, 10_000_000);
    const facts =
      stringFlag(flags, "facts") === undefined ? undefined : integerFlag(flags, "facts", 1_000_000, 1, 1_000_000_000);

    mkdirSync(dirname(out), { recursive: true });
    const interactive = process.stderr.isTTY === true;
    const started = performance.now();
    const stats = await writeWorkload(out, facts === undefined ? { seed, tasks } : { seed, facts }, (progress) => {
      if (interactive) process.stderr.write(`\rgenerate: ${describe(progress)}`);
    });
    if (interactive) process.stderr.write("\n");
    const seconds = (performance.now() - started) / 1000;
    process.stderr.write(
      [
        `generate: wrote ${stats.lines.toLocaleString("en-US")} lines (${(stats.bytes / 1_048_576).toFixed(1)} MiB) ` +
          `to ${out} in ${seconds.toFixed(1)} s (seed ${seed})`,
        `  ${stats.tasks} tasks, ${stats.deliveries} deliveries, ${stats.agentEvents} agent events (${stats.destructiveRuns} runs with a destructive command)`,
        `  intentional anomalies: ${stats.redeliveries} exact redeliveries, ` +
          `${stats.conflictingVersions} conflicting versions, ${stats.unsupportedContract} unsupported-contract records, ` +
          `${stats.malformed} malformed lines`,
        `  revision 2 cases: ${stats.invalidMeasureFacts} facts with an invalid or range-edge measure (accepted), ` +
          `${stats.reReports} re-reports under a new fact_id`,
      ].join("\n") + "\n",
    );
    return 0;
  },
};
