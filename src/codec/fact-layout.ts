import { OBSERVATION_CONTRACT } from "../contract/fact-schema.ts";
import { intern, sharedProvenance } from "../contract/fast-fields.ts";
import type { Fact } from "../contract/facts.ts";
import { InternalRecordError, type BinaryReader, type BinaryWriter } from "./binary-form.ts";

/**
 * The fixed binary layout of an accepted, normalised fact on the internal topics (engine facts,
 * agent events), version 1. Internal topics carry only what ingest already validated, so reading
 * trusts the bytes: no contract check, only the layout. A fact is
 *
 *   type (1 byte, index in LAYOUT_TYPES) · fact_id · event_time · provenance ·
 *   presence (bit i set when the type's i-th optional field is present) · the present fields, in
 *   the contract's shape order · invalid_measures (count + 1, 0 = none; then field/raw JSON pairs)
 *
 * The layout copies the contract's shapes on purpose, versioned apart from them, so that a contract
 * change cannot silently change what existing compacted topics and state stores mean
 * (test/unit/kafka/internal-records.test.ts holds it to the zod schemas; a change means a new
 * FACT_LAYOUT_VERSION). Decoding builds the fact as the contract's fast path does, so
 * decode(encode(fact)) deep-equals fact (test/property/internal-records.property.test.ts).
 */
export const FACT_LAYOUT_VERSION = 1;

type Kind =
  /** A string kept as it is (identifiers, free text). */
  | { readonly kind: "text" }
  /** A low-cardinality string, shared on decode as the contract's fast path shares it. */
  | { readonly kind: "label" }
  | { readonly kind: "enum"; readonly symbols: readonly string[] }
  | { readonly kind: "boolean" }
  /** A safe integer (counts, tokens, money in minor units, exit codes). */
  | { readonly kind: "integer" }
  | { readonly kind: "double" }
  /** Epoch milliseconds. */
  | { readonly kind: "time" }
  | { readonly kind: "strings" }
  | { readonly kind: "tasks" };

export interface LayoutField {
  readonly name: string;
  readonly optional: boolean;
  readonly type: Kind;
}

const text: Kind = { kind: "text" };
const label: Kind = { kind: "label" };
const boolean: Kind = { kind: "boolean" };
const integer: Kind = { kind: "integer" };
const double: Kind = { kind: "double" };
const time: Kind = { kind: "time" };
const strings: Kind = { kind: "strings" };
const oneOf = (...symbols: string[]): Kind => ({ kind: "enum", symbols });
const required = (name: string, type: Kind): LayoutField => ({ name, optional: false, type });
const optional = (name: string, type: Kind): LayoutField => ({ name, optional: true, type });

/** Type byte → fact type. Append only. */
export const LAYOUT_TYPES = [
  "model_call",
  "cost",
  "delivery_summary",
  "packet",
  "repair",
  "task_snapshot",
  "agent_step",
  "sandbox_event",
] as const;
export type LayoutType = (typeof LAYOUT_TYPES)[number];

/** The envelope after `type`: always written, in this order (provenance is null or an object). */
export const ENVELOPE_FIELDS = ["contract", "fact_id", "event_time", "provenance", "type"] as const;

/** A defined task of a snapshot. */
export const TASK_FIELDS: readonly LayoutField[] = [
  optional("task_id", text),
  optional("members", strings),
  optional("role_template", text),
  optional("template_assignment", oneOf("EVENT_TIME", "BACKFILLED")),
];

