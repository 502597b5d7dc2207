import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { keyHashPartitioner, murmur2, partitionOf } from "../../../src/kafka/key-partitioner.ts";
import { Partitioners } from "kafkajs";
import { compositeKey, splitKey } from "../../../src/partitioned/stage-records.ts";

// kafkajs' own murmur2 (the default partitioner's hash, a port of the Java client's Utils.murmur2).
const kafkajsMurmur2 = createRequire(import.meta.url)("kafkajs/src/producer/partitioners/default/murmur2") as (
  key: Buffer,
) => number;

describe("partitionOf: the partition a Kafka producer picks for a key", () => {
  it("hashes as kafkajs' default partitioner does, for any key", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (key) => {
        expect(murmur2(Buffer.from(key, "utf8"))).toBe(kafkajsMurmur2(Buffer.from(key, "utf8")));
      }),
      { numRuns: 2000 },
    );
  });

  it("the Java client's published values: murmur2 of known keys (Kafka's UtilsTest)", () => {
    // org.apache.kafka.common.utils.UtilsTest#testMurmur2: "21" → -973932308, "foobar" → -790332482, "a-little-bit-long-string" → -985981536.
    expect(murmur2(Buffer.from("21"))).toBe(-973932308);
    expect(murmur2(Buffer.from("foobar"))).toBe(-790332482);
    expect(murmur2(Buffer.from("a-little-bit-long-string"))).toBe(-985981536);
  });

  it("places every key in range, and everything on partition 0 of one", () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 64 }), (key, partitions) => {
        const partition = partitionOf(key, partitions);
        expect(partition).toBeGreaterThanOrEqual(0);
        expect(partition).toBeLessThan(partitions);
        expect(partitionOf(key, 1)).toBe(0);
      }),
    );
  });
});

describe("keyHashPartitioner: the producers' partitioner", () => {
  const metadata = (count: number, leaderless: readonly number[] = []) =>
    Array.from({ length: count }, (_, partitionId) => ({
      partitionId,
      leader: leaderless.includes(partitionId) ? -1 : 1,
    }));

  it("picks kafkajs' DefaultPartitioner's partition for every keyed or placed message", () => {
    const theirs = Partitioners.DefaultPartitioner();
    const ours = keyHashPartitioner();
    const key = fc.oneof(
      fc.string({ unit: "binary", maxLength: 60 }),
      fc.uint8Array({ maxLength: 60 }).map((bytes) => Buffer.from(bytes)),
    );
    fc.assert(
      fc.property(
        key,
        fc.integer({ min: 1, max: 64 }),
        fc.option(fc.integer({ min: 0, max: 63 })),
        (k, count, placed) => {
          const args = { topic: "t", partitionMetadata: metadata(count), message: { key: k, partition: placed } };
          expect(ours(args)).toBe(theirs({ ...args, message: { key: k, partition: placed ?? undefined } } as never));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("spreads unkeyed messages round robin over the partitions that have a leader", () => {
    const ours = keyHashPartitioner();
    const partitionMetadata = metadata(4, [1]);
    const picked = Array.from({ length: 6 }, () => ours({ topic: "t", partitionMetadata, message: { key: null } }));
    expect(new Set(picked)).toEqual(new Set([0, 2, 3]));
    for (let index = 1; index < picked.length; index++)
      expect([0, 2, 3].indexOf(picked[index] as number)).toBe(([0, 2, 3].indexOf(picked[index - 1] as number) + 1) % 3);
  });
});

describe("composite keys", () => {
  it("split back into the same parts, whatever characters the parts hold", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary" }), { maxLength: 5 }), (parts) => {
        expect(splitKey(compositeKey(...parts))).toEqual(parts);
      }),
    );
  });

  it("differ when the parts differ, even where plain joining would collide", () => {
    expect(compositeKey("call\u0000a\u0000b", "x")).not.toBe(compositeKey("call\u0000a", "b\u0000x"));
    expect(compositeKey("ab", "c")).not.toBe(compositeKey("a", "bc"));
  });
});
