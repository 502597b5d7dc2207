import type avro from "avsc";
import { depthOf, MAX_RAW_DEPTH, RAW_VALUES_FIELD } from "../../contract/raw-values.ts";
import { shapeForAvro } from "./avro-shape.ts";

/**
 * The Avro form of a fact as reported, the writer's half (the reader's is
 * src/contract/raw-values.ts). The JSON form accepts values an Avro type cannot hold: an invalid
 * measure of another type or outside its enum (contract §1: the fact still counts), a string that
 * is not well-formed Unicode, a snapshot's malformed task entry. Such a field travels as the JSON
 * text of its value in `raw_values`, the field itself holding null or a placeholder, and the reader
 * puts it back before validating: the processors read exactly what a replay of the file reads.
 */

/** A fact without an Avro form: a required field without a value, a value without JSON or nested too deep. */
export class FactNotCarriableError extends Error {
  override readonly name = "FactNotCarriableError";
}

/** A lone surrogate (in unicode mode a well-formed pair is one code point): UTF-8 cannot hold it. */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;

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

const AVSC_EXACT_LONG = 2 ** 52;

/** Whether `type` holds `value` exactly: decoding gives back the same JSON. */
export function carries(type: avro.Type, value: unknown): boolean {
  switch (type.typeName) {
    case "null":
      return value === null || value === undefined;
    case "boolean":
      return typeof value === "boolean";
    case "int":
      return type.isValid(value);
    case "long":
      // avsc's isValid takes any safe integer, but its zig-zag form is exact only within ±2^52.
      return type.isValid(value) && Math.abs(value as number) <= AVSC_EXACT_LONG;
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
