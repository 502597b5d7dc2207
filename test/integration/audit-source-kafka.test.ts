import type { Admin, KafkaMessage, Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTopicToEnd } from "../../src/kafka/read-topic.ts";
import { closeAll, connectedAdmin, connectedProducer, createTestTopic, testKafka } from "../support/kafka.ts";

/*
 * The Kafka behaviour the audit source of issue #13 relies on (docs/engine-state.md, "The audit
 * source"): a delete-policy topic (the facts topic, 7 days) loses its early records, so a rebuild
 * from it stops being a rebuild of the whole history; a compact-only topic keyed by fact version
 * (the engine-facts topic) keeps one record per distinct key whatever compaction does, and the
 * broker refuses to delete its early records. The facts topic's lost segments are simulated with
 * deleteTopicRecords, which moves the log start offset as retention does.
 */

let admin: Admin;
let producer: Producer;

beforeAll(async () => {
  admin = await connectedAdmin();
  producer = await connectedProducer();
});
afterAll(closeAll);

async function readAll(topic: string): Promise<KafkaMessage[]> {
  const messages: KafkaMessage[] = [];
  await readTopicToEnd(testKafka(), topic, (message) => {
    messages.push(message);
    return Promise.resolve();
  });
  return messages;
}

/** Deletes a partition's records before `offset` (kafkajs finds the leader only in metadata it has fetched). */
async function deleteRecordsBefore(topic: string, offset: string): Promise<void> {
  await admin.fetchTopicMetadata({ topics: [topic] });
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset }] });
}

interface DeleteRecordsFailure {
  readonly cause?: DeleteRecordsFailure;
  readonly partitions?: readonly { readonly error?: { readonly type?: string } }[];
}

/** The broker's error code for each partition of a refused deleteTopicRecords (kafkajs wraps it in its retrier's error). */
function partitionErrorTypes(error: unknown): string[] {
  const failure = error as DeleteRecordsFailure | undefined;
  const partitions = failure?.partitions ?? failure?.cause?.partitions ?? [];
  return partitions.map((partition) => partition.error?.type ?? "none");
}

const keyOf = (message: KafkaMessage): string => message.key?.toString("utf8") ?? "";

/** Ten distinct fact versions, each sent twice (a redelivery), as ingest would after a retried batch. */
function versions(round: number): { key: string; value: string }[] {
  return Array.from({ length: 10 }, (_, index) => ({
    key: `fact-${index}\u0000digest-${index}`,
    value: JSON.stringify({ fact: { fact_id: `fact-${index}` }, round }),
  }));
}

describe("audit source: what Kafka keeps", () => {
  it("a delete-policy topic loses its early records (what a 7-day facts topic does after a week)", async () => {
    const topic = await createTestTopic(admin, "audit-source.facts", {
      configEntries: [{ name: "cleanup.policy", value: "delete" }],
    });
    await producer.send({ topic, messages: versions(0) });
    await deleteRecordsBefore(topic, "4");

    const offsets = await admin.fetchTopicOffsets(topic);
    expect(offsets[0]?.low).toBe("4");
    const kept = await readAll(topic);
    expect(kept.map(keyOf)).toEqual(
      versions(0)
        .slice(4)
        .map((version) => version.key),
    );
  });

  it("the broker refuses to delete records of a compact-only topic (the engine-facts topic keeps its history)", async () => {
    const topic = await createTestTopic(admin, "audit-source.engine-facts", {
      configEntries: [{ name: "cleanup.policy", value: "compact" }],
    });
    await producer.send({ topic, messages: versions(0) });
    const refused = await deleteRecordsBefore(topic, "4").then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(partitionErrorTypes(refused)).toEqual(["POLICY_VIOLATION"]);
    const offsets = await admin.fetchTopicOffsets(topic);
    expect(offsets[0]?.low).toBe("0");
    expect((await readAll(topic)).map(keyOf)).toEqual(versions(0).map((version) => version.key));
  });

  it("compaction drops redeliveries but keeps every distinct fact version", async () => {
    // Small segments and an eager cleaner, so that compaction runs within the test.
    const topic = await createTestTopic(admin, "audit-source.compacted", {
      configEntries: [
        { name: "cleanup.policy", value: "compact" },
        { name: "segment.ms", value: "500" },
        { name: "min.cleanable.dirty.ratio", value: "0.001" },
        { name: "min.compaction.lag.ms", value: "0" },
        { name: "delete.retention.ms", value: "0" },
      ],
    });
    await producer.send({ topic, messages: versions(0) });
    await producer.send({ topic, messages: versions(1) });
    const distinct = versions(1).map((version) => version.key);
    const deadline = Date.now() + 100_000;
    let kept: KafkaMessage[] = [];
    // The active segment is never cleaned: a later record rolls it (segment.ms) so the cleaner can take the rest.
    for (let roll = 0; Date.now() < deadline; roll += 1) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await producer.send({ topic, messages: [{ key: `roll-${roll}`, value: "{}" }] });
      kept = (await readAll(topic)).filter((message) => !keyOf(message).startsWith("roll-"));
      if (kept.length === distinct.length) break;
    }
    // Compacted: one record per distinct key, the latest one, none lost.
    expect(kept.map(keyOf).sort()).toEqual([...distinct].sort());
    expect(kept.every((message) => JSON.parse(message.value?.toString("utf8") ?? "{}").round === 1)).toBe(true);
  }, 120_000);
});
