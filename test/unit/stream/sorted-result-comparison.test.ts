import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { byUtf8 } from "../../../src/contract/code-point-order.ts";
import { compareSortedResults, LISTED_DIFFERENCES } from "../../../src/stream/audit/topic-results.ts";

const sorted = (entries: ReadonlyMap<string, string>): (readonly [string, string])[] =>
  [...entries.keys()].sort(byUtf8).map((key) => [key, entries.get(key) as string] as const);

const digest = (entries: ReadonlyMap<string, string>): string => {
  const hash = createHash("sha256");
  for (const [key, value] of sorted(entries)) hash.update(`${key}\n${value}\n`);
  return `sha256:${hash.digest("hex")}`;
};

describe("the audit's one-pass comparison of two sorted result sets", () => {
  it("gives each side's digest and count, and exactly the keys that differ or only one side has", () => {
    const key = fc.string({ unit: fc.constantFrom("a", "b", "\u00e9", "\u{1f600}", "\u0000"), maxLength: 4 });
    const value = fc.constantFrom("1", "2", "3");
    fc.assert(
      fc.property(fc.dictionary(key, value), fc.dictionary(key, value), (left, right) => {
        const expected = new Map(Object.entries(left));
        const actual = new Map(Object.entries(right));
        const comparison = compareSortedResults(sorted(expected), sorted(actual));
        expect(comparison.expectedDigest).toBe(digest(expected));
        expect(comparison.actualDigest).toBe(digest(actual));
        expect([comparison.expectedCount, comparison.actualCount]).toEqual([expected.size, actual.size]);
        const differing = [...new Set([...expected.keys(), ...actual.keys()])]
          .filter((k) => expected.get(k) !== actual.get(k))
          .sort(byUtf8)
          .map((k) => ({ key: k, expected: expected.has(k), actual: actual.has(k) }));
        expect(comparison.differingKeys).toEqual(differing);
        expect(comparison.differingCount).toBe(differing.length);
      }),
      { numRuns: 500 },
    );
  });

  it("counts every difference but lists only the first ones", () => {
    const keys = Array.from({ length: LISTED_DIFFERENCES + 10 }, (_, index) => `k${String(index).padStart(6, "0")}`);
    const comparison = compareSortedResults(
      keys.map((k) => [k, "x"] as const),
      [],
    );
    expect(comparison.differingCount).toBe(keys.length);
    expect(comparison.differingKeys).toHaveLength(LISTED_DIFFERENCES);
  });
});
