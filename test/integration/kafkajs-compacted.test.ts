import { afterAll, describe, expect, it } from "vitest";
import { readTopicToEnd } from "../../src/kafka/read-topic.ts";
import { createTopicsWithLeaders } from "../../src/kafka/topic-admin.ts";
import {
  closeAll,
  connectedAdmin,
  connectedConsumer,
  connectedProducer,
  testKafka,
  uniqueName,
} from "../support/kafka.ts";

afterAll(closeAll);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * kafkajs 2.2.4 reads across offsets that compaction removed one offset per fetch, and for ever
 * across a record batch that compaction emptied (tulios/kafkajs#562, #1072); the engine's
 * contributions log after a few restarts stalled a member's restore for two minutes, then failed it
 * (src/kafka/kafkajs-compacted-batches.ts). Here the real broker compacts a topic holding a record
 * batch larger than a fetch's per-partition limit whose tail was superseded (each fetch answers
 * with that batch alone), and an idempotent producer's last batch superseded whole (the cleaner
 * keeps it, empty; the unit test shows kafkajs alone fetching such a batch again for ever). Without
 * the fix this test reads everything in 304 fetches, one per compacted offset.
 */
describe("reading a compacted topic", () => {
  it("moves past compacted offsets and emptied record batches in a few fetches", async () => {
    const kafka = testKafka();
    const topic = uniqueName("compacted");
    const admin = await connectedAdmin(kafka);
    await createTopicsWithLeaders(admin, [
      {
        topic,
        numPartitions: 1,
        replicationFactor: 1,
        configEntries: [
          { name: "cleanup.policy", value: "compact" },
          { name: "segment.ms", value: "500" },
          { name: "min.cleanable.dirty.ratio", value: "0.01" },
          { name: "max.message.bytes", value: String(8 * 1024 * 1024) },
        ],
      },
    ]);
    const large = Buffer.alloc(4096, 1);
    const keys = (prefix: string, from: number, to: number): string[] =>
      Array.from({ length: to - from }, (_, index) => `${prefix}${String(from + index)}`);
    const first = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
    // 600 records of 4 KiB in one record batch (2.4 MB, past the 1 MiB a fetch asks per partition).
    await first.send({ topic, messages: keys("k", 0, 600).map((key) => ({ key, value: large })) });
    // Its tail superseded: offsets 300..599 are compacted away inside that batch.
    await first.send({ topic, messages: keys("k", 300, 600).map((key) => ({ key, value: Buffer.from("newer") })) });
    // Another producer's last batch, superseded whole by a third producer: kept, empty.
    const second = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
    await second.send({ topic, messages: keys("e", 0, 5).map((key) => ({ key, value: Buffer.from("old") })) });
    const third = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
    await third.send({ topic, messages: keys("e", 0, 5).map((key) => ({ key, value: Buffer.from("new") })) });
    // Past segment.ms, a record rolls the segment, so the cleaner may compact the one before it.
    await sleep(1_000);
    await third.send({ topic, messages: [{ key: "last", value: Buffer.from("z") }] });
    const surviving = 300 + 300 + 5 + 1;

    // The broker's cleaner runs every second (ops/ sets log.cleaner.backoff.ms=1000).
    const deadline = Date.now() + 90_000;
    let read = Number.POSITIVE_INFINITY;
    while (read !== surviving && Date.now() < deadline) {
      await sleep(1_000);
      read = await readTopicToEnd(kafka, topic, () => undefined, { idleTimeoutMs: 20_000 });
    }
    expect(read, "records left after compaction").toBe(surviving);

    // A plain consumer from offset 0: every surviving record, in a few fetches.
    const consumer = await connectedConsumer(kafka);
    let fetches = 0;
    consumer.on(consumer.events.FETCH, () => {
      fetches += 1;
    });
    const seen: string[] = [];
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) seen.push(`${message.offset}:${message.key?.toString() ?? ""}`);
      },
    });
    const started = Date.now();
    while (seen.length < surviving && Date.now() - started < 30_000) await sleep(100);
    await consumer.stop();
    expect(seen.length).toBe(surviving);
    expect(seen.slice(0, 2)).toEqual(["0:k0", "1:k1"]);
    expect(seen.at(-1)).toMatch(/:last$/);
    // kafkajs alone: one fetch per compacted offset (300 here), then none past the emptied batch.
    expect(fetches).toBeLessThan(40);
  }, 180_000);
});
