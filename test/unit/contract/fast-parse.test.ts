import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FACT_TYPES, OBSERVATION_CONTRACT, factSchemas, type FactType } from "../../../src/contract/fact-schema.ts";
import { fastParseFact } from "../../../src/contract/fast-parse.ts";
import { parseFact, parseFactWithSchemas } from "../../../src/contract/parse-fact.ts";

/**
 * The validation fast path against zod (the contract's definition): on the shipped sample and on
 * hand-picked edge cases, fastParseFact either declines (undefined) or builds exactly zod's fact —
 * the same keys (null optionals kept as undefined, absent ones left out), in the same order, with
 * the same values. The random side is test/property/fast-parse.property.test.ts.
 */

/** zod alone (the contract's definition), as parseFact was before the fast path. */
const zodParse = parseFactWithSchemas;

/** Same fact in every observable way: JSON bytes (key order), own keys in order (incl. undefined-valued ones), deep values. */
function expectSameFact(fast: unknown, zod: unknown): void {
  expect(JSON.stringify(fast)).toBe(JSON.stringify(zod));
  expect(Object.keys(fast as object)).toEqual(Object.keys(zod as object));
  expect(fast).toStrictEqual(zod);
}

function expectAgreement(record: unknown): void {
  const zod = zodParse(record);
  const fast = fastParseFact(record);
  if (!zod.ok) expect(fast).toBeUndefined();
  else if (fast !== undefined) expectSameFact(fast, zod.fact);
}

const envelope = (type: string) => ({
  contract: OBSERVATION_CONTRACT,
  type,
  fact_id: `f-${type}`,
  event_time: "2026-10-01T10:00:00Z",
  provenance: { basis: "DIRECT_HOST", source: "host" },
});

/** One record per type with every optional field present. */
const full: Record<FactType, Record<string, unknown>> = {
  model_call: {
    ...envelope("model_call"),
    call_id: "c1",
    run_id: "r1",
    delivery_id: "d1",
    task_id: "t1",
    operational: true,
    provider: "p",
    model: "m",
    role: "writer",
    runtime: "rt",
    span_duration_ms: 12.5,
    input_tokens: 10,
    output_tokens: 2,
    usage_source: "PROVIDER",
  },
  cost: {
    ...envelope("cost"),
    cost_id: "k1",
    call_id: "c1",
    amount_minor: 120,
    currency: "USD",
    source: "PROVIDER",
    cost_basis: "list",
    attribution: "PROJECT",
    estimated: false,
  },
  delivery_summary: {
    ...envelope("delivery_summary"),
    delivery_id: "d1",
    task_id: "t1",
    run_id: "r1",
    status: "TERMINAL",
    outcome: "SUCCEEDED",
    requirement_changed: false,
    elapsed_ms: 1000,
    stage_reached: "merge",
  },
  packet: {
    ...envelope("packet"),
    packet_id: "p1",
    task_id: "t1",
    governance_revision: "0.2",
    repair_attribution: "AVAILABLE",
  },
  repair: {
    ...envelope("repair"),
    repair_id: "rp1",
    finding_id: "fd1",
    packet_id: "p1",
    task_id: "t1",
    delivery_id: "d1",
    attributable: true,
  },
  task_snapshot: {
    ...envelope("task_snapshot"),
    snapshot_id: "s1",
    cutoff: "2026-10-02T00:00:00Z",
    tasks: [{ task_id: "t1", members: ["d1"], role_template: "tpl", template_assignment: "EVENT_TIME" }, {}],
  },
  agent_step: {
    ...envelope("agent_step"),
    run_id: "r1",
    seq: 0,
    actor: "a",
    kind: "tool_call",
    tool: "bash",
    input: "{}",
    observation_digest: "sha256:00",
    status: "ok",
    input_tokens: 1,
    output_tokens: 2,
  },
  sandbox_event: {
    ...envelope("sandbox_event"),
    run_id: "r1",
    seq: 1,
    kind: "exec",
    command: "ls -la",
    argv: ["ls", "-la"],
    path: "/w/a",
    cwd: "/w",
    workspace_root: "/w",
    target: "h",
    exit_code: -1,
  },
};

