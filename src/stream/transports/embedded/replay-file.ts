import type { CatalogSummary } from "../../../catalog/metric-definitions.ts";
import type { Rejection } from "../../../contract/rejection.ts";
import type { EngineConfig } from "../../../metrics/engine-config.ts";
import type { Conflict } from "../../../metrics/fact-ledger.ts";
import { MetricEngine } from "../../../metrics/metric-engine.ts";
import type { MetricResult } from "../../../metrics/result-record.ts";
import type { RunMonitorReplay } from "../../../tripwires/replay.ts";
import { routeRecord } from "../../processors/ingest-router.ts";
import { readRecords } from "./record-source.ts";
import type { ReplayCounts } from "../../../cli/replay-summary.ts";

/** A rejected input record, with its coordinates in the input file. */
export interface FileDeadLetter {
  readonly reason: Rejection["reason"];
  readonly field: string;
  readonly detail: string;
  /** `line` is the 1-based line of an NDJSON file, or the 1-based record index of an Avro container. */
  readonly source: { readonly file: string; readonly line: number };
  readonly raw: string | null;
}

export interface ReplayOutcome {
  readonly results: readonly { key: string; json: string; result: MetricResult }[];
  readonly deadLetters: readonly FileDeadLetter[];
  readonly conflicts: readonly Conflict[];
  readonly alerts: readonly unknown[];
  readonly counts: ReplayCounts;
}

/**
 * The embedded transport: reads a whole file through the same engine the Kafka processors run,
 * and returns the final state. Rejected records are kept with their position; nothing stops the
 * replay but an unreadable file.
 */
export async function replayFile(path: string, config: EngineConfig, catalog: CatalogSummary, agentEvents: RunMonitorReplay | undefined, onBytes?: (bytesRead: number) => void): Promise<ReplayOutcome> {
  const engine = new MetricEngine(config, catalog);
  const deadLetters: FileDeadLetter[] = [];
  const counts: ReplayCounts = { records: 0, accepted: 0, redeliveries: 0, quarantined: 0, agentEvents: 0, rejected: {} };
  for await (const record of readRecords(path, onBytes)) {
    counts.records += 1;
    const route = routeRecord(record.parsed);
    if (route.to === "dead-letters") {
      const { reason, field, detail } = route.rejection;
      counts.rejected[reason] = (counts.rejected[reason] ?? 0) + 1;
      deadLetters.push({ reason, field, detail, source: { file: path, line: record.position }, raw: record.raw ?? null });
    } else if (route.to === "run-monitor") {
      counts.agentEvents += 1;
      agentEvents?.accept(route.event);
    } else {
      const outcome = engine.ingest(route.fact);
      if (outcome.kind === "accepted") counts.accepted += 1;
      else if (outcome.kind === "redelivery") counts.redeliveries += 1;
      else counts.quarantined += 1;
    }
  }
  const results = engine.results();
  return { results, deadLetters, conflicts: engine.conflicts(), alerts: agentEvents?.finish() ?? [], counts };
}
