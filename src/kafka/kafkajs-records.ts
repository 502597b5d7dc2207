import { kafkajsLoaded, replaceKafkajsModule } from "./kafkajs-module-cache.ts";

/*
 * One Kafka record (record batch format v2) encoded and decoded without kafkajs' per-field garbage.
 * kafkajs 2.2.4 encodes a record into a zero-filled 512-byte buffer, and each varint through an
 * array and a Buffer of its own, with a 64-bit Long object per step for the timestamp; it decodes
 * each record's offset and timestamp by parsing the batch's base offset and base timestamp from
 * their decimal strings again. Every record the processors send or fetch goes through these two
 * functions, and their allocations were a large share of the processors' garbage collection
 * (bench/RESULTS.md). These write the same bytes and return the same records: a record outside
 * the common case (headers on the encoding side, values past 2^53, arguments of other types) goes
 * to kafkajs' own function, so nothing but the cost changes.
 */

/** kafkajs' record encoder, which this replaces (its produce requests v3 to v7 require it). */
export const RECORD_ENCODER_MODULE = "src/protocol/recordBatch/record/v0/index.js";
/** kafkajs' record decoder, which this replaces (its record batch decoder requires it). */
export const RECORD_DECODER_MODULE = "src/protocol/recordBatch/record/v0/decoder.js";

/** What kafkajs' produce request passes its record encoder. */
export interface RecordToEncode {
  readonly offsetDelta?: number;
  readonly timestampDelta?: number;
  readonly key?: unknown;
  readonly value?: unknown;
  readonly headers?: Readonly<Record<string, unknown>>;
}

/** The part of kafkajs' Encoder a record batch reads from an encoded record (`writeEncoderArray`). */
interface EncodedRecord {
  buf: Buffer;
  offset: number;
}

/** The part of kafkajs' Decoder a record's decoding uses. */
export interface RecordDecoderInput {
  buffer: Buffer;
  offset: number;
  readInt8(): number;
  readVarInt(): number;
  readVarLong(): { add(other: unknown): { toString(): string } };
  readVarIntBytes(): Buffer | null;
  readVarIntString(): string | null;
}

/** The batch fields kafkajs passes with each record it decodes. */
export interface RecordBatchContext {
  readonly firstOffset?: unknown;
  readonly firstTimestamp?: unknown;
  readonly magicByte?: number;
  readonly isControlBatch?: boolean;
  readonly timestampType?: number;
  readonly maxTimestamp?: unknown;
}

type RecordEncoder = (record: RecordToEncode) => EncodedRecord;
type RecordDecoder = (decoder: RecordDecoderInput, batchContext?: RecordBatchContext) => unknown;
interface LongClass {
  fromValue(value: unknown): { add(other: unknown): { toString(): string } };
}

const LOG_APPEND_TIME = 1;
/** Varints of at most 7 bytes hold at most 49 bits: exact in a double, with room for a sum. */
const MAX_NUMBER_VARINT_BYTES = 7;

/** Bytes of an unsigned varint of a non-negative integer below 2^53. */
function unsignedVarintSize(value: number): number {
  let bytes = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    bytes += 1;
  }
  return bytes;
}

function writeUnsignedVarint(buffer: Buffer, at: number, value: number): number {
  while (value >= 128) {
    buffer[at++] = (value % 128) | 0x80;
    value = Math.floor(value / 128);
  }
  buffer[at++] = value;
  return at;
}

/** ZigZag of a 32-bit integer, as the unsigned value kafkajs' writeUVarInt writes. */
function zigZag32(value: number): number {
  return ((value << 1) ^ (value >> 31)) >>> 0;
}

