import type { TopicPosition } from "../processor.ts";

/** A record the audit found wrong, with where it is: the audit reports it, never skips it silently. */
export interface AuditMismatch {
  readonly position: TopicPosition;
  readonly detail: string;
}

/** Mismatches listed in full; past this many only their count grows, so a topic of bad records cannot fill the heap. */
export const LISTED_MISMATCHES = 1_000;

/** The audit's mismatches of one source: every one counted, the first LISTED_MISMATCHES kept. */
export class MismatchList {
  readonly listed: AuditMismatch[] = [];
  count = 0;

  add(mismatch: AuditMismatch): void {
    this.count += 1;
    if (this.listed.length < LISTED_MISMATCHES) this.listed.push(mismatch);
  }
}
