import * as Effect from "effect/Effect";
import type { Kafka, KafkaMessage } from "kafkajs";
import type { CatalogSummary } from "../../catalog/metric-definitions.ts";
import { isAgentEvent, type MetricFact } from "../../contract/facts.ts";
import { parseNormalizedFact } from "../../contract/parse-fact.ts";
import type { TransportError } from "../../errors.ts";
import type { EngineConfig } from "../../metrics/engine-config.ts";
import { readTopicToEnd } from "../../kafka/read-topic.ts";
import { engineFactKey, readEngineFact } from "../../kafka/serde/engine-facts-record.ts";
import type { TopicPosition } from "../processor.ts";
import type { TopologyConfig } from "../runtime/services.ts";
import { replaySource } from "../transports/embedded/embedded-replay.ts";
import type { EngineFactSource } from "../transports/embedded/topology-sources.ts";
import type { EngineStateOptions } from "../processors/engine.ts";
import type { EngineObserver } from "../../lineage/engine-directory.ts";
import type { EngineFactKeyLookup, EngineFactKeys } from "./engine-fact-keys.ts";
import type { SinkLog } from "../transports/embedded/sink-log.ts";
import { MismatchList } from "./mismatch-list.ts";

export type { AuditMismatch } from "./mismatch-list.ts";

export interface EngineRebuild {
  /** The rebuilt result of every result key as its JSON line, in key order (read from the sink log, inside the replay's state). */
  readonly results: () => Iterable<{ readonly key: string; readonly json: string }>;
  /** Records read from the engine-facts topic. */
  readonly records: number;
  /** The key of every engine-facts record read, valid or not: what the ingest check looks up. */
  readonly keys: EngineFactKeyLookup;
  /** Engine-facts records that do not read, do not validate or do not carry their own key (the first ones, and how many). */
  readonly mismatches: MismatchList;
}

/**
 * Audit rebuild: the engine, on the embedded transport, over every record of the compacted
 * engine-facts topic (or, for the partitioned engine, the stage facts topic, the same records
 * placed by fact_id, through the same stages). That topic holds one record per distinct accepted fact version for ever
 * (docs/engine-state.md §5), so the rebuild covers the whole history even after the facts topic's
 * retention deleted its early segments. The audit distrusts the writer: each record is read, then
 * validated again by the contract parser, and its key must be the one its content gives; a record
 * failing any of these is a mismatch with its coordinates and does not reach the engine. Nothing
 * of the running processors' state is used, so the result is an independent rebuild to compare
 * with the compacted results topic. `where` says where the rebuild keeps the keys it read and the
 * engine's state (on disk in a replay's temporary directory, or in memory).
 */
export function rebuildFromEngineFacts(
  kafka: Kafka,
  topic: string,
  config: EngineConfig,
  catalog: CatalogSummary,
  where: {
    readonly keys: EngineFactKeys;
    readonly engineState?: EngineStateOptions | undefined;
    readonly engineObserver?: EngineObserver;
    readonly sinkLog?: SinkLog;
  },
  onRecord?: (count: number) => void,
  engineTopology?: TopologyConfig["engineTopology"],
): Effect.Effect<EngineRebuild, TransportError> {
  let records = 0;
  const { keys } = where;
  const mismatches = new MismatchList();
  const source: EngineFactSource = (emit) =>
    readTopicToEnd(kafka, topic, async (message, partition) => {
      records += 1;
      onRecord?.(records);
      const position = { topic, partition, offset: message.offset };
      const key = message.key?.toString("utf8");
      if (key !== undefined) await keys.add(key);
      const checked = checkEngineFactRecord(message, key);
      if (!checked.ok) mismatches.add({ position, detail: checked.detail });
      else
        await emit({
          position,
          value: { fact: checked.fact, source: checked.source },
          original: { key: message.key, value: message.value },
        });
    }).then(() => undefined);
  const topology = {
    roles: ["engine"] as const,
    engine: config,
    tripwires: {},
    ...(engineTopology === undefined ? {} : { engineTopology }),
    ...(where.engineState === undefined ? {} : { engineState: where.engineState }),
    ...(where.engineObserver === undefined ? {} : { engineObserver: where.engineObserver }),
  };
  return replaySource({ into: "engine", read: source }, topic, topology, catalog, where.sinkLog).pipe(
    Effect.map(({ sinks }) => ({
      results: () => sinks.results(),
      records,
      keys,
      mismatches,
    })),
  );
}

type CheckedRecord =
  | { readonly ok: true; readonly fact: MetricFact; readonly source: TopicPosition }
  | { readonly ok: false; readonly detail: string };

/** One engine-facts record as the audit accepts it: readable, valid by the contract, under its own key. */
function checkEngineFactRecord(message: KafkaMessage, key: string | undefined): CheckedRecord {
  if (message.value === null)
    return { ok: false, detail: "engine-facts record without a value (a tombstone on a topic that never deletes)" };
  const reading = readEngineFact(message.value);
  if (!reading.ok) return { ok: false, detail: `engine-facts record does not read: ${reading.detail}` };
  // The layout reader does not validate; the contract parser does, on the fact's normalised JSON form.
  const written = JSON.stringify(reading.fact);
  const parsed = parseNormalizedFact(JSON.parse(written) as unknown);
  if (!parsed.ok)
    return {
      ok: false,
      detail:
        `fact ${reading.fact.fact_id} does not validate: ${parsed.rejection.reason} ${parsed.rejection.field} ${parsed.rejection.detail}`.trimEnd(),
    };
  if (isAgentEvent(parsed.fact))
    return { ok: false, detail: `fact ${parsed.fact.fact_id} is a ${parsed.fact.type}, not a metric fact` };
  const normalised = JSON.stringify(parsed.fact);
  if (normalised !== written)
    return {
      ok: false,
      detail: `fact ${parsed.fact.fact_id} is not in normalised form (the parser reads it as another fact)`,
    };
  const expectedKey = engineFactKey(parsed.fact, normalised);
  if (key !== expectedKey)
    return {
      ok: false,
      detail: `fact ${parsed.fact.fact_id} is under key ${JSON.stringify(key ?? null)}, its content gives ${JSON.stringify(expectedKey)}`,
    };
  return { ok: true, fact: parsed.fact, source: reading.source };
}
