import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import "../../../src/kafka/kafkajs.ts";
import { CRC32C_MODULE, crc32c, crc32cPatched } from "../../../src/kafka/kafkajs-crc32c.ts";
import { kafkajsModule, kafkajsOriginal } from "../../../src/kafka/kafkajs-module-cache.ts";

const require = createRequire(import.meta.url);

describe("CRC-32C eight bytes at a time, in place of kafkajs' byte-at-a-time function", () => {
  it("is the function kafkajs' record batches use once src/kafka/kafkajs.ts is loaded", () => {
    expect(crc32cPatched).toBe(true);
    expect(require(kafkajsModule(CRC32C_MODULE) ?? "")).toBe(crc32c);
    expect(require(require.resolve("kafkajs/src/protocol/recordBatch/crc32C/index.js"))).toBe(crc32c);
  });

  it("gives the standard check value (RFC 3720 appendix B.4: CRC-32C of '123456789' is 0xE3069283)", () => {
    expect(crc32c(Buffer.from("123456789", "ascii"))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(32, 0))).toBe(0x8a9136aa);
    expect(crc32c(Buffer.alloc(0))).toBe(0);
  });

  it("equals kafkajs' own function on any bytes, at any length and offset (the tail past a multiple of 8 included)", () => {
    const original = kafkajsOriginal<typeof crc32c>(CRC32C_MODULE);
    expect(original(Buffer.from("123456789", "ascii"))).toBe(0xe3069283);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat({ max: 7 }), (bytes, offset) => {
        const view = Buffer.from(bytes).subarray(Math.min(offset, bytes.length));
        expect(crc32c(view)).toBe(original(view));
      }),
      { numRuns: 500 },
    );
  });
});
