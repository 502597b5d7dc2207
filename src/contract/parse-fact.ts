import type { z } from "zod";
import { FACT_TYPES, OBSERVATION_CONTRACT, factSchemas, type FactType } from "./fact-schema.ts";
import type { Fact } from "./facts.ts";
import { fastParseFact } from "./fast-parse.ts";
import type { Rejection, RejectionReason } from "./rejection.ts";

export type ParseResult = { readonly ok: true; readonly fact: Fact } | { readonly ok: false; readonly rejection: Rejection };

function reject(reason: RejectionReason, field: string, detail: string): ParseResult {
  return { ok: false, rejection: { reason, field, detail } };
}

function isFactType(value: unknown): value is FactType {
  return typeof value === "string" && (FACT_TYPES as readonly string[]).includes(value);
}

/**
 * Validates one decoded record (from JSON or Avro) against contract 1.0.0. The contract is
 * checked first: a record of another contract is UNSUPPORTED_CONTRACT whatever else is wrong with
 * it, because its other fields may mean something else.
 */
export function parseFact(input: unknown): ParseResult {
  const fast = fastParseFact(input);
  return fast !== undefined ? { ok: true, fact: fast } : parseFactWithSchemas(input);
}

/**
 * The zod schemas alone: the contract's single definition, and the path that names the reason
 * for a rejection. parseFact asks it only when the fast path declines; the fast path's tests
 * compare against it.
 */
export function parseFactWithSchemas(input: unknown): ParseResult {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return reject("NOT_AN_OBJECT", "", "a fact is a JSON object");
  const record = input as Record<string, unknown>;
  if (record["contract"] !== OBSERVATION_CONTRACT) {
    return reject("UNSUPPORTED_CONTRACT", "contract", `contract must be "${OBSERVATION_CONTRACT}", got ${JSON.stringify(record["contract"] ?? null)}`);
  }
  const type = record["type"];
  if (!isFactType(type)) return reject("UNKNOWN_TYPE", "type", `type must be one of ${FACT_TYPES.join(", ")}, got ${JSON.stringify(type ?? null)}`);
  const parsed = factSchemas[type].safeParse(record);
  if (parsed.success) return { ok: true, fact: parsed.data };
  const issue = parsed.error.issues[0];
  return issue === undefined ? reject("WRONG_TYPE", "", "invalid record") : { ok: false, rejection: rejectionOf(issue, record) };
}

/** Parses one NDJSON line; malformed JSON is a rejection like any other, never a crash. */
export function parseFactJson(line: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return reject("MALFORMED_JSON", "", error instanceof Error ? error.message : "not JSON");
  }
  return parseFact(value);
}

function rejectionOf(issue: z.core.$ZodIssue, record: Record<string, unknown>): Rejection {
  const field = issue.path.map(String).join(".");
  const detail = field === "" ? issue.message : `${field}: ${issue.message}`;
  const declared = (issue as { params?: { reason?: RejectionReason } }).params?.reason;
  if (declared !== undefined) return { reason: declared, field, detail };
  switch (issue.code) {
    case "unrecognized_keys":
      return { reason: "UNKNOWN_FIELD", field: [field, issue.keys[0] ?? ""].filter((part) => part !== "").join("."), detail: `unknown field(s) ${issue.keys.join(", ")} (contract ${OBSERVATION_CONTRACT} records are closed)` };
    case "invalid_type":
      return valueAt(record, issue.path) === undefined ? { reason: "MISSING_FIELD", field, detail: `${field} is required` } : { reason: "WRONG_TYPE", field, detail };
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