/** Each type's own fields, after the envelope, in the contract's shape order. */
export const LAYOUT_FIELDS: Readonly<Record<LayoutType, readonly LayoutField[]>> = {
  model_call: [
    required("call_id", text),
    required("run_id", text),
    optional("delivery_id", text),
    optional("task_id", text),
    required("operational", boolean),
    optional("provider", label),
    optional("model", label),
    optional("role", label),
    optional("runtime", label),
    optional("span_duration_ms", double),
    optional("input_tokens", integer),
    optional("output_tokens", integer),
    optional("usage_source", oneOf("PROVIDER", "HOST", "NONE")),
  ],
  cost: [
    required("cost_id", text),
    optional("call_id", text),
    optional("delivery_id", text),
    optional("amount_minor", integer),
    optional("currency", label),
    optional("source", oneOf("PROVIDER", "HOST", "ESTIMATE")),
    optional("cost_basis", label),
    optional("attribution", oneOf("PROJECT", "SHARED", "UNATTRIBUTED")),
    optional("estimated", boolean),
  ],
  delivery_summary: [
    required("delivery_id", text),
    optional("task_id", text),
    optional("run_id", text),
    required("status", oneOf("OPEN", "TERMINAL")),
    optional("outcome", oneOf("SUCCEEDED", "FAILED", "CANCELLED", "INFRASTRUCTURE_FAILURE")),
    required("requirement_changed", boolean),
    optional("elapsed_ms", integer),
    optional("stage_reached", label),
  ],
  packet: [
    required("packet_id", text),
    optional("task_id", text),
    required("governance_revision", label),
    optional("repair_attribution", oneOf("AVAILABLE", "UNAVAILABLE")),
  ],
  repair: [
    required("repair_id", text),
    required("finding_id", text),
    optional("packet_id", text),
    optional("task_id", text),
    optional("delivery_id", text),
    required("attributable", boolean),
  ],
  task_snapshot: [required("snapshot_id", text), required("cutoff", time), required("tasks", { kind: "tasks" })],
  agent_step: [
    required("run_id", text),
    required("seq", integer),
    optional("actor", text),
    required("kind", oneOf("tool_call", "message", "plan")),
    optional("tool", text),
    optional("input", text),
    optional("observation_digest", text),
    optional("status", oneOf("ok", "error")),
    optional("input_tokens", integer),
    optional("output_tokens", integer),
  ],
  sandbox_event: [
    required("run_id", text),
    required("seq", integer),
    required("kind", oneOf("exec", "file_read", "file_write", "file_delete", "network", "git", "sql")),
    optional("command", text),
    optional("argv", strings),
    optional("path", text),
    optional("cwd", text),
    optional("workspace_root", text),
    optional("target", text),
    optional("exit_code", integer),
  ],
};

type Rec = Record<string, unknown>;

const TYPE_INDEX = new Map<string, number>(LAYOUT_TYPES.map((type, index) => [type, index]));
/** Enum symbol → index, per enum kind. */
const SYMBOL_INDEX = new Map<Kind, Map<string, number>>();
for (const fields of [...Object.values(LAYOUT_FIELDS), TASK_FIELDS]) {
  for (const field of fields)
    if (field.type.kind === "enum")
      SYMBOL_INDEX.set(field.type, new Map(field.type.symbols.map((symbol, index) => [symbol, index])));
}

/** Writes one accepted, normalised fact. */
export function writeFact(writer: BinaryWriter, fact: Fact): void {
  const record = fact as unknown as Rec;
  const typeIndex = TYPE_INDEX.get(fact.type);
  if (typeIndex === undefined) throw new InternalRecordError(`no layout for fact type ${String(fact.type)}`);
  writer.byte(typeIndex);
  writer.string(fact.fact_id);
  writer.integer(fact.event_time);
  writeProvenance(writer, fact.provenance);
  writeFields(writer, LAYOUT_FIELDS[LAYOUT_TYPES[typeIndex] as LayoutType], record);
  const invalid = record["invalid_measures"] as Readonly<Record<string, string>> | undefined;
  if (invalid === undefined) {
    writer.unsigned(0);
    return;
  }
  const entries = Object.entries(invalid);
  writer.unsigned(entries.length + 1);
  for (const [field, raw] of entries) {
    writer.string(field);
    writer.string(raw);
  }
}

