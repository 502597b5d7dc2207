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
  // Revision 3: an empty or whitespace-only string where a value is needed (change 9).
  "BLANK_VALUE",
  // A string or key with a lone UTF-16 surrogate: no canonical form, so no identity (the record is rejected).
  "ILL_FORMED_UNICODE",
  // Not rejections of the record (dead letters that report, the fact still counts; §1, §3):
  // an invalid measure field, read as unavailable; a later TERMINAL summary of a Delivery.
  "INVALID_MEASURE",
  "LATER_TERMINAL_SUMMARY",
  // Revision 3 change 5: a malformed field of one task entry of a snapshot; the task is read without it.
  "INVALID_TASK_ENTRY",
  // Not about a fact: `agentops notify` could not deliver an alert or a coverage change to a webhook.
  "WEBHOOK_DELIVERY_FAILED",
] as const;

export type RejectionReason = (typeof REJECTION_REASONS)[number];

export interface Rejection {
  readonly reason: RejectionReason;
  /** Dotted path of the offending field, e.g. `tasks.2.members`; empty for whole-record problems. */
  readonly field: string;
  readonly detail: string;
}

/**
 * The dead letter reporting one invalid field of an accepted fact, not rejecting it: a measure
 * (contract revision 2 §1: INVALID_MEASURE, the measure reads as unavailable) or a snapshot's task
 * entry (revision 3 change 5: INVALID_TASK_ENTRY, the task is read without it), with the field's own
 * reason in the detail. The same words on the dead-letter topic and in a replay's dead-letter file.
 */
export function invalidFieldLetter(
  fact: { readonly fact_id: string; readonly type: string },
  invalid: Rejection,
): Rejection {
  const what = `fact ${fact.fact_id}: ${invalid.field} is invalid (${invalid.reason}: ${invalid.detail})`;
  const { field } = invalid;
  if (fact.type === "task_snapshot") {
    const detail = `${what}; the snapshot is accepted and the task is read without it`;
    return { reason: "INVALID_TASK_ENTRY", field, detail };
  }
  const detail = `${what}; the fact is accepted and this measure reads as unavailable`;
  return { reason: "INVALID_MEASURE", field, detail };
}
