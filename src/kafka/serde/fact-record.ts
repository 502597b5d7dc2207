import type avro from "avsc";
import { parseDecodedFact, type ParseResult } from "../../contract/parse-fact.ts";
import { shapeForAvro } from "./avro-shape.ts";

/**
 * The Avro form of a fact as reported. The JSON form accepts values an Avro type cannot hold: an
 * invalid measure of another type or outside its enum (contract §1: the fact still counts), a
 * string that is not well-formed Unicode, a snapshot's malformed task entry. Such a field travels
 * as the JSON text of its value in `raw_values`, the field itself holding null or a placeholder,
 * and the reader puts it back before validating: the processors read exactly what a replay of the
 * file reads.
 */
export const RAW_VALUES_FIELD = "raw_values";

/** A fact without an Avro form: a required field without a value, a value without JSON or nested too deep. */
export class FactNotCarriableError extends Error {
  override readonly name = "FactNotCarriableError";
}

/** A lone surrogate (in unicode mode a well-formed pair is one code point): UTF-8 cannot hold it. */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;

/** Nesting allowed in one carried value, on write and on read: deeper JSON is refused before it is parsed. */
export const MAX_RAW_DEPTH = 32;

/** The record to encode with `type` (a fact schema): every field it can hold, the rest as JSON text. */
export function factToAvro(fact: Readonly<Record<string, unknown>>, type: avro.Type): Record<string, unknown> {
  const fields = (type as avro.types.RecordType).fields;
  const shaped: Record<string, unknown> = {};
  const raw: Record<string, string> = {};
  for (const field of fields) {
    if (field.name === RAW_VALUES_FIELD) continue;
    const value = fact[field.name];
    if (carries(field.type, value)) {
      // Only records (provenance, tasks) need shaping: absent optionals become null.
      const isRecord = typeof value === "object" && value !== null;
      shaped[field.name] = isRecord ? shapeForAvro(value, field.type) : (value ?? null);
      continue;
    }
    raw[field.name] = jsonOf(field.name, value);
    shaped[field.name] = placeholder(field.name, field.type, value);
  }
  const names = fieldNames(type);
  for (const [name, value] of Object.entries(fact)) {
    if (value !== undefined && !names.has(name)) raw[name] = jsonOf(name, value);
  }
  shaped[RAW_VALUES_FIELD] = raw;
  return shaped;
}

export type Restored =
  | { readonly ok: true; readonly record: unknown }
  | { readonly ok: false; readonly detail: string };

/**
 * A decoded fact record (avsc's plain data) as reported: each `raw_values` entry put back in its
 * field. Not ok when an entry is not JSON, or nests deeper than MAX_RAW_DEPTH.
 */
export function factFromAvro(record: unknown): Restored {
  if (typeof record !== "object" || record === null || !(RAW_VALUES_FIELD in record)) return { ok: true, record };
  const { [RAW_VALUES_FIELD]: raw, ...rest } = record as Record<string, unknown>;
  if (typeof raw !== "object" || raw === null) return { ok: true, record: rest };
  for (const [name, text] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof text !== "string" || depthOf(text) > MAX_RAW_DEPTH) {
      return { ok: false, detail: `${RAW_VALUES_FIELD}.${name} is not JSON of at most ${MAX_RAW_DEPTH} levels` };
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { ok: false, detail: `${RAW_VALUES_FIELD}.${name} is not JSON: ${reason}` };
    }
    // defineProperty: a field named __proto__ becomes an own key (then an unknown field), never the prototype.
    Object.defineProperty(rest, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return { ok: true, record: rest };
}

/** A decoded fact record (registry or container file), restored and validated. */
export function parseAvroFact(record: unknown): ParseResult {
  const restored = factFromAvro(record);
  if (restored.ok) return parseDecodedFact(restored.record);
  return { ok: false, rejection: { reason: "UNDECODABLE_BYTES", field: RAW_VALUES_FIELD, detail: restored.detail } };
}

/** Whether `type` holds `value` exactly: decoding gives back the same JSON. */
export function carries(type: avro.Type, value: unknown): boolean {
  switch (type.typeName) {
    case "null":
      return value === null || value === undefined;
    case "boolean":
      return typeof value === "boolean";
    case "int":
    case "long":
      // avsc's own range (a long within ±2^52: its zig-zag form must stay a safe integer).
      return type.isValid(value);
    case "float":
    case "double":
      return typeof value === "number" && Number.isFinite(value);
    case "string":
      return typeof value === "string" && !LONE_SURROGATE.test(value);
    case "enum":
      return typeof value === "string" && (type as avro.types.EnumType).symbols.includes(value);
    case "array":
      return Array.isArray(value) && value.every((item) => carries((type as avro.types.ArrayType).itemsType, item));
    case "map": {
      const values = (type as avro.types.MapType).valuesType;
      return isPlainObject(value) && Object.values(value).every((item) => carries(values, item));
    }
    case "record": {
      if (!isPlainObject(value)) return false;
      const names = fieldNames(type);
      const known = Object.keys(value).every((key) => value[key] === undefined || names.has(key));
      return known && (type as avro.types.RecordType).fields.every((field) => carries(field.type, value[field.name]));
    }
    case "union:unwrapped":
      return (type as avro.types.UnwrappedUnionType).types.some((branch) => carries(branch, value));
    default:
      return false;
  }
}

const FIELD_NAMES = new WeakMap<avro.Type, ReadonlySet<string>>();

function fieldNames(type: avro.Type): ReadonlySet<string> {
  let names = FIELD_NAMES.get(type);
  if (names === undefined) {
    names = new Set((type as avro.types.RecordType).fields.map((field) => field.name));
    FIELD_NAMES.set(type, names);
  }
  return names;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  return !Array.isArray(value) && !Buffer.isBuffer(value) && !(value instanceof Date);
}

/** What a field holds when its value travels in raw_values: null where it may, else the nearest honest value. */
function placeholder(name: string, type: avro.Type, value: unknown): unknown {
  if (type.typeName === "union:unwrapped" && carries(type, null)) return null;
  if (type.typeName === "string" && typeof value === "string") return value.replace(LONE_SURROGATES, "\uFFFD");
  if (type.typeName === "array") return [];
  if (type.typeName === "map") return {};
  throw new FactNotCarriableError(`${name} (${JSON.stringify(jsonOrUndefined(value)) ?? "no value"}) has no Avro form`);
}

/** The JSON text a field travels as; refused, like the reader refuses it, when it nests too deep. */
function jsonOf(name: string, value: unknown): string {
  const text = jsonOrUndefined(value);
  if (text === undefined) throw new FactNotCarriableError(`${name} has no JSON form`);
  if (depthOf(text) > MAX_RAW_DEPTH) {
    throw new FactNotCarriableError(`${name} nests deeper than ${MAX_RAW_DEPTH} levels`);
  }
  return text;
}

function jsonOrUndefined(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** Deepest nesting of brackets outside strings in a JSON text (not checking it is JSON). */
function depthOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (code === 0x5d || code === 0x7d) depth--;
  }
  return deepest;
}
