import fc from "fast-check";
import { FACT_TYPES, OBSERVATION_CONTRACT, type FactType } from "../../src/contract/fact-schema.ts";

/**
 * Random records of every fact type, as a producer might send them: each field drawn valid,
 * absent, null, present-but-undefined or invalid (wrong type, out of range, bad enum, bad
 * currency, bad timestamp...), in a shuffled key order, sometimes with unknown fields or a
 * mutated envelope (contract, type, a field replaced by anything). Values reach the contract's
 * edges: counts up to 2^53 − 1, −0, instants from year 0 to 9891, strings of any Unicode
 * including astral characters and unpaired surrogates. The contract's own property tests use it
 * (test/property/fast-parse.property.test.ts), and so does everything that must hold for every
 * fact the contract accepts (test/property/internal-records.property.test.ts).
 */

/** A string's characters: mostly ASCII, some of any Unicode (astral too). */
const character = fc.oneof(
  { arbitrary: fc.string({ minLength: 1, maxLength: 1, unit: "grapheme-ascii" }), weight: 12 },
  { arbitrary: fc.string({ minLength: 1, maxLength: 1, unit: "grapheme" }), weight: 3 },
  { arbitrary: fc.string({ minLength: 1, maxLength: 1, unit: "binary" }), weight: 1 },
);
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));
/**
 * One string in 40 may hold an unpaired surrogate (the whole record is then rejected as
 * ILL_FORMED_UNICODE), so most records still reach the rules behind that check.
 */
const anyString = (constraints: { minLength?: number; maxLength?: number }): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: fc.string({ ...constraints, unit: character }), weight: 39 },
    { arbitrary: fc.string({ ...constraints, unit: fc.oneof(character, loneSurrogate) }), weight: 1 },
  );

// ---- field values: [valid, invalid] ----

interface FieldKind {
  readonly valid: fc.Arbitrary<unknown>;
  readonly invalid: fc.Arbitrary<unknown>;
}

const wrongType = fc.constantFrom<unknown>(true, 1, 0, -1, 1.5, Number.NaN, [], {}, "x", ["x"]);
const kind = (valid: fc.Arbitrary<unknown>, invalid: fc.Arbitrary<unknown>): FieldKind => ({
  valid,
  invalid: fc.oneof(invalid, wrongType),
});

const identifier = kind(
  fc.oneof(
    { arbitrary: fc.constantFrom("a", "b", "c", "x".repeat(256)), weight: 1 },
    { arbitrary: anyString({ minLength: 1, maxLength: 10 }), weight: 3 },
  ),
  fc.constantFrom("", " ", "\u3000\t", "x".repeat(257), 7),
);
const text = kind(anyString({ maxLength: 12 }), fc.constantFrom(42, false, { s: "x" }));
const nonEmpty = kind(anyString({ minLength: 1, maxLength: 12 }), fc.constantFrom("", " ", "\u00a0\n"));
const bool = kind(fc.boolean(), fc.constantFrom("true", 0, 1, "false"));
const count = kind(
  fc.oneof(fc.nat(), fc.constantFrom(0, -0, Number.MAX_SAFE_INTEGER)),
  fc.constantFrom(
    -1,
    1.5,
    2 ** 53,
    Number.MAX_SAFE_INTEGER + 2,
    Number.POSITIVE_INFINITY,
    Number.NaN,
    "3",
    -Number.MAX_SAFE_INTEGER,
  ),
);
const duration = kind(
  fc.oneof(fc.double({ min: 0, max: 1e9, noNaN: true }), fc.constantFrom(0, -0, 1e308)),
  fc.constantFrom(-1, -0.001, Number.POSITIVE_INFINITY, Number.NaN, "12.5"),
);
const integer = kind(
  fc.oneof(fc.integer(), fc.constantFrom(-0, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)),
  fc.constantFrom(0.5, 2 ** 53, -(2 ** 53), Number.NEGATIVE_INFINITY, "0"),
);
const oneOf = (values: readonly string[], invalid: readonly unknown[]) =>
  kind(fc.constantFrom(...values), fc.constantFrom(...invalid, ...values.map((value) => value.toLowerCase()), ""));

