import type { z } from "zod";
import { OBSERVATION_CONTRACT } from "./fact-schema.ts";
import type { Rejection, RejectionReason } from "./rejection.ts";

/**
 * The rejection a zod issue stands for: the reason a schema declared (`params.reason`), or one
 * named after the issue's kind. Shared by the whole-record parse and the task-entry reading.
 */
export function rejectionOf(issue: z.core.$ZodIssue, record: Record<string, unknown>): Rejection {
  const field = issue.path.map(String).join(".");
  const detail = field === "" ? issue.message : `${field}: ${issue.message}`;
  const declared = (issue as { params?: { reason?: RejectionReason } }).params?.reason;
  if (declared !== undefined) return { reason: declared, field, detail };
  switch (issue.code) {
    case "unrecognized_keys":
      return {
        reason: "UNKNOWN_FIELD",
        field: [field, issue.keys[0] ?? ""].filter((part) => part !== "").join("."),
        detail: `unknown field(s) ${issue.keys.join(", ")} (contract ${OBSERVATION_CONTRACT} records are closed)`,
      };
    case "invalid_type":
      return valueAt(record, issue.path) === undefined
        ? { reason: "MISSING_FIELD", field, detail: `${field} is required` }
        : { reason: "WRONG_TYPE", field, detail };
    case "too_small":
    case "too_big":
      return { reason: "OUT_OF_RANGE", field, detail };
    case "invalid_value":
      return { reason: "INVALID_ENUM", field, detail };
    default:
      return { reason: "WRONG_TYPE", field, detail };
  }
}

function valueAt(record: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = record;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