/** Required fields of a type: the shape keys whose schema rejects undefined. */
function requiredKeys(type: FactType): string[] {
  const shape = factSchemas[type].shape as Record<string, { safeParse(value: unknown): { success: boolean } }>;
  return Object.keys(shape).filter((key) => !shape[key]?.safeParse(undefined).success);
}

/** ["d1"] with a hole before it: [<empty>, "d1"]. */
function sparseMembers(): string[] {
  const members: string[] = [];
  members[1] = "d1";
  return members;
}

function without(record: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const copy = { ...record };
  for (const key of keys) delete copy[key];
  return copy;
}

describe("fastParseFact on samples/facts.ndjson", () => {
  const lines = readFileSync(new URL("../../../samples/facts.ndjson", import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.length > 0);

  it("agrees with zod on every line and takes ≥ 99% of the valid records", () => {
    let valid = 0;
    let fastHits = 0;
    let invalid = 0;
    for (const line of lines) {
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        continue;
      }
      const zod = zodParse(record);
      const fast = fastParseFact(record);
      if (!zod.ok) {
        invalid++;
        expect(fast, line).toBeUndefined();
        continue;
      }
      valid++;
      if (fast === undefined) continue;
      fastHits++;
      expect(JSON.stringify(fast), line).toBe(JSON.stringify(zod.fact));
      expect(fast, line).toStrictEqual(zod.fact);
    }
    expect(valid).toBeGreaterThan(7000);
    expect(invalid).toBeGreaterThan(0);
    expect(fastHits / valid).toBeGreaterThanOrEqual(0.99);
  });

  it("every record type of the sample takes the fast path", () => {
    const seen = new Set<string>();
    for (const line of lines) {
      try {
        const fact = fastParseFact(JSON.parse(line));
        if (fact !== undefined) seen.add(fact.type);
      } catch {
        // malformed line
      }
    }
    expect([...seen].sort()).toEqual([...FACT_TYPES].sort());
  });
});

