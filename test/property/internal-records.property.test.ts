import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FACT_TYPES, MEASURE_FIELDS } from "../../src/contract/fact-schema.ts";
import { isAgentEvent, type Fact } from "../../src/contract/facts.ts";
import { parseFact, parseNormalizedFact } from "../../src/contract/parse-fact.ts";
import { decodeAgentEvent, encodeAgentEvent } from "../../src/kafka/serde/agent-events-record.ts";
import { InternalRecordError } from "../../src/codec/binary-form.ts";
import { decodeEngineFact, encodeEngineFact, readEngineFact } from "../../src/kafka/serde/engine-facts-record.ts";
import { factOf } from "../support/fact-records.ts";

/**
 * The internal topics' binary form is trusted on read, so it must be exact: for every fact the
 * contract accepts (the contract's own random records, test/support/fact-records.ts), decoding
 * the encoding gives back the very fact ingest validated — the same values (−0, 2^53 − 1, any
 * Unicode including unpaired surrogates), the same keys in the same order, absent optionals
 * absent, invalid_measures as carried — and the engine-facts key (compaction's identity of a
 * fact version) is unchanged. The engine also sees exactly what the JSON form used to give it.
 */

const RUNS_PER_TYPE = 1_500;

/** The fact as the wire can hold it: keys whose value is undefined are the same as absent. */
function withoutUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefined);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) if (inner !== undefined) out[key] = withoutUndefined(inner);
  return out;
}

/** Every key path in order, so key order is compared at every depth. */
function keyPaths(value: unknown, prefix = ""): string[] {
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    inner === undefined ? [] : [`${prefix}${key}`, ...keyPaths(inner, `${prefix}${key}.`)],
  );
}

const source = fc.record({
  topic: fc.string({ minLength: 1, maxLength: 40, unit: "grapheme" }),
  partition: fc.nat({ max: 10_000 }),
  offset: fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String),
});

function expectExact(decoded: Fact, fact: Fact): void {
  expect(decoded).toStrictEqual(withoutUndefined(fact));
  expect(keyPaths(decoded)).toEqual(keyPaths(fact));
  expect(JSON.stringify(decoded)).toBe(JSON.stringify(fact));
}

describe(
  "internal records: decode ∘ encode is the identity on every accepted fact (property)",
  { timeout: 300_000 },
  () => {
    it.each(FACT_TYPES)("%s", (type) => {
      const tally = { accepted: 0, withInvalidMeasures: 0 };
      fc.assert(
        fc.property(factOf(type), source, (record, coordinates) => {
          const parsed = parseFact(record);
          if (!parsed.ok) return;
          tally.accepted++;
          const fact = parsed.fact;
          if ("invalid_measures" in fact && fact.invalid_measures !== undefined) tally.withInvalidMeasures++;
          if (isAgentEvent(fact)) {
            expectExact(decodeAgentEvent(encodeAgentEvent(fact)), fact);
            return;
          }
          const encoded = encodeEngineFact(fact, coordinates);
          const decoded = decodeEngineFact(encoded.value);
          if (decoded === undefined) throw new Error(`not decoded: ${JSON.stringify(readEngineFact(encoded.value))}`);
          expectExact(decoded.fact, fact);
          expect(decoded.source).toStrictEqual({ ...coordinates });
          // The key depends only on the fact version: re-encoding what was read gives the same key.
          expect(encodeEngineFact(decoded.fact, { topic: "elsewhere", partition: 0, offset: "0" }).key).toBe(
            encoded.key,
          );
          // What the engine used to get from the JSON form, parsed and validated again.
          const before = parseNormalizedFact(JSON.parse(JSON.stringify(fact)) as unknown);
          if (!before.ok) throw new Error(`the JSON form did not re-validate: ${before.rejection.detail}`);
          expect(JSON.stringify(decoded.fact)).toBe(JSON.stringify(before.fact));
          expect(keyPaths(decoded.fact)).toEqual(keyPaths(before.fact));
        }),
        { numRuns: RUNS_PER_TYPE },
      );
      expect(tally.accepted).toBeGreaterThan(RUNS_PER_TYPE / 10);
      if (MEASURE_FIELDS[type] !== undefined) expect(tally.withInvalidMeasures).toBeGreaterThan(0);
    });
  },
);

describe("internal records: unreadable bytes are reported, never thrown past the reader (property)", () => {
  it("any bytes after an agent-event header: an agent event or InternalRecordError", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (tail) => {
        const bytes = Buffer.concat([Buffer.from([0xae, 1]), tail]);
        try {
          decodeAgentEvent(bytes);
        } catch (error) {
          expect(error).toBeInstanceOf(InternalRecordError);
        }
      }),
      { numRuns: 5_000 },
    );
  });

  it("any bytes after an engine-facts header: a reading or a reason", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (tail) => {
        const reading = readEngineFact(Buffer.concat([Buffer.from([0xef, 1]), tail]));
        if (!reading.ok) expect(reading.detail).not.toBe("");
      }),
      { numRuns: 5_000 },
    );
  });

  it("every strict prefix of a valid record is refused, with a reason", () => {
    fc.assert(
      fc.property(factOf("sandbox_event"), (record) => {
        const parsed = parseFact(record);
        if (!parsed.ok || !isAgentEvent(parsed.fact)) return;
        const bytes = encodeAgentEvent(parsed.fact);
        for (let length = 0; length < bytes.length; length++)
          expect(() => decodeAgentEvent(bytes.subarray(0, length))).toThrow(InternalRecordError);
      }),
      { numRuns: 300 },
    );
  });
});
