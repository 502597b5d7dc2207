import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import type { Kafka } from "kafkajs";
import type { CatalogSummary } from "../../catalog/metric-definitions.ts";
import type { EngineConfig } from "../../metrics/engine-config.ts";
import { MetricEngine } from "../../metrics/metric-engine.ts";
import type { MetricResult } from "../../metrics/result-record.ts";
import { readTopicToEnd } from "../../kafka/read-topic.ts";
import { decodeFact } from "../../kafka/serde/decode-fact.ts";
import { routeRecord } from "../processors/ingest-router.ts";

/**
 * Audit replay: every record of the facts topic from offset 0, decoded and validated exactly as
 * ingest does, into a fresh engine. Nothing of the running processors' state is used, so the
 * result is an independent rebuild to compare with the compacted results topic.
 */
export async function rebuildFromFactsTopic(kafka: Kafka, registry: SchemaRegistry, topic: string, config: EngineConfig, catalog: CatalogSummary, onRecord?: (count: number) => void): Promise<Map<string, MetricResult>> {
  const engine = new MetricEngine(config, catalog);
  let count = 0;
  await readTopicToEnd(kafka, topic, async (message) => {
    count += 1;
    onRecord?.(count);
    const route = routeRecord(await decodeFact(registry, message.value));
    if (route.to === "engine") engine.ingest(route.fact);
  });
  return new Map(engine.results().map((entry) => [entry.key, entry.result] as const));
}
