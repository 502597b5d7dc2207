import { byUtf8 } from "./code-point-order.ts";
import { firstDuplicateKey } from "./duplicate-keys.ts";
import {
  FACT_TYPES,
  MEASURE_FIELDS,
  OBSERVATION_CONTRACT,
  REQUIRED_MEASURES,
  factSchemas,
  taskSnapshotSchema,
  type FactType,
} from "./fact-schema.ts";
import type { Fact, InvalidMeasures } from "./facts.ts";
import { fastParseFact } from "./fast-parse.ts";
import { rejectionOf } from "./issue-rejection.ts";
import type { Rejection, RejectionReason } from "./rejection.ts";
import { readTaskEntries } from "./task-entries.ts";
import { epochFieldsAsDates } from "./timestamp.ts";
import { RAW_VALUES_FIELD, restoreRawValues } from "./raw-values.ts";
import { illFormedTextPath } from "./well-formed-text.ts";

/**
 * An accepted fact, with the measure fields (contract revision 2 §1) or a snapshot's task entry
 * fields (revision 3 change 5) it was accepted without: each names the field and its own reason
 * (OUT_OF_RANGE, WRONG_TYPE, ...); the processor reports them on the dead-letter topic as
 * INVALID_MEASURE or INVALID_TASK_ENTRY, not rejecting the fact.
 */
export type ParseResult =
  | { readonly ok: true; readonly fact: Fact; readonly invalidMeasures: readonly Rejection[] }
  | { readonly ok: false; readonly rejection: Rejection };

const NONE: readonly Rejection[] = Object.freeze([]);

function accept(fact: Fact, invalidMeasures: readonly Rejection[] = NONE): ParseResult {
  return { ok: true, fact, invalidMeasures };
}

function reject(reason: RejectionReason, field: string, detail: string): ParseResult {
  return { ok: false, rejection: { reason, field, detail } };
}

/** The contract is checked before anything else (parseFactWithSchemas), so a record of another one is never walked. */
function isContractRecord(input: unknown): boolean {
  return (
    typeof input === "object" &&
    input !== null &&
    (input as Record<string, unknown>)["contract"] === OBSERVATION_CONTRACT
  );
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
  const illFormed = isContractRecord(input) ? illFormedTextPath(input) : undefined;
  if (illFormed !== undefined) {
    return reject(
      "ILL_FORMED_UNICODE",
      illFormed,
      `${illFormed}: a lone UTF-16 surrogate is not Unicode text; the record has no canonical form`,
    );
  }
  const fast = fastParseFact(input);
  return fast !== undefined ? accept(fast) : parseFactWithSchemas(input);
}

/**
 * A record decoded from Avro (the facts topic, an Avro container file): its timestamps are
 * timestamp-millis, i.e. epoch milliseconds by the schema, unlike a number in the JSON form, and
 * the values its schema could not hold are put back from `raw_values` (src/contract/raw-values.ts).
 * The record may be changed in place (it is the caller's freshly decoded copy).
 */
export function parseDecodedFact(record: unknown): ParseResult {
  const restored = restoreRawValues(record);
  if (!restored.ok) return reject("UNDECODABLE_BYTES", RAW_VALUES_FIELD, restored.detail);
  epochFieldsAsDates(restored.record);
  return parseFact(restored.record);
}

/**
 * A normalised fact as this project wrote it (the engine's input topic): epoch-millisecond
 * timestamps, and the `invalid_measures` the ingest found, which are part of its identity and
 * carried through unchanged.
 */
export function parseNormalizedFact(record: unknown): ParseResult {
  if (typeof record !== "object" || record === null) return parseFact(record);
  const { invalid_measures: carried, ...rest } = record as Record<string, unknown>;
  const parsed = parseDecodedFact(rest);
  if (!parsed.ok || carried === undefined) return parsed;
  if (!isInvalidMeasures(carried))
    return reject(
      "WRONG_TYPE",
      "invalid_measures",
      "invalid_measures maps a measure field to the JSON of its invalid value",
    );
  return accept({ ...parsed.fact, invalid_measures: carried } as Fact);
}

function isInvalidMeasures(value: unknown): value is InvalidMeasures {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((raw) => typeof raw === "string")
  );
}

/**
 * The zod schemas alone: the contract's single definition, and the path that names the reason
 * for a rejection. parseFact asks it only when the fast path declines; the fast path's tests
 * compare against it.
 */
