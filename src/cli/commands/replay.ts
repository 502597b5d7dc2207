import { statSync } from "node:fs";
import { shippedCatalog } from "../../catalog/metric-definitions.ts";
import {
  DEFAULT_ENGINE_CONFIG,
  DEFAULT_WINDOW,
  engineConfigSchema,
  parseWindowSize,
} from "../../metrics/engine-config.ts";
import * as Effect from "effect/Effect";
import { replayFile, type ReplayCounts } from "../../stream/transports/embedded/embedded-replay.ts";
import {
  REPLAY_STATE_CACHE_MB,
  withReplayState,
  type ReplayState,
} from "../../stream/transports/embedded/replay-state.ts";
import { formatMetricTable, MetricRowsFold, type MetricRow } from "../replay-summary.ts";
import { RESULT_HEADERS, byMetricScopeCohort, formatGroupedResults, resultRow } from "../result-rows.ts";
import { formatTable } from "../text-table.ts";
import { CLUSTER_FLAGS } from "../cluster-flags.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { booleanFlag, integerFlag, parseFlags, requiredStringFlag, stringFlag } from "../flags.ts";
import { progressReporter } from "../progress.ts";
import { mapLines, writeLines } from "../output-lines.ts";
import { auditReplay } from "./replay-audit.ts";
import type { MetricResult } from "../../contract/result-record.ts";
import { jsonLine } from "../../contract/json-form.ts";

const USAGE = `Usage: agentops replay --input <facts.ndjson|facts.avro> [--output <results.ndjson>]
                       [--alerts <alerts.ndjson>] [--runs <runs.ndjson>] [--dlq <dlq.ndjson>]
                       [--window 1d] [--coverage-threshold 10] [--engine single|stages] [--engine-partitions 1]
                       [--table summary|grouped|full] [--width 120]
                       [--state disk|memory] [--state-dir DIR] [--state-cache-mb 16]
       agentops replay --from-topic [--verify] [--output <results.ndjson>] [--state disk|memory] [--state-dir DIR]
                       [--brokers host:port] [--schema-registry URL] [--topic-prefix P] [--log-level debug]

Replays a file of observation facts through the metric engine and the run monitor, in process
(no Kafka needed), and writes the final result of every result key, one JSON object a line,
sorted by key. The same records in any order give byte-identical output.

  --input               NDJSON (one fact a line, the contract's JSON form) or an Avro container file (.avro)
  --output              where to write the results (NDJSON); at least one of --output, --alerts, --dlq
  --alerts              where to write tripwire alerts from agent_step/sandbox_event records (NDJSON)
  --runs                where to write the last run-state summary of every monitored run (NDJSON; the
                        run-state topic's records, read by \`agentops serve\`)
  --dlq                 where to write rejected records and conflicts, with line number and reason
  --window              window size for window-scoped metrics: 1d (default), 12h, 1h, 15m, ...
  --coverage-threshold  LOW_COVERAGE alert threshold in hundredths, 0..99 (default 10; 0 = off)
  --engine              "single" (the default) or "stages": the partitioned engine's four stages, the
                        topology \`agentops run --engine stages\` runs on Kafka, over in-process logs; the
                        results are the same (docs/engine-state.md §4)
  --engine-partitions   the stages' partition count with --engine stages, 1..64 (default 1)
  --table               what to print before the input counts: "summary" (one row per metric: results
                        by status and the lowest coverage with its key; the default), "grouped" (also
                        every result, grouped by metric with short cohort labels, fitting the width)
                        or "full" (also every result on one line, every cohort coordinate spelled out)
  --width               columns to fit "summary" and "grouped" into (default: the terminal's, else 120)
  --state               where the engine keeps its state during the replay: "disk" (the default; LMDB
                        stores behind a bounded record cache, as a Kafka member, so memory stays flat
                        whatever the input's size) or "memory" (every fact in the heap: small files only)
  --state-dir           the directory under which the replay makes its temporary state directory
                        (default: the system's temporary directory); removed when the replay ends
  --state-cache-mb      the record cache's budget in MiB with --state disk, 1..4096 (default 16)

Audit mode (--from-topic): rebuilds every result into fresh state from the compacted
engine-facts topic, which keeps every accepted fact version for ever (the facts topic keeps only
its retention), validating each record again with the contract parser. With --verify it also
checks ingest over what the facts topic still retains (each accepted metric fact must have its
engine-facts record), compares the rebuild with the compacted results topic, prints the digest
of both, the ingest window (first retained offset per partition), every differing key and every
bad or missing record with its coordinates, and exits 1 on any of them. Use the window and
threshold the processors run with. With --engine stages (a deployment running the partitioned
engine) the rebuild reads the stage facts topic through the same stages instead.`;

