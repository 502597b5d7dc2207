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
  // An accepted fact a producer cannot write in Avro (a carried value without JSON, or nested too deep): not sent.
  "UNENCODABLE_FACT",
  "CONFLICT",
  // Agent telemetry (OTLP) that lacks what a fact needs; the field and detail say which part.
  "UNMAPPABLE_TELEMETRY",
  // Revision 2: a repeated key in one JSON object (the record is rejected).
  "DUPLICATE_FIELD",
  // Not rejections of the record (dead letters that report, the fact still counts; §1, §3):
  // an invalid measure field, read as unavailable; a later TERMINAL summary of a Delivery.
  "INVALID_MEASURE",
  "LATER_TERMINAL_SUMMARY",
] as const;

export type RejectionReason = (typeof REJECTION_REASONS)[number];

export interface Rejection {
  readonly reason: RejectionReason;
  /** Dotted path of the offending field, e.g. `tasks.2.members`; empty for whole-record problems. */
  readonly field: string;
  readonly detail: string;
}

/**
 * The dead letter reporting one invalid measure of an accepted fact (contract revision 2 §1):
 * reason INVALID_MEASURE, the field, and the field's own reason in the detail. The same words on
 * the dead-letter topic and in a replay's dead-letter file.
 */
export function invalidMeasureLetter(factId: string, measure: Rejection): Rejection {
  return { reason: "INVALID_MEASURE", field: measure.field, detail: `fact ${factId}: ${measure.field} is invalid (${measure.reason}: ${measure.detail}); the fact is accepted and this measure reads as unavailable` };
}
