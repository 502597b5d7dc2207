import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FACT_TYPES, OBSERVATION_CONTRACT, type FactType } from "../../src/contract/fact-schema.ts";
import type { Fact } from "../../src/contract/facts.ts";
import { asReported, parseDecodedFact, parseFactJson, type ParseResult } from "../../src/contract/parse-fact.ts";
import { MAX_RAW_DEPTH, RAW_VALUES_FIELD, restoreRawValues } from "../../src/contract/raw-values.ts";
import { FactNotCarriableError, factToAvro } from "../../src/kafka/serde/fact-record.ts";
import { factSchema, loadSchemas } from "../../src/kafka/serde/schemas.ts";
import { plainData } from "../../src/kafka/serde/wire-decoder.ts";
import { factOf } from "../support/fact-records.ts";

/**
 * Every fact the JSON form accepts travels in Avro (issue #30): for the contract's own random
 * records (valid, absent, null, invalid measures, unpaired surrogates, malformed task entries),
 * a line the file replay accepts, encoded with the shipped schema and decoded, parses to the same
 * fact with the same invalid measures, and a line it rejects has no fact to send.
 */

const RUNS_PER_TYPE = 600;
const catalog = loadSchemas();

/** What the processors read from the Avro bytes of an accepted fact. */
function throughAvro(type: FactType, parsed: Extract<ParseResult, { ok: true }>): ParseResult {
  const schema = factSchema(catalog, type).type;
  const bytes = schema.toBuffer(factToAvro(reported(parsed.fact), schema));
  return parseDecodedFact(plainData(schema.fromBuffer(bytes)));
}

describe("a fact in Avro reads as the same line of the file", () => {
  for (const type of FACT_TYPES) {
    it(`${type}: same fact, same invalid measures`, () => {
      let accepted = 0;
      let carriedRaw = 0;
      fc.assert(
        fc.property(factOf(type), (record) => {
          const line = JSON.stringify(record);
          const parsed = parseFactJson(line);
          if (!parsed.ok || parsed.fact.type !== type) return;
          accepted += 1;
          const schema = factSchema(catalog, type).type;
          const shaped = factToAvro(reported(parsed.fact), schema);
          if (Object.keys(shaped[RAW_VALUES_FIELD] as object).length > 0) carriedRaw += 1;
          const decoded = throughAvro(type, parsed);
          expect(decoded.ok).toBe(true);
          if (!decoded.ok) return;
          expect(JSON.stringify(decoded.fact)).toBe(JSON.stringify(parsed.fact));
          expect(decoded.invalidMeasures).toEqual(parsed.invalidMeasures);
        }),
        { numRuns: RUNS_PER_TYPE },
      );
      // The property must have met accepted facts, and some that only raw_values can carry.
      expect(accepted).toBeGreaterThan(RUNS_PER_TYPE / 10);
      if (type !== "repair") expect(carriedRaw).toBeGreaterThan(0);
    });
  }
});

/** A fact in the shape the writer takes: as reported, a plain record. */
function reported(fact: Fact): Record<string, unknown> {
  return asReported(fact) as unknown as Record<string, unknown>;
}

