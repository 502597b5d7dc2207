import {
  MEASURE_RANGES,
  agentStepSchema,
  hasValue,
  costSchema,
  deliverySummarySchema,
  modelCallSchema,
  packetSchema,
  repairSchema,
  sandboxEventSchema,
  taskSnapshotSchema,
} from "./fact-schema.ts";
import { toEpochMillis } from "./timestamp.ts";

/**
 * Field checks of the validation fast path (src/contract/fast-parse.ts). Each one mirrors one zod
 * rule of src/contract/fact-schema.ts exactly (the same test, the same normalised value); where it
 * can, it reads its constants from the zod schemas themselves (closed key sets, enum values,
 * identifier bounds), so zod stays the single definition of the contract. Every helper answers
 * either the normalised value or `BAD`, which means "let zod decide" (zod then gives the reason).
 */

export const BAD: unique symbol = Symbol("fast-parse: ask zod");
export type Bad = typeof BAD;
export type Rec = Record<string, unknown>;

/** zod's `isObject`: what an object schema accepts as its input. */
export function isRecord(value: unknown): value is Rec {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Closed records: the key set each strict object schema accepts (zod's `keySet`). */
export const KEYS = {
  model_call: keysOf(modelCallSchema.shape),
  cost: keysOf(costSchema.shape),
  delivery_summary: keysOf(deliverySummarySchema.shape),
  packet: keysOf(packetSchema.shape),
  repair: keysOf(repairSchema.shape),
  task_snapshot: keysOf(taskSnapshotSchema.shape),
  agent_step: keysOf(agentStepSchema.shape),
  sandbox_event: keysOf(sandboxEventSchema.shape),
  provenance: keysOf(modelCallSchema.shape.provenance.in.unwrap().unwrap().shape),
  task: keysOf(taskSnapshotSchema.shape.tasks.element.shape),
} as const;

function keysOf(shape: object): ReadonlySet<string> {
  return new Set(Object.keys(shape));
}

/** True when every key `for…in` yields (zod's unknown-key scan) is one of the schema's keys. */
export function onlyKnownKeys(record: Rec, keys: ReadonlySet<string>): boolean {
  for (const key in record) if (!keys.has(key)) return false;
  return true;
}

/** Enum values, read from the zod enums (optional ones unwrapped from `nullish().transform()`). */
export const ENUMS = {
  usageSource: new Set<unknown>(modelCallSchema.shape.usage_source.in.unwrap().unwrap().options),
  costSource: new Set<unknown>(costSchema.shape.source.in.unwrap().unwrap().options),
  attribution: new Set<unknown>(costSchema.shape.attribution.in.unwrap().unwrap().options),
  deliveryStatus: new Set<unknown>(deliverySummarySchema.shape.status.options),
  deliveryOutcome: new Set<unknown>(deliverySummarySchema.shape.outcome.in.unwrap().unwrap().options),
  repairAttribution: new Set<unknown>(packetSchema.shape.repair_attribution.in.unwrap().unwrap().options),
  templateAssignment: new Set<unknown>(
    taskSnapshotSchema.shape.tasks.element.shape.template_assignment.in.unwrap().unwrap().options,
  ),
  stepKind: new Set<unknown>(agentStepSchema.shape.kind.options),
  stepStatus: new Set<unknown>(agentStepSchema.shape.status.in.unwrap().unwrap().options),
  sandboxKind: new Set<unknown>(sandboxEventSchema.shape.kind.options),
} as const;

/** Identifier bounds (`z.string().min(1).max(256)`), read from the schema of fact_id. */
const ID_MIN = modelCallSchema.shape.fact_id.minLength ?? 0;
const ID_MAX = modelCallSchema.shape.fact_id.maxLength ?? Number.POSITIVE_INFINITY;

/** `identifier`: a string of 1..256 UTF-16 code units, not blank. */
export function isId(value: unknown): value is string {
  return typeof value === "string" && value.length >= ID_MIN && value.length <= ID_MAX && hasValue(value);
}

/** `z.string().min(1)` (governance_revision). */
export function isNonEmpty(value: unknown): value is string {
  return typeof value === "string" && value.length >= 1;
}

/** `label` (cost_basis): a string that is not blank. */
export function isLabel(value: unknown): value is string {
  return typeof value === "string" && hasValue(value);
}

/** `nonNegativeInteger`: a safe integer ≥ 0 (zod's `.int()` is the safe-integer range). */
export function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** Optional fields (`optional(...)`): absent or null is `undefined`; otherwise the value must pass. */
export function optString(value: unknown): string | undefined | Bad {
  return typeof value === "string" ? value : value === undefined || value === null ? undefined : BAD;
}

export function optId(value: unknown): string | undefined | Bad {
  if (typeof value === "string") return isId(value) ? value : BAD;
  return value === undefined || value === null ? undefined : BAD;
}

/** `optional(label)` kept as it is (role_template, stage_reached): not blank. */
export function optNonBlank(value: unknown): string | undefined | Bad {
  if (typeof value === "string") return hasValue(value) ? value : BAD;
  return value === undefined || value === null ? undefined : BAD;
}

export function optCount(value: unknown): number | undefined | Bad {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : BAD;
  return value === undefined || value === null ? undefined : BAD;
}

/** `z.number().int()` (exit_code): any safe integer. */
export function optInteger(value: unknown): number | undefined | Bad {
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : BAD;
  return value === undefined || value === null ? undefined : BAD;
}

/** A measure count with its contract range (tokens, elapsed_ms, amount_minor): an integer 0..max. */
export function optBoundedCount(value: unknown, max: number): number | undefined | Bad {
  if (typeof value === "number") return Number.isInteger(value) && value >= 0 && value <= max ? value : BAD;
  return value === undefined || value === null ? undefined : BAD;
}

/** `z.number().nonnegative().max(10^10)` (span_duration_ms): finite by its bound. */
export function optDuration(value: unknown): number | undefined | Bad {
  if (typeof value === "number") return value >= 0 && value <= MEASURE_RANGES.spanDurationMs ? value : BAD;
  return value === undefined || value === null ? undefined : BAD;
}

export function optEnum(value: unknown, values: ReadonlySet<unknown>): string | undefined | Bad {
  if (typeof value === "string") return values.has(value) ? intern(value) : BAD;
  return value === undefined || value === null ? undefined : BAD;
}

/**
 * Low-cardinality labels (provider, model, role, runtime, currency, cost basis, enums, stage and
 * template ids) repeat in every fact, and JSON.parse makes a new string for each occurrence.
 * Sharing one instance per distinct value keeps a million held facts from holding millions of
 * copies. Bounded, so a stream of unique values cannot grow it without limit.
 */
const INTERNED_MAX = 10_000;
const interned = new Map<string, string>();

export function intern(value: string): string {
  const known = interned.get(value);
  if (known !== undefined) return known;
  if (interned.size < INTERNED_MAX) interned.set(value, value);
  return value;
}

/** optNonBlank for a low-cardinality measure label: the same check, the shared instance. */
export function optLabel(value: unknown): string | undefined | Bad {
  if (typeof value === "string") return hasValue(value) ? intern(value) : BAD;
  return value === undefined || value === null ? undefined : BAD;
}

/** `z.array(identifier)` / `z.array(z.string())`, optional: a fresh array, as zod returns. */
export function optIdArray(value: unknown): string[] | undefined | Bad {
  if (Array.isArray(value)) {
    const copy: string[] = [];
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      if (!isId(item)) return BAD;
      copy.push(item);
    }
    return copy;
  }
  return value === undefined || value === null ? undefined : BAD;
}

export function optStringArray(value: unknown): string[] | undefined | Bad {
  if (Array.isArray(value)) {
    const copy: string[] = [];
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      if (typeof item !== "string") return BAD;
      copy.push(item);
    }
    return copy;
  }
  return value === undefined || value === null ? undefined : BAD;
}