/** Columns the tables fit into when stdout is not a terminal (CI logs, pipes). */
const DEFAULT_WIDTH = 120;

/** What a file replay reports once its output files are written. */
interface ReplayReport {
  readonly counts: ReplayCounts;
  readonly seconds: number;
  /** Every result, for the grouped and full tables only (empty for the summary). */
  readonly results: readonly MetricResult[];
  readonly rows: readonly MetricRow[];
  readonly resultCount: number;
  readonly alerts: number;
  readonly conflicts: number;
}

export const replayCommand: CliCommand = {
  name: "replay",
  summary: "replay a facts file through the engine in process and write the results",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(
      argv,
      {
        input: { type: "string" },
        output: { type: "string" },
        alerts: { type: "string" },
        runs: { type: "string" },
        dlq: { type: "string" },
        window: { type: "string" },
        "coverage-threshold": { type: "string" },
        table: { type: "string" },
        width: { type: "string" },
        engine: { type: "string" },
        "engine-partitions": { type: "string" },
        state: { type: "string" },
        "state-dir": { type: "string" },
        "state-cache-mb": { type: "string" },
        "from-topic": { type: "boolean" },
        verify: { type: "boolean" },
        ...CLUSTER_FLAGS,
      },
      "replay",
    );
    const windowText = stringFlag(flags, "window") ?? DEFAULT_WINDOW;
    const windowMillis = parseWindowSize(windowText);
    if (windowMillis === undefined)
      throw new UsageError(
        "--window",
        `"${windowText}" is not a duration`,
        "give a number and a unit (ms, s, m, h, d), e.g. --window 1d or --window 6h",
      );
    const threshold = integerFlag(
      flags,
      "coverage-threshold",
      DEFAULT_ENGINE_CONFIG.coverageThresholdHundredths,
      0,
      99,
    );
    const config = engineConfigSchema.safeParse({ windowMillis, coverageThresholdHundredths: threshold });
    if (!config.success)
      throw new UsageError(
        "--window",
        config.error.issues[0]?.message ?? "invalid",
        "use a size that divides one day (1h, 15m, ...) or whole days (1d, 7d)",
      );
    const engine = stringFlag(flags, "engine") ?? "single";
    if (engine !== "single" && engine !== "stages")
      throw new UsageError(
        "--engine",
        `"${engine}" is not an engine topology`,
        "give --engine single (the default) or --engine stages",
      );
    const partitions = integerFlag(flags, "engine-partitions", 1, 1, 64);
    if (engine === "single" && stringFlag(flags, "engine-partitions") !== undefined)
      throw new UsageError(
        "--engine-partitions",
        "only applies to --engine stages",
        "add --engine stages, or drop --engine-partitions",
      );
    const engineTopology =
      engine === "stages" ? ({ kind: "stages", partitions } as const) : ({ kind: "single" } as const);
    const stateKind = stringFlag(flags, "state") ?? "disk";
    if (stateKind !== "disk" && stateKind !== "memory") {
      const fix = "give --state disk (the default) or --state memory";
      throw new UsageError("--state", `"${stateKind}" is not a place for state`, fix);
    }
    const cacheMb = integerFlag(flags, "state-cache-mb", REPLAY_STATE_CACHE_MB, 1, 4096);
    const stateDir = stringFlag(flags, "state-dir");
    if (booleanFlag(flags, "from-topic")) {
      const audit = (state: ReplayState): Promise<number> => auditReplay(flags, config.data, engineTopology, state);
      return withReplayState(stateKind, stateDir, cacheMb, audit);
    }
    if (booleanFlag(flags, "verify"))
      throw new UsageError(
        "--verify",
        "only applies to --from-topic",
        "add --from-topic to audit the results topic, or drop --verify",
      );
    const table = stringFlag(flags, "table") ?? "summary";
    if (table !== "summary" && table !== "grouped" && table !== "full")
      throw new UsageError(
        "--table",
        `"${table}" is not a table kind`,
        "give --table summary, --table grouped or --table full",
      );
    const width = integerFlag(
      flags,
      "width",
      process.stdout.isTTY === true ? (process.stdout.columns ?? DEFAULT_WIDTH) : DEFAULT_WIDTH,
      40,
      1000,
    );
    const input = requiredStringFlag(flags, "input", "name the facts file, e.g. --input samples/facts.ndjson");
    const output = stringFlag(flags, "output");
    if (output === undefined && stringFlag(flags, "alerts") === undefined && stringFlag(flags, "dlq") === undefined) {
      throw new UsageError(
        "--output",
        "no output was named",
        "name at least one of --output results.ndjson, --alerts alerts.ndjson, --dlq dlq.ndjson",
      );
    }
    let size: number;
    try {
      size = statSync(input).size;
    } catch {
      throw new UsageError(
        "--input",
        `cannot read ${input}`,
        "check the path; generate a file with `agentops generate --out facts.ndjson`",
      );
    }

    const progress = progressReporter("replay", size);
    const started = performance.now();
    const alertsPath = stringFlag(flags, "alerts");
    const runsPath = stringFlag(flags, "runs");
    const dlqPath = stringFlag(flags, "dlq");
    // The output files are written from the sink log before the replay's state directory is removed.
    const replayed = async (state: ReplayState): Promise<ReplayReport> => {
      const onDisk = state.engineState === undefined ? {} : { engineState: state.engineState };
      const options = { input, onBytes: (bytes: number) => progress.update(bytes) };
      const { sinks, counts } = await Effect.runPromise(
        replayFile(
          options,
          { engine: config.data, engineTopology, tripwires: {}, ...onDisk },
          shippedCatalog(),
          state.sinkLog,
        ),
      );
      progress.done();
      const seconds = (performance.now() - started) / 1000;
      // Only the grouped and full tables need every result at hand; the summary folds them as they are written.
      const kept: MetricResult[] = [];
      const summary = new MetricRowsFold();
      let resultCount = 0;
      const resultLines = function* (): Generator<string> {
        for (const entry of sinks.results()) {
          const result = JSON.parse(entry.json) as MetricResult;
          resultCount += 1;
          summary.add(result);
          if (table !== "summary") kept.push(result);
          yield entry.json;
        }
      };
      if (output !== undefined) await writeLines(output, resultLines());
      else for (const _ of resultLines());
      if (alertsPath !== undefined) await writeLines(alertsPath, mapLines(sinks.alerts(), jsonLine));
      if (runsPath !== undefined)
        await writeLines(
          runsPath,
          mapLines(sinks.runStates(), (summary) => JSON.stringify(summary)),
        );
      if (dlqPath !== undefined) await writeLines(dlqPath, sinks.deadLetterLines());
      return {
        counts,
        seconds,
        results: kept,
        rows: summary.rows(),
        resultCount,
        alerts: sinks.alertCount,
        conflicts: sinks.conflicts(),
      };
    };
    const report = await withReplayState(stateKind, stateDir, cacheMb, replayed);
    const { counts, seconds, results } = report;

    if (table === "full")
      process.stdout.write(`${formatTable(RESULT_HEADERS, [...results].sort(byMetricScopeCohort).map(resultRow))}\n\n`);
    if (table === "grouped") process.stdout.write(`${formatGroupedResults(results, width)}\n\n`);
    const rejected = [...counts.rejected.values()].reduce((sum, count) => sum + count, 0);
    process.stdout.write(`${formatMetricTable(report.rows, width)}\n\n`);
    process.stdout.write(
      `${formatTable(
        ["input", "count"],
        [
          ["records read", String(counts.records)],
          ["metric facts accepted", String(counts.accepted)],
          ["redeliveries and re-reports (no-op)", String(counts.redeliveries)],
          ["invalid measures (fact kept)", String(counts.invalidMeasures)],
          ["quarantined (conflict)", String(counts.quarantined)],
          ["conflicting identities", String(report.conflicts)],
          ["agent events", String(counts.agentEvents)],
          ["tripwire alerts", String(report.alerts)],
          ...[...counts.rejected.entries()].sort().map(([reason, count]) => [`rejected ${reason}`, String(count)]),
          ["rejected (total)", String(rejected)],
        ],
      )}\n`,
    );
    process.stdout.write(
      `\n${report.resultCount} results${output === undefined ? "" : ` → ${output}`} in ${seconds.toFixed(2)} s ` +
        `(${Math.round(counts.records / Math.max(seconds, 0.001)).toLocaleString("en-US")} records/s)\n`,
    );
    return 0;
  },
};
