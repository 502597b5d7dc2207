import type { TopicPosition } from "../processor.ts";

/** A record the audit found wrong, with where it is: the audit reports it, never skips it silently. */
export interface AuditMismatch {
  readonly position: TopicPosition;
  readonly detail: string;
}

/** Mismatches listed in full; past this many only their count grows, so a topic of bad records cannot fill the heap. */
export const LISTED_MISMATCHES = 1_000;

/** What the audit reports item by item: every item counted, the first `limit` kept, so its memory is bounded. */
export class CountedList<T> {
  readonly listed: T[] = [];
  count = 0;
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  add(item: T): void {
    this.count += 1;
    if (this.listed.length < this.limit) this.listed.push(item);
  }
}

/** The audit's mismatches of one source: every one counted, the first LISTED_MISMATCHES kept. */
export class MismatchList extends CountedList<AuditMismatch> {
  constructor() {
    super(LISTED_MISMATCHES);
  }
}
