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
}

/** Dead letters are keyed by their source coordinates: a redelivered rejection overwrites itself. */
export function deadLetterKey(letter: DeadLetterRecord): string {
  return `${letter.source.topic}/${letter.source.partition}/${letter.source.offset}`;
}
