import { factCodec } from "../state/codecs/values.ts";
import { admissionCodec, claimVersionCodec, joinReadingCodec } from "./stage-codecs.ts";
import type { StageRecord } from "./stage-records.ts";

/**
 * A stage record's value as its topic would carry it (null: a tombstone), in the state codecs'
 * binary forms. Conflicts are not encoded here: they leave the stages as dead letters.
 */
export function encodeStageValue(record: Exclude<StageRecord, { topic: "conflicts" }>): Buffer | null {
  if (record.value === null) return null;
  switch (record.topic) {
    case "claims":
      return claimVersionCodec.encode(record.value);
    case "admissions":
      return admissionCodec.encode(record.value);
    case "pushes":
      return factCodec.encode(record.value);
    case "subscriptions":
      return Buffer.alloc(0);
    case "responses":
      return joinReadingCodec.encode(record.value);
    case "partials":
      return record.value;
  }
}

/** The record as a reader of its topic gets it: its value decoded from `bytes`. */
export function decodeStageValue<R extends Exclude<StageRecord, { topic: "conflicts" }>>(
  record: R,
  bytes: Buffer | null,
): R {
  if (bytes === null) return { ...record, value: null };
  switch (record.topic) {
    case "claims":
      return { ...record, value: claimVersionCodec.decode(bytes) };
    case "admissions":
      return { ...record, value: admissionCodec.decode(bytes) };
    case "pushes":
      return { ...record, value: factCodec.decode(bytes) };
    case "subscriptions":
      return { ...record, value: true };
    case "responses":
      return { ...record, value: joinReadingCodec.decode(bytes) };
    case "partials":
      return { ...record, value: bytes };
  }
}
