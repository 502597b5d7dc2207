import { createHash } from "node:crypto";
import type { Kafka } from "kafkajs";
import { canonicalJson } from "../../contract/canonical-json.ts";
import type { MetricResult } from "../../contract/result-record.ts";
import { byUtf8 } from "../../contract/code-point-order.ts";
import { readTopicToEnd } from "../../kafka/read-topic.ts";
import type { TopicSerde } from "../../kafka/serde/topic-serde.ts";

/** The latest value of every live key of the compacted results topic (tombstoned keys are gone). */
export async function readLatestResults(
  kafka: Kafka,
  serde: TopicSerde,
  topic: string,
): Promise<Map<string, MetricResult>> {
  const latest = new Map<string, Buffer | null>();
  await readTopicToEnd(kafka, topic, (message) => {
    const key = message.key?.toString("utf8");
    if (key !== undefined) latest.set(key, message.value);
  });
  const results = new Map<string, MetricResult>();
  for (const [key, value] of latest) if (value !== null) results.set(key, await serde.decodeResult(value));
  return results;
}

export interface ResultComparison {
  readonly expectedDigest: string;
  readonly actualDigest: string;
  /** Keys whose canonical values differ, or that only one side has; sorted. */
  readonly differingKeys: readonly string[];
}

/**
 * Digest of a result set: SHA-256 over the canonical (RFC 8785) form of every key and value,
 * sorted by key. Equal digests mean byte-identical results.
 */
export function resultsDigest(results: ReadonlyMap<string, MetricResult>): string {
  const hash = createHash("sha256");
  for (const key of [...results.keys()].sort(byUtf8)) hash.update(`${key}\n${canonicalJson(results.get(key))}\n`);
  return `sha256:${hash.digest("hex")}`;
}

export function compareResults(
  expected: ReadonlyMap<string, MetricResult>,
  actual: ReadonlyMap<string, MetricResult>,
): ResultComparison {
  const keys = new Set([...expected.keys(), ...actual.keys()]);
  const differingKeys: string[] = [];
  for (const key of keys) {
    const left = expected.get(key);
    const right = actual.get(key);
    if (left === undefined || right === undefined || canonicalJson(left) !== canonicalJson(right))
      differingKeys.push(key);
  }
  return {
    expectedDigest: resultsDigest(expected),
    actualDigest: resultsDigest(actual),
    differingKeys: differingKeys.sort(byUtf8),
  };
}