describe("fastParseFact edge cases (each must agree with zod)", () => {
  it.each(FACT_TYPES)(
    "%s with every optional field present: fast path taken, same fact and key order as zod",
    (type) => {
      const fast = fastParseFact(full[type]);
      const zod = zodParse(full[type]);
      expect(zod.ok).toBe(true);
      expect(fast).toBeDefined();
      if (zod.ok) expectSameFact(fast, zod.fact);
      // Output keys follow the schema's shape, whatever the input order.
      expect(Object.keys(fast as object)).toEqual(
        Object.keys(factSchemas[type].shape).filter((key) => key in full[type]),
      );
      const reversed = Object.fromEntries(Object.entries(full[type]).reverse());
      expect(JSON.stringify(fastParseFact(reversed))).toBe(JSON.stringify(fast));
    },
  );

  it.each(FACT_TYPES)(
    "%s with optionals null, undefined-valued or absent: same keys as zod (null kept as an undefined key, absent left out)",
    (type) => {
      const required = new Set(requiredKeys(type));
      const optional = Object.keys(full[type]).filter((key) => !required.has(key) && key !== "provenance");
      const asNull = { ...full[type], ...Object.fromEntries(optional.map((key) => [key, null])), provenance: null };
      const asUndefined = {
        ...full[type],
        ...Object.fromEntries(optional.map((key) => [key, undefined])),
        provenance: undefined,
      };
      const absent = without(full[type], [...optional, "provenance"]);
      for (const record of [asNull, asUndefined, absent]) {
        const zod = zodParse(record);
        const fast = fastParseFact(record);
        // delivery_summary TERMINAL without outcome and cost without a link are rejected by both.
        // A packet without repair_attribution is accepted by zod with that measure reported invalid
        // (revision 2): the fast path leaves such records to zod.
        if (!zod.ok || zod.invalidMeasures.length > 0) expect(fast).toBeUndefined();
        else {
          expect(fast).toBeDefined();
          expectSameFact(fast, zod.fact);
        }
      }
    },
  );

  it.each(FACT_TYPES)("%s without each required field: declined", (type) => {
    for (const key of requiredKeys(type)) {
      expect(fastParseFact(without(full[type], [key])), key).toBeUndefined();
      expectAgreement(without(full[type], [key]));
    }
  });

  const edge: readonly [string, unknown][] = [
    ["not an object", [1, 2]],
    ["null", null],
    ["a string", "{}"],
    ["unsupported contract", { ...full.cost, contract: "agentops.observation@0.9.0" }],
    ["unknown type", { ...full.cost, type: "invoice" }],
    ["unknown field", { ...full.packet, colour: "blue" }],
    ["__proto__ as an own key", JSON.parse(`{"__proto__":{"x":1},${JSON.stringify(full.packet).slice(1)}`)],
    ["unknown field in provenance", { ...full.packet, provenance: { basis: "DIRECT_HOST", via: "x" } }],
    ["provenance without basis", { ...full.packet, provenance: { source: "x" } }],
    ["provenance as a string", { ...full.packet, provenance: "DIRECT_HOST" }],
    ["unknown provenance basis (accepted)", { ...full.packet, provenance: { basis: "HEARSAY", source: null } }],
    ["provenance with source null", { ...full.packet, provenance: { basis: "DIRECT_HOST", source: null } }],
    ["fact_id of 256 characters", { ...full.packet, fact_id: "x".repeat(256) }],
    ["fact_id of 257 characters", { ...full.packet, fact_id: "x".repeat(257) }],
    ["empty fact_id", { ...full.packet, fact_id: "" }],
    ["event_time without zone", { ...full.packet, event_time: "2026-10-01T10:00:00" }],
    ["event_time with offset and nanoseconds", { ...full.packet, event_time: "2026-10-01T10:00:00.123456789+02:00" }],
    ["event_time without seconds", { ...full.packet, event_time: "2026-10-01T10:00Z" }],
    ["event_time 24:00", { ...full.packet, event_time: "2026-10-01T24:00:00Z" }],
    ["event_time 30 February", { ...full.packet, event_time: "2026-02-30T00:00:00Z" }],
    ["event_time epoch ms", { ...full.packet, event_time: 1_790_848_800_000 }],
    ["event_time negative epoch ms", { ...full.packet, event_time: -1 }],
    ["event_time fractional", { ...full.packet, event_time: 1.5 }],
    ["event_time beyond safe integers", { ...full.packet, event_time: 2 ** 53 }],
    ["event_time NaN", { ...full.packet, event_time: Number.NaN }],
    ["event_time as Date", { ...full.packet, event_time: new Date(1_790_848_800_000) }],
    ["event_time as invalid Date", { ...full.packet, event_time: new Date(Number.NaN) }],
    ["event_time as boolean", { ...full.packet, event_time: true }],
    ["span_duration_ms 0", { ...full.model_call, span_duration_ms: 0 }],
    ["span_duration_ms -0", { ...full.model_call, span_duration_ms: -0 }],
    ["span_duration_ms Infinity", { ...full.model_call, span_duration_ms: Number.POSITIVE_INFINITY }],
    ["span_duration_ms -1", { ...full.model_call, span_duration_ms: -1 }],
    ["input_tokens MAX_SAFE_INTEGER", { ...full.model_call, input_tokens: Number.MAX_SAFE_INTEGER }],
    ["input_tokens 2^53", { ...full.model_call, input_tokens: 2 ** 53 }],
    ["input_tokens as string", { ...full.model_call, input_tokens: "10" }],
    ["usage_source lower case", { ...full.model_call, usage_source: "provider" }],
    ["operational as string", { ...full.model_call, operational: "true" }],
    ["cost with both links", { ...full.cost, delivery_id: "d1" }],
    ["cost with no link", without(full.cost, ["call_id"])],
    ["cost with call_id null and delivery_id", { ...full.cost, call_id: null, delivery_id: "d1" }],
    ["cost with call_id null only", { ...full.cost, call_id: null }],
    ["currency lower case", { ...full.cost, currency: "usd" }],
    ["currency made up", { ...full.cost, currency: "ABC" }],
    ["currency JPY", { ...full.cost, currency: "JPY" }],
    ["currency as number", { ...full.cost, currency: 840 }],
    ["empty cost_basis", { ...full.cost, cost_basis: "" }],
    ["amount_minor fractional", { ...full.cost, amount_minor: 1.25 }],
    ["OPEN without outcome", without({ ...full.delivery_summary, status: "OPEN" }, ["outcome"])],
    ["OPEN with outcome null", { ...full.delivery_summary, status: "OPEN", outcome: null }],
    ["OPEN with outcome", { ...full.delivery_summary, status: "OPEN" }],
    ["TERMINAL with outcome null", { ...full.delivery_summary, outcome: null }],
    ["outcome unknown", { ...full.delivery_summary, outcome: "PARTIAL" }],
    ["stage_reached empty", { ...full.delivery_summary, stage_reached: "" }],
    ["governance_revision 0.3 (accepted)", { ...full.packet, governance_revision: "0.3" }],
    ["duplicate task", { ...full.task_snapshot, tasks: [{ task_id: "t1" }, { task_id: "t1" }] }],
    ["two tasks without task_id", { ...full.task_snapshot, tasks: [{ members: [] }, { task_id: null }] }],
    ["no tasks", { ...full.task_snapshot, tasks: [] }],
    ["tasks not an array", { ...full.task_snapshot, tasks: {} }],
    ["task not an object", { ...full.task_snapshot, tasks: [null] }],
    ["task with unknown field", { ...full.task_snapshot, tasks: [{ task_id: "t1", owner: "me" }] }],
    ["member not an identifier", { ...full.task_snapshot, tasks: [{ task_id: "t1", members: [""] }] }],
    ["sparse members", { ...full.task_snapshot, tasks: [{ task_id: "t1", members: sparseMembers() }] }],
    [
      "template_assignment unknown",
      { ...full.task_snapshot, tasks: [{ task_id: "t1", template_assignment: "LATER" }] },
    ],
    ["cutoff invalid", { ...full.task_snapshot, cutoff: "soon" }],
    ["agent_step seq -1", { ...full.agent_step, seq: -1 }],
    ["agent_step kind unknown", { ...full.agent_step, kind: "thought" }],
    ["sandbox argv a string", { ...full.sandbox_event, argv: "ls -la" }],
    ["sandbox argv with a number", { ...full.sandbox_event, argv: ["ls", 1] }],
    ["sandbox argv empty", { ...full.sandbox_event, argv: [] }],
    ["sandbox exit_code fractional", { ...full.sandbox_event, exit_code: 0.5 }],
    ["sandbox exit_code negative", { ...full.sandbox_event, exit_code: -9 }],
  ];

  it.each(edge)("%s", (_name, record) => {
    expectAgreement(record);
  });

  it("accepted edge cases do take the fast path", () => {
    for (const [name, record] of edge) {
      const zod = zodParse(record);
      if (zod.ok && zod.invalidMeasures.length === 0) expect(fastParseFact(record), name).toBeDefined();
    }
  });

  it("arrays in the fact are fresh copies, as zod's are", () => {
    const fast = fastParseFact(full.sandbox_event) as { argv: string[] } | undefined;
    expect(fast?.argv).toEqual(full.sandbox_event["argv"]);
    expect(fast?.argv).not.toBe(full.sandbox_event["argv"]);
  });

  it("parseFact answers the fast path's fact for valid records and zod's rejection for invalid ones", () => {
    const accepted = parseFact(full.cost);
    expect(accepted.ok && JSON.stringify(accepted.fact)).toBe(JSON.stringify(fastParseFact(full.cost)));
    expect(parseFact({ ...full.cost, currency: "ABC" })).toMatchObject({
      ok: true,
      invalidMeasures: [{ reason: "INVALID_CURRENCY", field: "currency" }],
    });
    expect(parseFact({ ...full.cost, cost_id: "" })).toMatchObject({
      ok: false,
      rejection: { reason: "OUT_OF_RANGE", field: "cost_id" },
    });
  });
});
