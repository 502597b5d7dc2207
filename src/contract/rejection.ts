/**
 * Why a record was not accepted. The code is machine-readable and stable (dashboards and the
 * dead-letter topic key on it); `field` names the offending field when there is one.
 */
export const REJECTION_REASONS = [
  "MALFORMED_JSON",
  "NOT_AN_OBJECT",
  "UNSUPPORTED_CONTRACT",
  "UNKNOWN_TYPE",
  "MISSING_FIELD",
  "WRONG_TYPE",
  "OUT_OF_RANGE",
  "INVALID_ENUM",
  "UNKNOWN_FIELD",
  "INVALID_TIMESTAMP",
  "INVALID_CURRENCY",
  "OUTCOME_REQUIRED",
  "OUTCOME_NOT_ALLOWED",
  "COST_LINK_NOT_EXACTLY_ONE",
  "DUPLICATE_TASK_IN_SNAPSHOT",
  "UNDECODABLE_BYTES",
  "UNKNOWN_SCHEMA_ID",
  "CONFLICT",
  // Agent telemetry (OTLP) that lacks what a fact needs; the field and detail say which part.
  "UNMAPPABLE_TELEMETRY",
] as const;

export type RejectionReason = (typeof REJECTION_REASONS)[number];

export interface Rejection {
  readonly reason: RejectionReason;
  /** Dotted path of the offending field, e.g. `tasks.2.members`; empty for whole-record problems. */
  readonly field: string;
  readonly detail: string;
}