/** `timestampSchema`: a string or a Date through the same `toEpochMillis`; a number is not a timestamp. */
export function timestamp(value: unknown): number | Bad {
  if (typeof value === "string" || value instanceof Date) return toEpochMillis(value) ?? BAD;
  return BAD;
}

const provenances = new Map<string, Rec>();

/** `provenanceSchema`: absent or null is null; otherwise a closed `{basis, source?}` with a string basis. */
export function provenance(value: unknown): Rec | null | Bad {
  if (value === undefined || value === null) return null;
  if (!isRecord(value) || !onlyKnownKeys(value, KEYS.provenance)) return BAD;
  const basis = value["basis"];
  if (typeof basis !== "string") return BAD;
  const source = optString(value["source"]);
  if (source === BAD) return BAD;
  return sharedProvenance(basis, source, source !== undefined || "source" in value);
}

/**
 * Provenance repeats across facts: one shared (frozen) object per distinct shape and value. Also
 * used when a fact is read back from an internal topic (src/codec/fact-layout.ts), so a
 * fact held by the engine is the same whichever way it arrived. `hasSource` keeps zod's rule: a
 * `source` key that was present as null stays present, as undefined.
 */
export function sharedProvenance(basis: string, source: string | undefined, hasSource = source !== undefined): Rec {
  const key = JSON.stringify([basis, hasSource ? (source ?? null) : 0]);
  const known = provenances.get(key);
  if (known !== undefined) return known;
  const out: Rec = { basis: intern(basis) };
  if (hasSource) out["source"] = source === undefined ? undefined : intern(source);
  if (provenances.size < INTERNED_MAX) provenances.set(key, Object.freeze(out));
  return out;
}