/** Reads one fact written by writeFact. */
export function readFact(reader: BinaryReader): Fact {
  const typeIndex = reader.byte();
  const type = LAYOUT_TYPES[typeIndex];
  if (type === undefined) throw new InternalRecordError(`unknown fact type byte ${typeIndex}`);
  const factId = reader.string();
  const eventTime = reader.integer();
  const out: Rec = {
    contract: OBSERVATION_CONTRACT,
    fact_id: factId,
    event_time: eventTime,
    provenance: readProvenance(reader),
    type,
  };
  readFields(reader, LAYOUT_FIELDS[type], out);
  const invalidCount = reader.unsigned();
  if (invalidCount > 0) {
    const invalid: Record<string, string> = {};
    for (let index = 1; index < invalidCount; index++) {
      const field = reader.string();
      invalid[field] = reader.string();
    }
    out["invalid_measures"] = invalid;
  }
  return out as unknown as Fact;
}

function writeFields(writer: BinaryWriter, fields: readonly LayoutField[], record: Rec): void {
  let presence = 0;
  let bit = 1;
  for (const field of fields) {
    if (!field.optional) continue;
    if (record[field.name] !== undefined) presence += bit;
    bit *= 2;
  }
  writer.unsigned(presence);
  for (const field of fields) {
    const value = record[field.name];
    if (value === undefined) {
      if (field.optional) continue;
      throw new InternalRecordError(`required field ${field.name} is missing`);
    }
    writeValue(writer, field.type, value);
  }
}

function readFields(reader: BinaryReader, fields: readonly LayoutField[], out: Rec): void {
  const presence = reader.unsigned();
  let bit = 1;
  for (const field of fields) {
    if (field.optional) {
      const present = Math.floor(presence / bit) % 2 === 1;
      bit *= 2;
      if (!present) continue;
    }
    out[field.name] = readValue(reader, field.type);
  }
}

function writeValue(writer: BinaryWriter, type: Kind, value: unknown): void {
  switch (type.kind) {
    case "text":
    case "label":
      writer.string(value as string);
      return;
    case "enum": {
      const index = SYMBOL_INDEX.get(type)?.get(value as string);
      if (index === undefined)
        throw new InternalRecordError(`${String(value)} is not one of ${type.symbols.join(", ")}`);
      writer.unsigned(index);
      return;
    }
    case "boolean":
      writer.boolean(value as boolean);
      return;
    case "integer":
    case "time":
      writer.integer(value as number);
      return;
    case "double":
      writer.double(value as number);
      return;
    case "strings":
      writer.unsigned((value as readonly string[]).length);
      for (const item of value as readonly string[]) writer.string(item);
      return;
    case "tasks":
      writer.unsigned((value as readonly Rec[]).length);
      for (const task of value as readonly Rec[]) writeFields(writer, TASK_FIELDS, task);
      return;
  }
}

function readValue(reader: BinaryReader, type: Kind): unknown {
  switch (type.kind) {
    case "text":
      return reader.string();
    case "label":
      return intern(reader.string());
    case "enum": {
      const index = reader.unsigned();
      const symbol = type.symbols[index];
      if (symbol === undefined) throw new InternalRecordError(`enum index ${index} of ${type.symbols.length}`);
      return symbol;
    }
    case "boolean":
      return reader.boolean();
    case "integer":
    case "time":
      return reader.integer();
    case "double":
      return reader.double();
    case "strings": {
      const items: string[] = [];
      for (let count = reader.unsigned(); count > 0; count--) items.push(reader.string());
      return items;
    }
    case "tasks": {
      const tasks: Rec[] = [];
      for (let count = reader.unsigned(); count > 0; count--) {
        const task: Rec = {};
        readFields(reader, TASK_FIELDS, task);
        tasks.push(task);
      }
      return tasks;
    }
  }
}

/** Provenance: 0 = null, 1 = basis only, 2 = basis and source. */
function writeProvenance(
  writer: BinaryWriter,
  provenance: { readonly basis: string; readonly source?: string | undefined } | null,
): void {
  if (provenance === null) {
    writer.byte(0);
    return;
  }
  writer.byte(provenance.source === undefined ? 1 : 2);
  writer.string(provenance.basis);
  if (provenance.source !== undefined) writer.string(provenance.source);
}

function readProvenance(reader: BinaryReader): Rec | null {
  const form = reader.byte();
  if (form === 0) return null;
  if (form > 2) throw new InternalRecordError(`provenance form ${form}`);
  const basis = reader.string();
  return sharedProvenance(basis, form === 2 ? reader.string() : undefined);
}