export function parseFactWithSchemas(input: unknown): ParseResult {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    return reject("NOT_AN_OBJECT", "", "a fact is a JSON object");
  const record = input as Record<string, unknown>;
  if (record["contract"] !== OBSERVATION_CONTRACT) {
    return reject(
      "UNSUPPORTED_CONTRACT",
      "contract",
      `contract must be "${OBSERVATION_CONTRACT}", got ${JSON.stringify(record["contract"] ?? null)}`,
    );
  }
  const type = record["type"];
  if (!isFactType(type))
    return reject(
      "UNKNOWN_TYPE",
      "type",
      `type must be one of ${FACT_TYPES.join(", ")}, got ${JSON.stringify(type ?? null)}`,
    );
  if (type === "task_snapshot") return parseSnapshot(record);
  const schema = factSchemas[type];
  const parsed = schema.safeParse(record);
  if (parsed.success) return withRequiredMeasures(type, record, parsed.data, new Map());
  // Contract revision 2 §1: measure fields are read one at a time. When every issue is about a
  // measure, the record is read again without those fields (each then reads as absent).
  const measures = MEASURE_FIELDS[type];
  const issues = parsed.error.issues;
  const blocking = issues.find((issue) => measures === undefined || !measures.has(String(issue.path[0])));
  if (blocking !== undefined) return { ok: false, rejection: rejectionOf(blocking, record) };
  const invalid = new Map<string, Rejection>();
  for (const issue of issues) {
    const field = String(issue.path[0]);
    if (!invalid.has(field)) invalid.set(field, rejectionOf(issue, record));
  }
  const rest = { ...record };
  for (const field of invalid.keys()) delete rest[field];
  const retried = schema.safeParse(rest);
  if (!retried.success) {
    const issue = retried.error.issues[0];
    return issue === undefined
      ? reject("WRONG_TYPE", "", "invalid record")
      : { ok: false, rejection: rejectionOf(issue, rest) };
  }
  return withRequiredMeasures(type, record, retried.data, invalid);
}

/**
 * Contract revision 3 change 5: a snapshot is rejected only for its envelope, snapshot_id or cutoff;
 * its tasks are read entry by entry (readTaskEntries), each field left out reported as an invalid
 * field of the accepted fact, and the declared list kept under `invalid_measures.tasks`.
 */
function parseSnapshot(record: Record<string, unknown>): ParseResult {
  const entries = readTaskEntries(record["tasks"]);
  const input = entries.declared === undefined ? record : { ...record, tasks: entries.tasks };
  const parsed = taskSnapshotSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue === undefined) return reject("WRONG_TYPE", "", "invalid record");
    return { ok: false, rejection: rejectionOf(issue, record) };
  }
  if (entries.declared === undefined) return accept(parsed.data);
  const invalid = [...entries.invalid].sort((a, b) => byUtf8(a.field, b.field));
  return accept({ ...parsed.data, invalid_measures: { tasks: entries.declared } }, invalid);
}

/**
 * A required measure (a cost's money fields, a packet's repair_attribution) that is absent is as
 * unavailable as an invalid one, and reported the same way. The fact keeps, under
 * `invalid_measures`, the JSON of each invalid value: two records that differ there are two
 * different records (a conflict under one fact_id), not a redelivery.
 */
function withRequiredMeasures(
  type: FactType,
  record: Record<string, unknown>,
  fact: Fact,
  invalid: Map<string, Rejection>,
): ParseResult {
  for (const field of REQUIRED_MEASURES[type] ?? []) {
    if ((fact as Record<string, unknown>)[field] === undefined && !invalid.has(field))
      invalid.set(field, { reason: "MISSING_FIELD", field, detail: `${field} is required` });
  }
  if (invalid.size === 0) return accept(fact);
  const fields = [...invalid.keys()].sort(byUtf8);
  const invalidMeasures: Record<string, string> = {};
  for (const field of fields) invalidMeasures[field] = rawJson(record[field]);
  return accept(
    { ...fact, invalid_measures: invalidMeasures } as Fact,
    fields.map((field) => invalid.get(field) as Rejection),
  );
}

function rawJson(value: unknown): string {
  try {
    return JSON.stringify(value ?? null, (_, inner: unknown) => (typeof inner === "bigint" ? inner.toString() : inner));
  } catch {
    return String(value);
  }
}

/**
 * Parses one NDJSON line; malformed JSON is a rejection like any other, never a crash. A key
 * repeated within one object is rejected too (DUPLICATE_FIELD): JSON.parse would silently keep
 * the last one.
 */
export function parseFactJson(line: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return reject("MALFORMED_JSON", "", error instanceof Error ? error.message : "not JSON");
  }
  const duplicate = firstDuplicateKey(line, value);
  if (duplicate !== undefined)
    return reject(
      "DUPLICATE_FIELD",
      duplicate,
      `key "${duplicate}" appears twice in one object; which value was meant cannot be known`,
    );
  return parseFact(value);
}

/**
 * The fact as it was reported: its invalid measures put back with their received values, so that
 * a producer forwards what it read (the processor then finds and reports them itself) rather than a
 * fact silently cleaned on the way.
 */
export function asReported(fact: Fact): Fact {
  if (!("invalid_measures" in fact) || fact.invalid_measures === undefined) return fact;
  const { invalid_measures: invalid, ...rest } = fact;
  const restored: Record<string, unknown> = { ...rest };
  for (const [field, raw] of Object.entries(invalid)) restored[field] = JSON.parse(raw) as unknown;
  return restored as Fact;
}