const instant = fc.integer({ min: -62_000_000_000_000, max: 250_000_000_000_000 });
const timestamp = kind(
  fc.oneof(
    instant.map((millis) => new Date(millis).toISOString()),
    instant.map((millis) => new Date(millis)),
    fc.constantFrom(
      "2026-10-01T10:00:00Z",
      "2026-10-01T10:00Z",
      "2026-10-01T10:00:00.1+02:00",
      "2026-10-01T10:00:00.123456789-05:30",
      "2024-02-29T00:00:00Z",
      "2026-10-01T23:59:59.999Z",
      "0000-01-01T00:00:00Z",
    ),
  ),
  // Revision 2: a number is not a timestamp in JSON, and a rolled-over date is no date.
  fc.oneof(
    fc.constantFrom(
      "2026-10-01T10:00:00",
      "2026-10-01",
      "yesterday",
      "2026-13-01T00:00:00Z",
      "2026-10-01T10:00:00+0200",
      " 2026-10-01T10:00:00Z",
      1.5,
      2 ** 53,
      Number.NaN,
      new Date(Number.NaN),
      null,
    ),
    fc.constantFrom(
      "2026-02-30T00:00:00Z",
      "2026-11-31T00:00:00Z",
      "2026-10-01T24:00:00Z",
      "2026-10-01T10:00:60Z",
      "2026-10-01T10:00:00+24:00",
      -1,
      0,
    ),
    instant,
    anyString({ maxLength: 25 }),
  ),
);
const currency = kind(
  fc.constantFrom("USD", "EUR", "JPY", "GBP", "CHF", "XAU", "XXX"),
  fc.constantFrom("usd", "ABC", "US", "USDX", "ZZZ", "EU R", 840),
);
const provenance = kind(
  fc.record(
    {
      basis: fc.oneof(
        fc.constantFrom("DIRECT_HOST", "DIRECT_PROVIDER", "DERIVED", "ESTIMATED", "MANUAL", "HEARSAY", ""),
        anyString({ maxLength: 6 }),
      ),
      source: fc.constantFrom<unknown>("host", "", null, undefined),
    },
    { requiredKeys: ["basis"] },
  ),
  fc.constantFrom<unknown>(
    { source: "x" },
    { basis: 1 },
    { basis: null },
    { basis: "DIRECT_HOST", via: "x" },
    { basis: "DIRECT_HOST", source: 3 },
    "DIRECT_HOST",
    [],
  ),
);
const stringList = kind(
  fc.array(anyString({ maxLength: 6 }), { maxLength: 4 }),
  fc.constantFrom<unknown>("ls -la", ["ls", 1], [null], { 0: "ls" }),
);
const idList = kind(
  fc.array(fc.constantFrom("d1", "d2", "dlv-0-1-0"), { maxLength: 3 }),
  fc.constantFrom<unknown>("d1", [""], ["d1", 2], [null]),
);

/** A field of a record: how often each form is drawn. */
type Presence = "valid" | "absent" | "null" | "undefined" | "invalid";
interface Field {
  readonly key: string;
  readonly kind: FieldKind;
  readonly required: boolean;
}
const req = (key: string, fieldKind: FieldKind): Field => ({ key, kind: fieldKind, required: true });
const opt = (key: string, fieldKind: FieldKind): Field => ({ key, kind: fieldKind, required: false });

function presence(required: boolean): fc.Arbitrary<Presence> {
  return required
    ? fc.oneof(
        { arbitrary: fc.constant<Presence>("valid"), weight: 40 },
        { arbitrary: fc.constantFrom<Presence>("absent", "null", "undefined", "invalid"), weight: 2 },
      )
    : fc.oneof(
        { arbitrary: fc.constant<Presence>("valid"), weight: 10 },
        { arbitrary: fc.constantFrom<Presence>("absent", "absent", "null", "undefined"), weight: 6 },
        { arbitrary: fc.constant<Presence>("invalid"), weight: 1 },
      );
}

/** A record's fields as key/value pairs (absent fields left out), in a shuffled order. */
function recordOf(fields: readonly Field[]): fc.Arbitrary<Record<string, unknown>> {
  const entries = fields.map((field) =>
    presence(field.required).chain((form): fc.Arbitrary<[string, unknown] | undefined> => {
      switch (form) {
        case "absent":
          return fc.constant(undefined);
        case "null":
          return fc.constant([field.key, null]);
        case "undefined":
          return fc.constant([field.key, undefined]);
        case "valid":
          return field.kind.valid.map((value) => [field.key, value]);
        case "invalid":
          return field.kind.invalid.map((value) => [field.key, value]);
      }
    }),
  );
  return fc
    .tuple(...entries)
    .map((pairs) => pairs.filter((pair): pair is [string, unknown] => pair !== undefined))
    .chain((pairs) => fc.shuffledSubarray(pairs, { minLength: pairs.length, maxLength: pairs.length }))
    .map((pairs) => Object.fromEntries(pairs));
}

const envelopeFields: readonly Field[] = [
  req("fact_id", identifier),
  req("event_time", timestamp),
  opt("provenance", provenance),
];

const task = recordOf([
  opt("task_id", kind(fc.constantFrom("t1", "t2", "t3"), fc.constantFrom("", " ", 3))),
  opt("members", idList),
  opt("role_template", nonEmpty),
  opt("template_assignment", oneOf(["EVENT_TIME", "BACKFILLED"], ["LATER"])),
]);
const tasks = kind(
  fc.array(
    fc.oneof(
      { arbitrary: task, weight: 8 },
      { arbitrary: task.map((value) => ({ ...value, owner: "me" })), weight: 1 },
    ),
    { maxLength: 4 },
  ),
  fc.constantFrom<unknown>({}, "t1", [null], [["t1"]]),
);

