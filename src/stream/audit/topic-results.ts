import { createHash } from "node:crypto";
import type { Kafka } from "kafkajs";
import { canonicalJson } from "../../contract/canonical-json.ts";
import type { MetricResult } from "../../contract/result-record.ts";
import { byUtf8 } from "../../contract/code-point-order.ts";
import { readTopicToEnd } from "../../kafka/read-topic.ts";
import type { TopicSerde } from "../../kafka/serde/topic-serde.ts";
import type { SinkLog } from "../transports/embedded/sink-log.ts";
import { CountedList } from "./mismatch-list.ts";

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

/** Differing keys listed in full; past this many only their count grows. */
export const LISTED_DIFFERENCES = 1_000;

/** A key whose canonical values differ, or that only one side has. */
export interface DifferingKey {
  readonly key: string;
  readonly expected: boolean;
  readonly actual: boolean;
}

export interface ResultComparison {
  readonly expectedDigest: string;
  readonly actualDigest: string;
  readonly expectedCount: number;
  readonly actualCount: number;
  /** The first LISTED_DIFFERENCES differing keys, in key order. */
  readonly differingKeys: readonly DifferingKey[];
  readonly differingCount: number;
}

/**
 * Digest of a result set: SHA-256 over the canonical (RFC 8785) form of every key and value,
 * sorted by key. Equal digests mean byte-identical results.
 */
export function resultsDigest(results: ReadonlyMap<string, MetricResult>): string {
  const hash = createHash("sha256");
  for (const [key, value] of canonicalEntries(results)) hash.update(digestLine(key, value));
  return `sha256:${hash.digest("hex")}`;
}

/** What one result adds to a digest. */
const digestLine = (key: string, canonicalValue: string): string => `${key}\n${canonicalValue}\n`;

/** compareSortedResults over two result maps. */
export function compareResults(
  expected: ReadonlyMap<string, MetricResult>,
  actual: ReadonlyMap<string, MetricResult>,
): ResultComparison {
  return compareSortedResults(canonicalEntries(expected), canonicalEntries(actual));
}

function* canonicalEntries(results: ReadonlyMap<string, MetricResult>): Generator<readonly [string, string]> {
  for (const key of [...results.keys()].sort(byUtf8)) yield [key, canonicalJson(results.get(key))] as const;
}

/**
 * Compares two result sets given as (key, canonical JSON) in UTF-8 key order, one pass over each,
 * so that neither needs to be held: their digests and the keys that differ.
 */
export function compareSortedResults(
  expected: Iterable<readonly [string, string]>,
  actual: Iterable<readonly [string, string]>,
): ResultComparison {
  const digests = { expected: createHash("sha256"), actual: createHash("sha256") };
  const counts = { expected: 0, actual: 0 };
  const differing = new CountedList<DifferingKey>(LISTED_DIFFERENCES);
  const differs = (key: string, onExpected: boolean, onActual: boolean): void =>
    differing.add({ key, expected: onExpected, actual: onActual });
  const left = expected[Symbol.iterator]();
  const right = actual[Symbol.iterator]();
  let a = left.next();
  let b = right.next();
  while (a.done !== true || b.done !== true) {
    const order = a.done === true ? 1 : b.done === true ? -1 : byUtf8(a.value[0], b.value[0]);
    if (order <= 0 && a.done !== true) {
      digests.expected.update(digestLine(a.value[0], a.value[1]));
      counts.expected += 1;
    }
    if (order >= 0 && b.done !== true) {
      digests.actual.update(digestLine(b.value[0], b.value[1]));
      counts.actual += 1;
    }
    if (order < 0 && a.done !== true) differs(a.value[0], true, false);
    else if (order > 0 && b.done !== true) differs(b.value[0], false, true);
    else if (a.done !== true && b.done !== true && a.value[1] !== b.value[1]) differs(a.value[0], true, true);
    if (order <= 0) a = left.next();
    if (order >= 0) b = right.next();
  }
  return {
    expectedDigest: `sha256:${digests.expected.digest("hex")}`,
    actualDigest: `sha256:${digests.actual.digest("hex")}`,
    expectedCount: counts.expected,
    actualCount: counts.actual,
    differingKeys: differing.listed,
    differingCount: differing.count,
  };
}

/**
 * The latest value of every live key of the compacted results topic, as its canonical JSON, into
 * the sink log's "topicResults" table (a tombstone deletes the key): what compareSortedResults
 * reads for the topic's side without holding it.
 */
export async function readLatestResultsInto(
  kafka: Kafka,
  serde: TopicSerde,
  topic: string,
  sinkLog: SinkLog,
): Promise<void> {
  await readTopicToEnd(kafka, topic, async (message) => {
    const key = message.key?.toString("utf8");
    if (key === undefined) return;
    const value = message.value === null ? null : canonicalJson(await serde.decodeResult(message.value));
    sinkLog.set("topicResults", key, value);
    await sinkLog.spill();
  });
  await sinkLog.settle();
}
