import type { CatalogSummary } from "../../catalog/metric-definitions.ts";
import type { EngineConfig } from "../../metrics/engine-config.ts";
import type { Conflict, LedgerOutcome } from "../../metrics/fact-ledger.ts";
import { MetricEngine } from "../../metrics/metric-engine.ts";
import type { ResultChange } from "../../metrics/result-record.ts";
import { originOf, type EngineFact, type Metrics, type Processor, type SinkRecord, type SourceRecord, type UnreadableRecord } from "../processor.ts";

/** Backlog (records behind the source's head) above which a batch's flush may be deferred. */
export const FLUSH_BACKLOG_THRESHOLD = 20_000;
/** Deferred flushes still happen at least this often, so results keep moving during catch-up. */
export const FLUSH_EVERY_FACTS = 100_000;

/** The store that holds what the results topic holds (topology.ts); the engine reads its keys. */
export const PUBLISHED_RESULTS = "published-results";

/**
 * The metric engine as a processor. Its source (accepted facts, one partition, compacted by fact
 * version) is its own changelog: on every assignment the runtime replays it from offset 0 through
 * `restore` (nothing is published), then `goLive` writes the whole rebuilt result table to the
 * published-results store, which was restored from the results topic and drops every write equal
 * to what the topic holds; keys the topic holds and the rebuild does not are deleted. So the
 * results topic receives exactly the difference, and a restart with no new facts writes nothing.
 * Live, each batch's changed results are published; a conflict becomes a dead letter only live (a
 * rebuild finds the conflicts an earlier live run already reported).
 * A record it cannot read (a newer layout, damaged bytes) is dead-lettered as UNDECODABLE_BYTES with
 * its engine-facts position when live (once, like a conflict), and contributes nothing.
 */
export function engineProcessor(config: EngineConfig, catalog: CatalogSummary): Processor<EngineFact | UnreadableRecord> {
  return {
    name: "engine",
    open: (_partition, stores, metrics) => {
      const engine = new MetricEngine(config, catalog);
      const published = stores.get(PUBLISHED_RESULTS);
      /** Facts ingested since the last flush (see process). */
      let unflushed = 0;
      return {
        restore: (records) => {
          for (const { value } of records) if (!("unreadable" in value)) engine.ingest(value.fact, originOf(value.source));
        },
        goLive: () => {
          engine.flush();
          const current = engine.results();
          const keys = new Set(current.map((entry) => entry.key));
          const outputs: SinkRecord[] = current.map((entry) => ({ topic: "results", key: entry.key, value: entry.result }));
          for (const key of published?.keys() ?? []) if (!keys.has(key)) outputs.push({ topic: "results", key, value: null });
          return { outputs };
        },
        process: (batch) => {
          const outputs: SinkRecord[] = [];
          for (const record of batch.records) ingestLive(engine, record, outputs, metrics);
          // Catching up on a backlog, results for facts the next batches will change again are not
          // worth publishing: flush once the backlog is small, or at least every FLUSH_EVERY_FACTS
          // facts. At the head of the stream every batch is flushed, so live latency is unchanged.
          unflushed += batch.records.length;
          if (batch.backlog > FLUSH_BACKLOG_THRESHOLD && unflushed < FLUSH_EVERY_FACTS) return { outputs };
          unflushed = 0;
          return { outputs: [...outputs, ...resultRecords(engine.flush())] };
        },
      };
    },
  };
}

function ingestLive(engine: MetricEngine, record: SourceRecord<EngineFact | UnreadableRecord>, outputs: SinkRecord[], metrics: Metrics): void {
  if ("unreadable" in record.value) {
    const rejection = { reason: "UNDECODABLE_BYTES", field: "", detail: `engine-facts record: ${record.value.unreadable}` } as const;
    outputs.push({ topic: "deadLetters", key: originKey(record.position), value: { kind: "record", rejection, recordRejected: true, position: record.position, factId: null, original: record.original } });
    return;
  }
  const { fact, source } = record.value;
  const outcome = engine.ingest(fact, originOf(source));
  countOutcome(metrics, outcome);
  const later = outcome.kind === "quarantined" ? undefined : engine.laterTerminalConflict(fact);
  const conflicts: readonly Conflict[] = outcome.kind === "quarantined" ? outcome.conflicts : later === undefined ? [] : [later];
  for (const conflict of conflicts) outputs.push({ topic: "deadLetters", key: conflict.identity, value: { kind: "conflict", conflict, position: source, factId: fact.fact_id } });
}

function countOutcome(metrics: Metrics, outcome: LedgerOutcome): void {
  metrics.count("agentops_engine_facts_total", "Metric facts the engine read live, by ledger outcome (accepted, redelivery, re-report, quarantined)", { outcome: outcome.kind });
}

function resultRecords(changes: readonly ResultChange[]): SinkRecord[] {
  return changes.map((change) => ({ topic: "results", key: change.key, value: change.result }));
}

function originKey(position: SourceRecord<unknown>["position"]): string {
  return String(originOf(position));
}
