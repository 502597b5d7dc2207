import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FACT_TYPES } from "../../src/contract/fact-schema.ts";
import { fastParseFact } from "../../src/contract/fast-parse.ts";
import { parseFactWithSchemas } from "../../src/contract/parse-fact.ts";
import { factOf } from "../support/fact-records.ts";

/**
 * The validation fast path against zod, on random records of every type (test/support/fact-records.ts:
 * each field valid, absent, null, present-but-undefined or invalid, shuffled keys, mutated
 * envelopes). Whenever zod rejects, the fast path must decline; whenever zod accepts, the fast
 * path must decline or build the very same fact (JSON bytes, key order including undefined-valued
 * keys, deep values) — and in practice it must take every record zod accepts.
 */

const RUNS_PER_TYPE = 1_500;

/** zod alone (the contract's definition), as parseFact was before the fast path. */
const zodParse = parseFactWithSchemas;

/** The comparison: undefined = agreement, otherwise what differs. */
function disagreement(
  record: unknown,
  tally: { zodAccepted: number; fastAccepted: number; rejected: number; withInvalidMeasures: number },
): string | undefined {
  const zod = zodParse(record);
  const fast = fastParseFact(record);
  if (!zod.ok) {
    tally.rejected++;
    return fast === undefined ? undefined : `zod rejects but the fast path accepted: ${JSON.stringify(fast)}`;
  }
  // Revision 2: a record with invalid measures is accepted by zod alone (the fast path leaves it to zod).
  if (zod.invalidMeasures.length > 0) {
    tally.withInvalidMeasures++;
    return fast === undefined
      ? undefined
      : `the fast path accepted a record with invalid measures: ${JSON.stringify(fast)}`;
  }
  tally.zodAccepted++;
  if (fast === undefined) return undefined;
  tally.fastAccepted++;
  if (JSON.stringify(fast) !== JSON.stringify(zod.fact))
    return `JSON differs:\n fast ${JSON.stringify(fast)}\n zod  ${JSON.stringify(zod.fact)}`;
  if (Object.keys(fast).join(",") !== Object.keys(zod.fact as object).join(","))
    return `keys differ: fast ${Object.keys(fast).join(",")} / zod ${Object.keys(zod.fact as object).join(",")}`;
  try {
    expect(fast).toStrictEqual(zod.fact);
  } catch (error) {
    return `values differ: ${String(error)}`;
  }
  return undefined;
}

// A property runs hundreds of engine evaluations: minutes on a loaded shared machine, not seconds.
describe("fastParseFact never disagrees with zod (property)", { timeout: 300_000 }, () => {
  it.each(FACT_TYPES)("%s: zod rejects ⇒ undefined; zod accepts ⇒ the same fact", (type) => {
    const tally = { zodAccepted: 0, fastAccepted: 0, rejected: 0, withInvalidMeasures: 0 };
    fc.assert(
      fc.property(factOf(type), (record) => {
        const problem = disagreement(record, tally);
        if (problem !== undefined) throw new Error(problem);
      }),
      { numRuns: RUNS_PER_TYPE },
    );
    // Both sides of the contract are exercised, and the fast path covers what zod accepts.
    expect(tally.zodAccepted).toBeGreaterThan(RUNS_PER_TYPE / 10);
    expect(tally.rejected).toBeGreaterThan(RUNS_PER_TYPE / 10);
    expect(tally.fastAccepted).toBe(tally.zodAccepted);
    if (
      type === "model_call" ||
      type === "cost" ||
      type === "delivery_summary" ||
      type === "packet" ||
      type === "task_snapshot"
    )
      expect(tally.withInvalidMeasures).toBeGreaterThan(0);
  });

  it("anything at all (not a fact): the fast path declines whenever zod does", () => {
    const tally = { zodAccepted: 0, fastAccepted: 0, rejected: 0, withInvalidMeasures: 0 };
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.dictionary(fc.constantFrom("contract", "type", "fact_id", "event_time", "tasks"), fc.anything()),
        ),
        (record) => {
          const problem = disagreement(record, tally);
          if (problem !== undefined) throw new Error(problem);
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