describe("the user's cases (issue #30)", () => {
  const direct = { basis: "DIRECT_HOST" };
  const base = { contract: OBSERVATION_CONTRACT, event_time: "2026-10-01T10:00:00Z", provenance: direct };
  const money = { amount_minor: 5, currency: "USD", source: "HOST", cost_basis: "list", attribution: "PROJECT" };
  const cost = { ...base, type: "cost", ...money, estimated: false, fact_id: "c", cost_id: "c", delivery_id: "d1" };
  const call = { ...base, type: "model_call", fact_id: "m1", call_id: "m1", run_id: "r", operational: true };
  const packet = { ...base, type: "packet", fact_id: "p1", packet_id: "p1", governance_revision: "0.2" };
  const cases: Record<string, Record<string, unknown>> = {
    "a cost whose attribution is null": { ...cost, attribution: null },
    "a cost without amount_minor": { ...cost, amount_minor: undefined },
    "a cost of wrong types": { ...cost, amount_minor: "12", currency: 840, source: "VENDOR", estimated: "no" },
    "a packet whose repair_attribution is null": { ...packet, repair_attribution: null },
    "a call with 1.5 tokens and an unknown usage source": { ...call, input_tokens: 1.5, usage_source: "GUESS" },
    "a call whose provider is a number": { ...call, provider: 42 },
    "a cost whose amount is below -2^52 (avsc's exact long range)": { ...cost, amount_minor: -(2 ** 52) - 1 },
    "a snapshot task entry with an unknown key set to null": {
      ...base,
      type: "task_snapshot",
      fact_id: "s1",
      snapshot_id: "s1",
      cutoff: "2026-10-02T00:00:00Z",
      tasks: [{ "": null }, { task_id: "t1", members: ["d1"], role_template: "rt", template_assignment: "EVENT_TIME" }],
    },
  };
  for (const [name, record] of Object.entries(cases)) {
    it(`${name} is carried with its invalid measures`, () => {
      const parsed = parseFactJson(JSON.stringify(record));
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) return;
      expect(parsed.invalidMeasures.length).toBeGreaterThan(0);
      const decoded = throughAvro(parsed.fact.type, parsed);
      expect(decoded).toEqual(parsed);
    });
  }
});

describe("a fact without an Avro form", () => {
  it("is refused on write when a carried value nests deeper than the reader reads", () => {
    const deep = JSON.parse(`${"[".repeat(MAX_RAW_DEPTH + 1)}${"]".repeat(MAX_RAW_DEPTH + 1)}`) as unknown;
    const record = {
      ...{ contract: OBSERVATION_CONTRACT, fact_id: "f", event_time: "2026-10-01T10:00:00Z", provenance: null },
      ...{ type: "model_call", call_id: "c", run_id: "r", operational: true, span_duration_ms: deep },
    };
    const parsed = parseFactJson(JSON.stringify(record));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const schema = factSchema(catalog, "model_call").type;
    expect(() => factToAvro(reported(parsed.fact), schema)).toThrow(FactNotCarriableError);
    const shallow = { ...parsed.fact, invalid_measures: { span_duration_ms: "[[1]]" } };
    expect(factToAvro(reported(shallow), schema)[RAW_VALUES_FIELD]).toEqual({ span_duration_ms: "[[1]]" });
  });
});

describe("raw_values on read", () => {
  it("refuses an entry that is not JSON, or nests too deep, naming the field", () => {
    const notJson = restoreRawValues({ fact_id: "x", raw_values: { amount_minor: "{" } });
    expect(notJson).toMatchObject({ ok: false, detail: expect.stringContaining("raw_values.amount_minor") as unknown });
    const nested = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
    const tooDeep = nested(MAX_RAW_DEPTH + 1);
    expect(restoreRawValues({ fact_id: "x", raw_values: { tasks: tooDeep } })).toMatchObject({ ok: false });
    expect(restoreRawValues({ fact_id: "x", raw_values: { tasks: nested(MAX_RAW_DEPTH) } })).toMatchObject({
      ok: true,
    });
    const rejected = parseDecodedFact({ fact_id: "x", raw_values: { amount_minor: "nope" } });
    expect(rejected).toMatchObject({ ok: false, rejection: { reason: "UNDECODABLE_BYTES", field: RAW_VALUES_FIELD } });
  });

  it("puts __proto__ back as an own field (then an unknown field), never as the prototype", () => {
    const restored = restoreRawValues({ fact_id: "x", raw_values: { ["__proto__"]: '{"polluted":true}' } });
    expect(restored.ok).toBe(true);
    if (!restored.ok) return;
    const record = restored.record as Record<string, unknown>;
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(Object.keys(record)).toContain("__proto__");
  });
});