/** ZigZag of a safe integer whose magnitude is below 2^52 (exact as a double). */
function zigZag64(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

/** A key or value as kafkajs writes it: null, a Buffer, or a string's UTF-8 bytes; undefined for anything else. */
function bytesField(field: unknown): { readonly size: number; readonly bytes: Buffer | string | null } | undefined {
  if (field === null || field === undefined) return { size: -1, bytes: null };
  if (Buffer.isBuffer(field)) return { size: field.length, bytes: field };
  if (typeof field === "string") return { size: Buffer.byteLength(field, "utf8"), bytes: field };
  return undefined;
}

function writeBytesField(
  buffer: Buffer,
  at: number,
  field: { readonly size: number; readonly bytes: Buffer | string | null },
): number {
  at = writeUnsignedVarint(buffer, at, zigZag32(field.size));
  if (field.bytes === null) return at;
  if (typeof field.bytes === "string") return at + buffer.write(field.bytes, at, field.size, "utf8");
  field.bytes.copy(buffer, at);
  return at + field.size;
}

function hasHeaders(headers: Readonly<Record<string, unknown>> | undefined): boolean {
  if (headers === undefined) return false;
  for (const _ in headers) return true;
  return false;
}

/** The record encoder: one exactly sized buffer per record; kafkajs' own for records with headers or unusual fields. */
export function leanRecordEncoder(original: RecordEncoder, encoderPrototype: object): RecordEncoder {
  return (record) => {
    // Defaults as kafkajs' parameters have them: for undefined only (null goes to kafkajs' own).
    const offsetDelta = record.offsetDelta === undefined ? 0 : record.offsetDelta;
    const timestampDelta = record.timestampDelta === undefined ? 0 : record.timestampDelta;
    const key = bytesField(record.key);
    const value = bytesField(record.value);
    if (
      key === undefined ||
      value === undefined ||
      hasHeaders(record.headers) ||
      !Number.isInteger(offsetDelta) ||
      (offsetDelta | 0) !== offsetDelta ||
      !Number.isSafeInteger(timestampDelta) ||
      Math.abs(timestampDelta) >= 2 ** 52
    )
      return original(record);
    const timestamp = zigZag64(timestampDelta);
    const offset = zigZag32(offsetDelta);
    const keySize = key.size < 0 ? 1 : unsignedVarintSize(zigZag32(key.size)) + key.size;
    const valueSize = value.size < 0 ? 1 : unsignedVarintSize(zigZag32(value.size)) + value.size;
    // Attributes (one byte) … no headers (a varint 0, one byte).
    const body = 1 + unsignedVarintSize(timestamp) + unsignedVarintSize(offset) + keySize + valueSize + 1;
    const length = zigZag32(body);
    const buffer = Buffer.allocUnsafe(unsignedVarintSize(length) + body);
    let at = writeUnsignedVarint(buffer, 0, length);
    buffer[at++] = 0;
    at = writeUnsignedVarint(buffer, at, timestamp);
    at = writeUnsignedVarint(buffer, at, offset);
    at = writeBytesField(buffer, at, key);
    at = writeBytesField(buffer, at, value);
    buffer[at++] = 0;
    // A kafkajs Encoder holding exactly the record: the batch copies `buffer` (buf up to offset).
    const encoded = Object.create(encoderPrototype) as EncodedRecord;
    encoded.buf = buffer;
    encoded.offset = at;
    return encoded;
  };
}

/** A varint of at most 7 bytes as a number (ZigZag decoded), or undefined (the decoder is then where it was). */
function readSmallVarLong(decoder: RecordDecoderInput): number | undefined {
  const { buffer } = decoder;
  let at = decoder.offset;
  let result = 0;
  let scale = 1;
  for (let bytes = 0; bytes < MAX_NUMBER_VARINT_BYTES; bytes++) {
    const byte = buffer[at++];
    if (byte === undefined) return undefined;
    result += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      decoder.offset = at;
      return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
    }
    scale *= 128;
  }
  return undefined;
}

/** A decimal string of a safe integer as that number, or undefined (kafkajs' Long then parses it). */
function safeInteger(text: unknown): number | undefined {
  if (typeof text !== "string") return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) && String(value) === text ? value : undefined;
}

