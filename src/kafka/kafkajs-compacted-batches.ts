import { kafkajsLoaded, kafkajsModule, replaceKafkajsModule } from "./kafkajs-module-cache.ts";

/*
 * Reading a compacted topic, kafkajs 2.2.4 advances one offset per fetch across offsets that
 * compaction removed (tulios/kafkajs#562, #1072): a batch whose tail was compacted away decodes to
 * no record at or past the fetched offset n, so kafkajs asks for n + 1 and gets the same batch
 * again, a million fetches across a million compacted offsets. Like Kafka's Java consumer, this
 * moves past the batch: kafkajs' own record-batch decoding (fetch v4 to v11) also notes the last
 * offset of the last whole batch, and a batch with no record at or past the fetched offset gives
 * that as its last offset, so the next fetch starts after it. Other batches are unchanged.
 */

/** The last offset of the last whole record batch in a fetched partition's messages, by the messages' array. */
const recordBatchEnds = new WeakMap<readonly unknown[], bigint>();

/** The last offset (first offset + last offset delta) of the last whole record batch decoded into `messages`, if noted. */
export function recordBatchEnd(messages: readonly unknown[]): bigint | undefined {
  return recordBatchEnds.get(messages);
}

interface KafkajsDecoder {
  readInt32(): number;
  canReadBytes(length: number): boolean;
  readBytes(length: number): Buffer;
}
interface DecodedRecordBatch {
  readonly firstOffset: string;
  readonly lastOffsetDelta: number;
  readonly records: readonly unknown[];
}
type DecoderClass = new (buffer: Buffer) => KafkajsDecoder;

// As in kafkajs' decodeMessages: the magic byte is at the same offset in every message format.
const MAGIC_OFFSET = 16;
const RECORD_BATCH_OVERHEAD = 49;

/** kafkajs' decodeMessages (fetch v4 to v11), noting the last whole record batch's last offset. */
function decodeMessagesNotingBatchEnds(
  Decoder: DecoderClass,
  decodeRecordBatch: (decoder: KafkajsDecoder) => Promise<DecodedRecordBatch>,
  decodeMessageSet: (decoder: KafkajsDecoder, size: number) => Promise<unknown[]>,
  recordBatchMagic: number,
) {
  return async (decoder: KafkajsDecoder): Promise<unknown[]> => {
    const messagesSize = decoder.readInt32();
    if (messagesSize <= 0 || !decoder.canReadBytes(messagesSize)) return [];
    const messagesBuffer = decoder.readBytes(messagesSize);
    const messagesDecoder = new Decoder(messagesBuffer);
    const magicByte = messagesBuffer.subarray(MAGIC_OFFSET).readInt8(0);
    if (magicByte !== recordBatchMagic) return decodeMessageSet(messagesDecoder, messagesSize);
    const records: unknown[] = [];
    let end: bigint | undefined;
    while (messagesDecoder.canReadBytes(RECORD_BATCH_OVERHEAD)) {
      try {
        const recordBatch = await decodeRecordBatch(messagesDecoder);
        for (const record of recordBatch.records) records.push(record);
        end = BigInt(recordBatch.firstOffset) + BigInt(recordBatch.lastOffsetDelta);
      } catch (error) {
        // The last record batch of an answer may be cut by the fetch's byte limit (kafkajs' comment).
        if ((error as { name?: unknown }).name === "KafkaJSPartialMessageError") break;
        throw error;
      }
    }
    if (end !== undefined) recordBatchEnds.set(records, end);
    return records;
  };
}

/** The kafkajs module replaced: fetch v4 to v11 decode a partition's record batches with it. */
export const DECODE_MESSAGES_MODULE = "src/protocol/requests/fetch/v4/decodeMessages.js";
/** The kafkajs class whose methods are changed: a partition's fetched records. */
export const BATCH_MODULE = "src/consumer/batch.js";

/** True when kafkajs uses the decoding and the batch methods here (the kafkajs version they were written for). */
export const compactedBatchesPatched = patchKafkajs();

function patchKafkajs(): boolean {
  if (kafkajsModule(DECODE_MESSAGES_MODULE) === undefined) return false;
  const decoderClass = kafkajsLoaded<DecoderClass>("src/protocol/decoder.js");
  const decodeRecordBatch = kafkajsLoaded<(decoder: KafkajsDecoder) => Promise<DecodedRecordBatch>>(
    "src/protocol/recordBatch/v0/decoder.js",
  );
  const decodeMessageSet = kafkajsLoaded<(decoder: KafkajsDecoder, size: number) => Promise<unknown[]>>(
    "src/protocol/messageSet/decoder.js",
  );
  const { MAGIC_BYTE } = kafkajsLoaded<{ MAGIC_BYTE: number }>("src/protocol/recordBatch/v0/index.js");
  const users = ["v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11"].map(
    (version) => `src/protocol/requests/fetch/${version}/response.js`,
  );
  if (
    !replaceKafkajsModule(
      DECODE_MESSAGES_MODULE,
      decodeMessagesNotingBatchEnds(decoderClass, decodeRecordBatch, decodeMessageSet, MAGIC_BYTE),
      users,
    )
  )
    return false;
  const { prototype } = kafkajsLoaded<{ prototype: FetchedBatch }>(BATCH_MODULE);
  const { lastOffset, isEmptyDueToFiltering, isEmptyDueToLogCompactedMessages } = prototype;
  /** The end of the record batches fetched, when none of their records is at or past the fetched offset. */
  const compactedEnd = (batch: FetchedBatch): bigint | undefined => {
    const end = recordBatchEnd(batch.rawMessages);
    return end !== undefined && end >= BigInt(batch.fetchedOffset) && batch.isEmptyIncludingFiltered()
      ? end
      : undefined;
  };
  // A record batch compaction emptied entirely (the cleaner keeps a producer's last batch, empty)
  // decodes to no records at all: kafkajs would fetch it again for ever. It is "empty due to
  // filtering" too, so that the consumer resolves its last offset and moves past it.
  prototype.isEmptyDueToLogCompactedMessages = function (this: FetchedBatch): boolean {
    return isEmptyDueToLogCompactedMessages.call(this) || compactedEnd(this) !== undefined;
  };
  prototype.isEmptyDueToFiltering = function (this: FetchedBatch): boolean {
    return isEmptyDueToFiltering.call(this) || (this.isEmpty() && compactedEnd(this) !== undefined);
  };
  prototype.lastOffset = function (this: FetchedBatch): string {
    const end = compactedEnd(this);
    return end === undefined ? lastOffset.call(this) : end.toString();
  };
  return true;
}

/** The part of kafkajs' consumer Batch (src/consumer/batch.js) this changes and reads. */
export interface FetchedBatch {
  readonly fetchedOffset: string;
  readonly rawMessages: readonly unknown[];
  isEmpty(): boolean;
  isEmptyIncludingFiltered(): boolean;
  isEmptyDueToFiltering(): boolean;
  isEmptyDueToLogCompactedMessages(): boolean;
  lastOffset(): string;
}
