import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import "../../../src/kafka/kafkajs.ts";
import { kafkajsLoaded, kafkajsModule, kafkajsOriginal } from "../../../src/kafka/kafkajs-module-cache.ts";
import {
  RECORD_DECODER_MODULE,
  RECORD_ENCODER_MODULE,
  recordsPatched,
  type RecordBatchContext,
  type RecordDecoderInput,
  type RecordToEncode,
} from "../../../src/kafka/kafkajs-records.ts";

const require = createRequire(import.meta.url);

interface EncoderLike {
  readonly buffer: Buffer;
}
type Encode = (record: RecordToEncode) => EncoderLike;
type Decode = (decoder: RecordDecoderInput, context?: RecordBatchContext) => Record<string, unknown>;
type DecoderClass = new (buffer: Buffer) => RecordDecoderInput;

const originalEncode = kafkajsOriginal<Encode>(RECORD_ENCODER_MODULE);
const originalDecode = kafkajsOriginal<Decode>(RECORD_DECODER_MODULE);
const leanEncode = require(kafkajsModule(RECORD_ENCODER_MODULE) ?? "") as Encode;
const leanDecode = require(kafkajsModule(RECORD_DECODER_MODULE) ?? "") as Decode;
const Decoder = kafkajsLoaded<DecoderClass>("src/protocol/decoder.js");

/** Keys and values as producers give them: none, text (any code points, lone surrogates too) or bytes. */
const field = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
);
const header = fc.dictionary(
  fc.string({ maxLength: 8 }),
  fc.oneof(fc.string({ maxLength: 20 }), fc.array(fc.string({ maxLength: 5 }), { minLength: 1, maxLength: 3 })),
  { maxKeys: 3 },
);
const record: fc.Arbitrary<RecordToEncode> = fc.record(
  {
    offsetDelta: fc.oneof(fc.integer({ min: 0, max: 5_000 }), fc.integer()),
    timestampDelta: fc.oneof(
      fc.integer({ min: -10_000, max: 10_000 }),
      fc.maxSafeInteger(),
      fc.integer({ min: -(2 ** 31), max: 2 ** 31 }).map((value) => value * 2 ** 21),
    ),
    key: field,
    value: field,
    headers: header,
  },
  { requiredKeys: ["key", "value"] },
);
const int64Text = fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String);
const context: fc.Arbitrary<RecordBatchContext> = fc.record({
  firstOffset: fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }).map(String), int64Text),
  firstTimestamp: fc.oneof(fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }).map(String), int64Text),
  magicByte: fc.constant(2),
  isControlBatch: fc.boolean(),
  timestampType: fc.constantFrom(0, 1),
  maxTimestamp: fc.oneof(fc.constant(undefined), int64Text),
});

describe("kafkajs' record encoding and decoding without per-field garbage", () => {
  it("are the functions kafkajs uses once src/kafka/kafkajs.ts is loaded", () => {
    expect(recordsPatched).toBe(true);
    expect(leanEncode).not.toBe(originalEncode);
    expect(leanDecode).not.toBe(originalDecode);
  });

  it("encodes every record to kafkajs' own bytes", () => {
    fc.assert(
      fc.property(record, (input) => {
        expect(leanEncode(input).buffer.equals(originalEncode(input).buffer)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it("decodes every record as kafkajs does, and leaves the decoder where kafkajs leaves it", () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 5 }), context, (records, batch) => {
        const bytes = Buffer.concat(records.map((input) => originalEncode(input).buffer));
        const ours = new Decoder(bytes);
        const theirs = new Decoder(bytes);
        for (let index = 0; index < records.length; index++) {
          // Each record is prefixed by its length, which kafkajs' batch decoder reads first.
          ours.readVarInt();
          theirs.readVarInt();
          const decoded = leanDecode(ours, batch);
          const expected = originalDecode(theirs, batch);
          expect(decoded).toEqual(expected);
          expect(Object.keys(decoded)).toEqual(Object.keys(expected));
          expect(ours.offset).toBe(theirs.offset);
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it("gives kafkajs' result for a timestamp delta past 2^49 (kafkajs' Long arithmetic)", () => {
    const input = { offsetDelta: 3, timestampDelta: 2 ** 51 + 7, key: "k", value: "v" };
    const bytes = originalEncode(input).buffer;
    const batch = { firstOffset: "9007199254740990", firstTimestamp: "1700000000000", timestampType: 0 };
    const ours = new Decoder(bytes);
    ours.readVarInt();
    const theirs = new Decoder(bytes);
    theirs.readVarInt();
    const decoded = leanDecode(ours, batch);
    expect(decoded).toEqual(originalDecode(theirs, batch));
    expect(decoded["offset"]).toBe("9007199254740993");
    expect(decoded["timestamp"]).toBe(String(1_700_000_000_000n + 2n ** 51n + 7n));
  });

  it("throws where kafkajs throws: a key that is neither text nor bytes", () => {
    expect(() => originalEncode({ key: 42, value: "v" })).toThrow();
    expect(() => leanEncode({ key: 42, value: "v" })).toThrow();
  });
});
