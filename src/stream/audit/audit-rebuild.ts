import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { Effect } from "effect";
import type { Kafka } from "kafkajs";
import type { CatalogSummary } from "../../catalog/metric-definitions.ts";
import type { TransportError } from "../../errors.ts";
import type { EngineConfig } from "../../metrics/engine-config.ts";
import type { MetricResult } from "../../metrics/result-record.ts";
import { readTopicToEnd } from "../../kafka/read-topic.ts";
import { decodeFact } from "../../kafka/serde/decode-fact.ts";
import { replaySource } from "../transports/embedded/embedded-transport.ts";

/**
 * Audit replay: the topology's ingest and engine, on the embedded transport, over every record of
 * the facts topic from offset 0, decoded exactly as the Kafka ingest decodes. Nothing of the
 * running processors' state is used, so the result is an independent rebuild to compare with the
 * compacted results topic.
 */
export function rebuildFromFactsTopic(kafka: Kafka, registry: SchemaRegistry, topic: string, config: EngineConfig, catalog: CatalogSummary, onRecord?: (count: number) => void): Effect.Effect<Map<string, MetricResult>, TransportError> {
  let count = 0;
  const source = (emit: Parameters<Parameters<typeof replaySource>[0]>[0]): Promise<void> =>
    readTopicToEnd(kafka, topic, async (message, partition) => {
      count += 1;
      onRecord?.(count);
      await emit({ position: { topic, partition, offset: message.offset }, value: await decodeFact(registry, message.value), original: { key: message.key, value: message.value } });
    }).then(() => undefined);
  return replaySource(source, topic, { roles: ["ingest", "engine"], engine: config, tripwires: {} }, catalog).pipe(
    Effect.map(({ sinks }) => new Map(sinks.results().map(({ key, json }) => [key, JSON.parse(json) as MetricResult] as const))),
  );
}
