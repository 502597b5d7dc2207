import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import "../../../src/kafka/kafkajs.ts";
import {
  BATCH_MODULE,
  compactedBatchesPatched,
  DECODE_MESSAGES_MODULE,
  recordBatchEnd,
  type FetchedBatch,
} from "../../../src/kafka/kafkajs-compacted-batches.ts";
import { kafkajsLoaded, kafkajsOriginal } from "../../../src/kafka/kafkajs-module-cache.ts";

const require = createRequire(import.meta.url);

interface Encoder {
  readonly buffer: Buffer;
  writeInt32(value: number): Encoder;
  writeBuffer(value: Buffer): Encoder;
}
type BatchClass = new (
  topic: string,
  fetchedOffset: string,
  partitionData: { partition: number; highWatermark: string; abortedTransactions: unknown[]; messages: unknown[] },
) => FetchedBatch & { readonly messages: readonly { offset: string }[] };
type DecodeMessages = (decoder: unknown) => Promise<{ offset: string }[]>;

const EncoderClass = kafkajsLoaded<new () => Encoder>("src/protocol/encoder.js");
const DecoderClass = kafkajsLoaded<new (buffer: Buffer) => unknown>("src/protocol/decoder.js");
const { RecordBatch } = kafkajsLoaded<{ RecordBatch: (batch: Record<string, unknown>) => Promise<{ buffer: Buffer }> }>(
  "src/protocol/recordBatch/v0/index.js",
);
const Record = kafkajsLoaded<(record: { offsetDelta: number; key: Buffer; value: Buffer }) => unknown>(
  "src/protocol/recordBatch/record/v0/index.js",
);
const Long = kafkajsLoaded<{ fromValue(value: number): unknown }>("src/utils/long.js");

/**
 * A partition's fetched bytes: record batches as the broker sends them, each at `firstOffset` with
 * records at the given offset deltas and a last offset delta that may lie past its last record
 * (what compaction leaves: the header kept, records removed).
 */
async function fetchedBytes(
  batches: readonly { firstOffset: number; deltas: readonly number[]; lastOffsetDelta: number }[],
): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const { firstOffset, deltas, lastOffsetDelta } of batches) {
    const records = deltas.map((offsetDelta) =>
      Record({ offsetDelta, key: Buffer.from(`k${String(firstOffset + offsetDelta)}`), value: Buffer.from("v") }),
    );
    parts.push((await RecordBatch({ firstOffset: Long.fromValue(firstOffset), lastOffsetDelta, records })).buffer);
  }
  const bytes = Buffer.concat(parts);
  return new EncoderClass().writeInt32(bytes.length).writeBuffer(bytes).buffer;
}

const decode = (decodeMessages: DecodeMessages, bytes: Buffer) => decodeMessages(new DecoderClass(bytes));
const batchOf = (Batch: BatchClass, fetchedOffset: number, messages: unknown[]) =>
  new Batch("topic", String(fetchedOffset), { partition: 0, highWatermark: "1000", abortedTransactions: [], messages });

describe("kafkajs fetches past what compaction removed", () => {
  const patched = kafkajsLoaded<DecodeMessages>(DECODE_MESSAGES_MODULE);
  const Batch = kafkajsLoaded<BatchClass>(BATCH_MODULE);
  const original = kafkajsOriginal<DecodeMessages>(DECODE_MESSAGES_MODULE);
  const OriginalBatch = kafkajsOriginal<BatchClass>(BATCH_MODULE);

  it("is what kafkajs uses once src/kafka/kafkajs.ts is loaded", () => {
    expect(compactedBatchesPatched).toBe(true);
    expect(require(require.resolve("kafkajs/src/protocol/requests/fetch/v4/decodeMessages.js"))).toBe(patched);
  });

  it("decodes the same records as kafkajs, and notes the last record batch's last offset", async () => {
    const bytes = await fetchedBytes([
      { firstOffset: 0, deltas: [0, 1, 2], lastOffsetDelta: 2 },
      { firstOffset: 3, deltas: [0, 4], lastOffsetDelta: 9 },
    ]);
    const ours = await decode(patched, bytes);
    const theirs = await decode(original, bytes);
    expect(ours).toEqual(theirs);
    expect(ours.map((record) => record.offset)).toEqual(["0", "1", "2", "3", "7"]);
    expect(recordBatchEnd(ours)).toBe(12n);
  });

  it("a batch whose records all lie before the fetched offset (its tail compacted): last offset is the record batch's, not the fetched one", async () => {
    // Records 100..104 kept of a batch that ran to 119; fetched at 110, where the consumer stands.
    const bytes = await fetchedBytes([{ firstOffset: 100, deltas: [0, 1, 2, 3, 4], lastOffsetDelta: 19 }]);
    const ours = batchOf(Batch, 110, await decode(patched, bytes));
    expect(ours.isEmpty()).toBe(true);
    expect(ours.isEmptyDueToFiltering()).toBe(true);
    expect(ours.lastOffset()).toBe("119");
    // kafkajs alone resolves the fetched offset: the next fetch asks for 111, and gets the same batch.
    expect(batchOf(OriginalBatch, 110, await decode(original, bytes)).lastOffset()).toBe("110");
  });

  it("a record batch compaction emptied: moved past, where kafkajs would fetch it again for ever", async () => {
    const bytes = await fetchedBytes([{ firstOffset: 200, deltas: [], lastOffsetDelta: 9 }]);
    const ours = batchOf(Batch, 200, await decode(patched, bytes));
    expect(ours.isEmptyDueToFiltering()).toBe(true);
    expect(ours.lastOffset()).toBe("209");
    const theirs = batchOf(OriginalBatch, 200, await decode(original, bytes));
    // Not "empty due to filtering": kafkajs' runner neither resolves nor moves, and fetches 200 again.
    expect(theirs.isEmptyDueToFiltering()).toBe(false);
  });

  it("a batch with records at or past the fetched offset is as kafkajs makes it", async () => {
    const bytes = await fetchedBytes([{ firstOffset: 100, deltas: [0, 5, 8], lastOffsetDelta: 19 }]);
    const ours = batchOf(Batch, 103, await decode(patched, bytes));
    const theirs = batchOf(OriginalBatch, 103, await decode(original, bytes));
    expect(ours.messages.map((message) => message.offset)).toEqual(["105", "108"]);
    expect(ours.lastOffset()).toBe("108");
    expect([ours.isEmpty(), ours.isEmptyDueToFiltering(), ours.lastOffset()]).toEqual([
      theirs.isEmpty(),
      theirs.isEmptyDueToFiltering(),
      theirs.lastOffset(),
    ]);
  });
});