const typeFields: Record<FactType, readonly Field[]> = {
  model_call: [
    req("call_id", identifier),
    req("run_id", identifier),
    opt("delivery_id", identifier),
    opt("task_id", identifier),
    req("operational", bool),
    opt("provider", text),
    opt("model", text),
    opt("role", text),
    opt("runtime", text),
    opt("span_duration_ms", duration),
    opt("input_tokens", count),
    opt("output_tokens", count),
    opt("usage_source", oneOf(["PROVIDER", "HOST", "NONE"], ["GUESS"])),
  ],
  cost: [
    req("cost_id", identifier),
    // cost link 0/1/2: both optional, drawn independently (and the superRefine decides).
    opt("call_id", identifier),
    opt("delivery_id", identifier),
    req("amount_minor", count),
    req("currency", currency),
    req("source", oneOf(["PROVIDER", "HOST", "ESTIMATE"], ["VENDOR"])),
    req("cost_basis", nonEmpty),
    req("attribution", oneOf(["PROJECT", "SHARED", "UNATTRIBUTED"], ["TEAM"])),
    req("estimated", bool),
  ],
  delivery_summary: [
    req("delivery_id", identifier),
    opt("task_id", identifier),
    opt("run_id", identifier),
    // OPEN/TERMINAL with and without outcome: drawn independently.
    req("status", oneOf(["OPEN", "TERMINAL"], ["DONE"])),
    opt("outcome", oneOf(["SUCCEEDED", "FAILED", "CANCELLED", "INFRASTRUCTURE_FAILURE"], ["PARTIAL"])),
    req("requirement_changed", bool),
    opt("elapsed_ms", count),
    opt("stage_reached", nonEmpty),
  ],
  packet: [
    req("packet_id", identifier),
    opt("task_id", identifier),
    req("governance_revision", kind(fc.constantFrom("0.2", "0.3", "1"), fc.constant(""))),
    req("repair_attribution", oneOf(["AVAILABLE", "UNAVAILABLE"], ["MAYBE"])),
  ],
  repair: [
    req("repair_id", identifier),
    req("finding_id", identifier),
    opt("packet_id", identifier),
    opt("task_id", identifier),
    opt("delivery_id", identifier),
    req("attributable", bool),
  ],
  task_snapshot: [req("snapshot_id", identifier), req("cutoff", timestamp), req("tasks", tasks)],
  agent_step: [
    req("run_id", identifier),
    req("seq", count),
    opt("actor", text),
    req("kind", oneOf(["tool_call", "message", "plan"], ["thought"])),
    opt("tool", text),
    opt("input", text),
    opt("observation_digest", text),
    opt("status", oneOf(["ok", "error"], ["fine"])),
    opt("input_tokens", count),
    opt("output_tokens", count),
  ],
  sandbox_event: [
    req("run_id", identifier),
    req("seq", count),
    req("kind", oneOf(["exec", "file_read", "file_write", "file_delete", "network", "git", "sql"], ["reboot"])),
    opt("command", text),
    opt("argv", stringList),
    opt("path", text),
    opt("cwd", text),
    opt("workspace_root", text),
    opt("target", text),
    opt("exit_code", integer),
  ],
};

/** Whole-record mutations: most records are left alone. */
type Mutation =
  | { readonly kind: "none" }
  | { readonly kind: "extra"; readonly key: string; readonly value: unknown }
  | { readonly kind: "contract"; readonly value: unknown }
  | { readonly kind: "type"; readonly value: unknown }
  | { readonly kind: "replace"; readonly value: unknown; readonly index: number }
  | { readonly kind: "delete"; readonly index: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.constant<Mutation>({ kind: "none" }), weight: 30 },
  {
    arbitrary: fc.record({
      kind: fc.constant("extra" as const),
      key: fc.constantFrom("colour", "extra", "__proto__", "toString", "Type", "fact_id "),
      value: fc.constantFrom<unknown>(1, null, undefined, "x"),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("contract" as const),
      value: fc.constantFrom<unknown>("agentops.observation@0.9.0", undefined, null, "agentops.observation@1.0.0 "),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("type" as const),
      value: fc.constantFrom<unknown>(...FACT_TYPES, "invoice", undefined),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant("replace" as const), value: fc.anything(), index: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("delete" as const), index: fc.nat() }), weight: 1 },
);

function mutate(record: Record<string, unknown>, change: Mutation): Record<string, unknown> {
  const keys = Object.keys(record);
  switch (change.kind) {
    case "none":
      return record;
    case "extra":
      // defineProperty, so that "__proto__" becomes an own key as JSON.parse makes it.
      return Object.defineProperty({ ...record }, change.key, {
        value: change.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    case "contract":
      return { ...record, contract: change.value };
    case "type":
      return { ...record, type: change.value };
    case "replace": {
      const key = keys[change.index % keys.length] ?? "fact_id";
      return { ...record, [key]: change.value };
    }
    case "delete": {
      const copy = { ...record };
      delete copy[keys[change.index % keys.length] ?? "fact_id"];
      return copy;
    }
  }
}

export function factOf(type: FactType): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .tuple(recordOf([...envelopeFields, ...typeFields[type]]), mutation)
    .map(([fields, change]) => mutate({ contract: OBSERVATION_CONTRACT, type, ...fields }, change));
}
