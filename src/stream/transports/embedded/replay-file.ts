import type { CatalogSummary } from "../../../catalog/metric-definitions.ts";
import { invalidMeasureLetter, type Rejection } from "../../../contract/rejection.ts";
import type { EngineConfig } from "../../../metrics/engine-config.ts";
import type { Conflict } from "../../../metrics/fact-ledger.ts";
import { MetricEngine } from "../../../metrics/metric-engine.ts";
import type { MetricResult } from "../../../metrics/result-record.ts";
import type { RunMonitorReplay } from "../../../tripwires/replay.ts";
import { routeRecord } from "../../processors/ingest-router.ts";
import { readRecords } from "./record-source.ts";
import type { ReplayCounts } from "../../../cli/replay-summary.ts";

/**
 * A dead letter of the input file, with its coordinates: a rejected record, or (record_rejected
 * false) an invalid measure of an accepted fact (contract revision 2 §1).
 */
export interface FileDeadLetter {
  readonly reason: Rejection["reason"];
  readonly field: string;
  readonly detail: string;
  /** False when the letter reports a problem of a fact that was still accepted (INVALID_MEASURE). */
  readonly record_rejected: boolean;
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
  /** Invalid measure fields of accepted facts (each also a dead letter with record_rejected false). */
  readonly invalidMeasures: number;
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
  let invalidMeasures = 0;
  for await (const record of readRecords(path, onBytes)) {
    counts.records += 1;
    const route = routeRecord(record.parsed);
    if (route.to === "dead-letters") {
      const { reason, field, detail } = route.rejection;
      counts.rejected[reason] = (counts.rejected[reason] ?? 0) + 1;
      deadLetters.push({ reason, field, detail, record_rejected: true, source: { file: path, line: record.position }, raw: record.raw ?? null });
      continue;
    }
    const fact = route.to === "run-monitor" ? route.event : route.fact;
    for (const measure of route.invalidMeasures) {
      invalidMeasures += 1;
      deadLetters.push({ ...invalidMeasureLetter(fact.fact_id, measure), record_rejected: false, source: { file: path, line: record.position }, raw: null });
    }
    if (route.to === "run-monitor") {
      counts.agentEvents += 1;
      agentEvents?.accept(route.event);
    } else {
      const outcome = engine.ingest(route.fact, record.position);
      if (outcome.kind === "accepted") counts.accepted += 1;
      // A re-report of a domain identity under another fact_id counts once, like a redelivery.
      else if (outcome.kind === "redelivery" || outcome.kind === "re-report") counts.redeliveries += 1;
      else counts.quarantined += 1;
    }
  }
  const results = engine.results();
  return { results, deadLetters, conflicts: engine.conflicts(), alerts: agentEvents?.finish() ?? [], counts, invalidMeasures };
}
