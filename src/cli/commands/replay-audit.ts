import * as Effect from "effect/Effect";
import { shippedCatalog } from "../../catalog/metric-definitions.ts";
import type { EngineConfig } from "../../metrics/engine-config.ts";
import { rebuildFromEngineFacts, type AuditMismatch } from "../../stream/audit/audit-rebuild.ts";
import { EngineFactKeys } from "../../stream/audit/engine-fact-keys.ts";
import { checkIngestWindow, formatWindow } from "../../stream/audit/ingest-window.ts";
import { LISTED_MISMATCHES } from "../../stream/audit/mismatch-list.ts";
import { compareSortedResults, LISTED_DIFFERENCES, readLatestResultsInto } from "../../stream/audit/topic-results.ts";
import { canonicalJson } from "../../contract/canonical-json.ts";
import type { EngineStateOptions } from "../../stream/processors/engine.ts";
import type { TopologyConfig } from "../../stream/runtime/services.ts";
import type { ReplayState } from "../../stream/transports/embedded/replay-state.ts";
import type { SinkLog } from "../../stream/transports/embedded/sink-log.ts";
import { withCluster, type ClusterClients } from "../cluster-flags.ts";
import { booleanFlag, stringFlag, type ParsedFlags } from "../flags.ts";
import { writeLines } from "../output-lines.ts";

/**
 * Audit replay: rebuild the engine from the engine-facts topic (the whole history) and, with
 * --verify, check ingest over the facts topic's retained window and compare with the results topic.
 */
export function auditReplay(
  flags: ParsedFlags,
  config: EngineConfig,
  engineTopology: NonNullable<TopologyConfig["engineTopology"]>,
  state: ReplayState,
): Promise<number> {
  return withCluster(flags, "agentops-audit", async (clients) => {
    const keys = EngineFactKeys.open(state.directory, Math.floor(state.cacheBytes / 4));
    try {
      return await auditAgainstTopics(flags, config, engineTopology, clients, {
        keys,
        engineState: state.engineState,
        sinkLog: state.sinkLog,
      });
    } finally {
      await keys.close();
    }
  });
}

async function auditAgainstTopics(
  flags: ParsedFlags,
  config: EngineConfig,
  engineTopology: NonNullable<TopologyConfig["engineTopology"]>,
  { kafka, registry, serde, topics }: ClusterClients,
  where: {
    readonly keys: EngineFactKeys;
    readonly engineState: EngineStateOptions | undefined;
    readonly sinkLog: SinkLog;
  },
): Promise<number> {
  // The partitioned engine's whole history is its stage facts topic (the same records, placed by fact_id).
  const history = engineTopology.kind === "stages" ? topics.stageFacts : topics.engineFacts;
  const onRecord = (count: number): void => {
    if (process.stderr.isTTY === true && count % 10_000 === 0)
      process.stderr.write(`\rrebuilding from ${history}: ${count.toLocaleString("en-US")} records`);
  };
  const rebuilding = rebuildFromEngineFacts(kafka, history, config, shippedCatalog(), where, onRecord, engineTopology);
  const rebuild = await Effect.runPromise(rebuilding);
  if (process.stderr.isTTY === true) process.stderr.write("\r\u001b[K");
  const output = stringFlag(flags, "output");
  let rebuiltCount = 0;
  const rebuiltLines = function* (): Generator<string> {
    for (const { json } of rebuild.results()) {
      rebuiltCount += 1;
      yield json;
    }
  };
  if (output !== undefined) await writeLines(output, rebuiltLines());
  else for (const _ of rebuiltLines());
  process.stdout.write(`rebuilt ${rebuiltCount} results from ${history}\n`);
  if (!booleanFlag(flags, "verify")) return 0;
  const ingest = await checkIngestWindow(kafka, registry, topics.facts, rebuild.keys);
  process.stdout.write(
    `engine rebuilt from ${history} (${rebuild.records} records, whole history); ` +
      `ingest checked over ${topics.facts} from offsets ${formatWindow(ingest.window)} (${ingest.records} records, ` +
      `${ingest.metricFacts} metric facts)\n`,
  );
  // Both sides in key order from the sink log, so neither is held in memory.
  await readLatestResultsInto(kafka, serde, topics.results, where.sinkLog);
  const canonical = function* (): Generator<readonly [string, string]> {
    for (const { key, json } of rebuild.results()) yield [key, canonicalJson(JSON.parse(json))] as const;
  };
  const comparison = compareSortedResults(canonical(), where.sinkLog.sorted("topicResults"));
  process.stdout.write(
    `rebuilt digest       ${comparison.expectedDigest}\nresults topic digest ${comparison.actualDigest}\n`,
  );
  const sourceMismatches = [...rebuild.mismatches.listed, ...ingest.mismatches.listed];
  const mismatchCount = rebuild.mismatches.count + ingest.mismatches.count;
  if (comparison.differingCount === 0 && mismatchCount === 0) {
    process.stdout.write(`verified: ${comparison.actualCount} results on ${topics.results} equal the rebuild\n`);
    return 0;
  }
  if (mismatchCount > 0) {
    process.stdout.write(`MISMATCH: ${mismatchCount} record(s) of the audit source:\n`);
    for (const mismatch of sourceMismatches)
      process.stdout.write(`  ${describePosition(mismatch)}  ${mismatch.detail}\n`);
    if (mismatchCount > sourceMismatches.length)
      process.stdout.write(
        `  … and ${mismatchCount - sourceMismatches.length} more (the first ${LISTED_MISMATCHES} of each source are listed)\n`,
      );
  }
  if (comparison.differingCount > 0) {
    process.stdout.write(`MISMATCH: ${comparison.differingCount} key(s) differ:\n`);
    const presence = (present: boolean): string => (present ? "present" : "absent");
    for (const { key, expected, actual } of comparison.differingKeys)
      process.stdout.write(`  ${key}  (rebuild: ${presence(expected)}, topic: ${presence(actual)})\n`);
    if (comparison.differingCount > comparison.differingKeys.length)
      process.stdout.write(
        `  … and ${comparison.differingCount - comparison.differingKeys.length} more (the first ${LISTED_DIFFERENCES} are listed)\n`,
      );
  }
  return 1;
}

function describePosition({ position }: AuditMismatch): string {
  return `${position.topic}/${position.partition}@${position.offset}`;
}