/** The record decoder: offsets and timestamps as numbers where they are exact; kafkajs' Long elsewhere. */
export function leanRecordDecoder(
  Long: LongClass,
  decodeHeader: (decoder: RecordDecoderInput) => { key: string; value: unknown },
): RecordDecoder {
  // The batch's base offset and timestamp, parsed once per batch rather than once per record.
  let lastContext: RecordBatchContext | undefined;
  let firstOffsetNumber: number | undefined;
  let firstTimestampNumber: number | undefined;
  return (decoder, batchContext = {}) => {
    const {
      firstOffset,
      firstTimestamp,
      magicByte,
      isControlBatch = false,
      timestampType,
      maxTimestamp,
    } = batchContext;
    if (batchContext !== lastContext) {
      lastContext = batchContext;
      firstOffsetNumber = safeInteger(firstOffset);
      firstTimestampNumber = safeInteger(firstTimestamp);
    }
    const attributes = decoder.readInt8();
    const smallDelta = readSmallVarLong(decoder);
    const timestampDelta = smallDelta ?? decoder.readVarLong();
    let timestamp: unknown;
    if (timestampType === LOG_APPEND_TIME && Boolean(maxTimestamp)) timestamp = maxTimestamp;
    else if (
      smallDelta !== undefined &&
      firstTimestampNumber !== undefined &&
      Number.isSafeInteger(firstTimestampNumber + smallDelta)
    )
      timestamp = String(firstTimestampNumber + smallDelta);
    else timestamp = Long.fromValue(firstTimestamp).add(timestampDelta).toString();
    const offsetDelta = decoder.readVarInt();
    const offset =
      firstOffsetNumber !== undefined && Number.isSafeInteger(firstOffsetNumber + offsetDelta)
        ? String(firstOffsetNumber + offsetDelta)
        : Long.fromValue(firstOffset).add(offsetDelta).toString();
    const key = decoder.readVarIntBytes();
    const value = decoder.readVarIntBytes();
    const count = decoder.readVarInt();
    let headers: Record<string, unknown> = {};
    // As kafkajs gathers them: a key seen again makes an array of its values.
    for (let index = 0; index < count; index++) {
      const header = decodeHeader(decoder);
      const known = headers[header.key];
      headers = {
        ...headers,
        [header.key]:
          known === undefined
            ? header.value
            : Array.isArray(known)
              ? [...(known as unknown[]), header.value]
              : [known, header.value],
      };
    }
    return {
      magicByte,
      attributes,
      timestamp,
      offset,
      key,
      value,
      headers,
      isControlRecord: isControlBatch,
      batchContext,
    };
  };
}

/** True when kafkajs uses both (the kafkajs version they were written for, its users not loaded before). */
export const recordsPatched = patchKafkajs();

function patchKafkajs(): boolean {
  const encoderUsers = ["src/protocol/requests/produce/v3/request.js"];
  const decoderUsers = ["src/protocol/recordBatch/v0/decoder.js"];
  try {
    const Encoder = kafkajsLoaded<{ prototype: object }>("src/protocol/encoder.js");
    const Long = kafkajsLoaded<LongClass>("src/utils/long.js");
    const decodeHeader = kafkajsLoaded<(decoder: RecordDecoderInput) => { key: string; value: unknown }>(
      "src/protocol/recordBatch/header/v0/decoder.js",
    );
    const encoder = kafkajsLoaded<RecordEncoder>(RECORD_ENCODER_MODULE);
    const encoding = replaceKafkajsModule(
      RECORD_ENCODER_MODULE,
      leanRecordEncoder(encoder, Encoder.prototype),
      encoderUsers,
    );
    const decoding = replaceKafkajsModule(RECORD_DECODER_MODULE, leanRecordDecoder(Long, decodeHeader), decoderUsers);
    return encoding && decoding;
  } catch {
    // Another kafkajs version: its own functions stay.
    return false;
  }
}
