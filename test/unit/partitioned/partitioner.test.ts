import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { murmur2, partitionOf } from "../../../src/partitioned/partitioner.ts";
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
