import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import "../../../src/kafka/kafkajs.ts";
import { GROUPING_MODULE, groupMessagesPerPartition, groupingPatched } from "../../../src/kafka/kafkajs-grouping.ts";
import { kafkajsModule, kafkajsOriginal } from "../../../src/kafka/kafkajs-module-cache.ts";

const require = createRequire(import.meta.url);

describe("kafkajs' grouping of a send's messages by partition, in one pass", () => {
  it("is the function kafkajs' producer uses once src/kafka/kafkajs.ts is loaded", () => {
    expect(groupingPatched).toBe(true);
    const path = kafkajsModule(GROUPING_MODULE);
    expect(path).toBeDefined();
    expect(require(path ?? "")).toBe(groupMessagesPerPartition);
  });

  it("groups exactly as kafkajs' own function: each partition's messages in their order", () => {
    const original = kafkajsOriginal<typeof groupMessagesPerPartition>(GROUPING_MODULE);
    fc.assert(
      fc.property(
        fc.array(fc.record({ key: fc.string(), value: fc.string() }), { maxLength: 200 }),
        fc.integer({ min: 0, max: 6 }),
        (messages, partitions) => {
          const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionId }));
          const partitioner = ({ message }: { message: { key: string } }): number =>
            partitions === 0 ? 0 : message.key.length % partitions;
          const input = { topic: "t", partitionMetadata, messages, partitioner };
          const ours = groupMessagesPerPartition(input);
          expect(ours).toEqual(original(input));
          expect(Object.keys(ours)).toEqual(Object.keys(original(input)));
        },
      ),
    );
  });

  it("takes linear time: 50,000 messages to one partition in well under a second (kafkajs' own: n²/2 copies)", () => {
    const messages = Array.from({ length: 50_000 }, (_, index) => ({ key: String(index), value: "v" }));
    const started = performance.now();
    const grouped = groupMessagesPerPartition({
      topic: "t",
      partitionMetadata: [{ partitionId: 0 }],
      messages,
      partitioner: () => 0,
    });
    expect(performance.now() - started).toBeLessThan(500);
    expect(grouped[0]).toHaveLength(50_000);
    expect(grouped[0]?.[49_999]).toBe(messages[49_999]);
  });
});
