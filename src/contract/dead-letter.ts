import type { RejectionReason } from "./rejection.ts";

/**
 * A rejected record on the dead-letter topic: why (machine-readable reason and readable detail),
 * where it came from (topic, partition, offset) and its original bytes, so nothing is lost and
 * it can be replayed after a fix.
 */
export interface DeadLetterRecord {
  readonly reason: RejectionReason;
  readonly field: string;
  readonly detail: string;
  readonly source: { readonly topic: string; readonly partition: number; readonly offset: string };
  readonly factId: string | null;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /**
   * False for a letter that reports without rejecting (INVALID_MEASURE: the fact is accepted,
   * that measure reads as unavailable; INVALID_TASK_ENTRY; LATER_TERMINAL_SUMMARY). Absent means true.
   */
  readonly recordRejected?: boolean;
}

/**
 * Dead letters are keyed by their source coordinates: a redelivered rejection overwrites itself.
 * A record can have several invalid measures or task entries, conflict under two identities (its fact_id and its
 * domain id), or fail to reach several webhooks, one letter each, so those keys add the field.
 */
export function deadLetterKey(letter: DeadLetterRecord): string {
  const coordinates = `${letter.source.topic}/${letter.source.partition}/${letter.source.offset}`;
  const perField = PER_FIELD.has(letter.reason);
  return perField ? `${coordinates}/${letter.field}` : coordinates;
}

/** Reasons a record can have more than one letter for, one per field or identity. */
const PER_FIELD: ReadonlySet<string> = new Set([
  "INVALID_MEASURE",
  "INVALID_TASK_ENTRY",
  "CONFLICT",
  "WEBHOOK_DELIVERY_FAILED",
]);
