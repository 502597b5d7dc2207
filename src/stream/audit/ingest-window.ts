import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import type { Kafka } from "kafkajs";
import { readTopicToEnd } from "../../kafka/read-topic.ts";
import { decodeFact } from "../../kafka/serde/decode-fact.ts";
import { engineFactKey } from "../../kafka/serde/engine-facts-record.ts";
import { routeRecord } from "../processors/ingest-router.ts";
import { MismatchList } from "./mismatch-list.ts";
import type { EngineFactKeyLookup } from "./engine-fact-keys.ts";

/** What is left of one facts partition: its first retained offset and its end when the check began. */
export interface RetainedPartition {
  readonly partition: number;
  readonly firstOffset: string;
  readonly endOffset: string;
}

export interface IngestCheck {
  /** Every partition of the facts topic, by partition number. */
  readonly window: readonly RetainedPartition[];
  readonly records: number;
  /** Records ingest accepts as metric facts (each must have its engine-facts record). */
  readonly metricFacts: number;
  /** Accepted facts without their engine-facts record (the first ones, and how many). */
  readonly mismatches: MismatchList;
}

/**
 * The windowed ingest check: the facts topic keeps only its retention's worth of records, so the
 * engine is rebuilt from engine-facts, and ingest's own work is checked over what the facts topic
 * still holds. Each retained record is decoded and routed exactly as ingest does (decodeFact, then
 * the one router); every record ingest accepts as a metric fact must have its engine-facts key
 * (fact version) among `engineFactKeys`, or it is a mismatch with its facts-topic coordinates.
 */
export async function checkIngestWindow(
  kafka: Kafka,
  registry: SchemaRegistry,
  topic: string,
  engineFactKeys: EngineFactKeyLookup,
): Promise<IngestCheck> {
  const admin = kafka.admin();
  await admin.connect();
  let window: RetainedPartition[];
  try {
    window = (await admin.fetchTopicOffsets(topic))
      .map(({ partition, low, high }) => ({ partition, firstOffset: low, endOffset: high }))
      .sort((a, b) => a.partition - b.partition);
  } finally {
    await admin.disconnect();
  }
  let records = 0;
  let metricFacts = 0;
  const mismatches = new MismatchList();
  await readTopicToEnd(kafka, topic, async (message, partition) => {
    records += 1;
    const route = routeRecord(await decodeFact(registry, message.value));
    if (route.to !== "engine") return;
    metricFacts += 1;
    const key = engineFactKey(route.fact, JSON.stringify(route.fact));
    if (!(await engineFactKeys.has(key)))
      mismatches.add({
        position: { topic, partition, offset: message.offset },
        detail: `accepted fact ${route.fact.fact_id} has no engine-facts record (key ${JSON.stringify(key)})`,
      });
  });
  return { window, records, metricFacts, mismatches };
}

/** The window as one line's worth: `0@120, 1@0, 2@57` (partition@first retained offset). */
export function formatWindow(window: readonly RetainedPartition[]): string {
  return window.map(({ partition, firstOffset }) => `${partition}@${firstOffset}`).join(", ");
}
