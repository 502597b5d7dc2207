import { expect } from "vitest";
import type { Explanation } from "../../src/lineage/explanation.ts";
import { FORMULA_SHAPES } from "../../src/metrics/metric-formula.ts";

/**
 * Checks that an explanation's units add up to the figures published under its group: coverage,
 * exclusions and eligible units of every record, and, where measures are published, the numerator,
 * categories, denominator, sum and contributing count (money: per exact slice).
 */
export function expectUnitsAddUp(explanation: Explanation): void {
  const { totals, results } = explanation;
  expect(results.length).toBeGreaterThan(0);
  const shape = FORMULA_SHAPES[explanation.metric_id];
  for (const { result } of results) {
    expect(result.coverage.numerator).toBe(totals.covered);
    expect(result.coverage.denominator).toBe(totals.candidates);
    expect(result.exclusions).toEqual(totals.exclusions);
  }
  if (shape === "money") {
    if (totals.money.length === 0) {
      expect(results).toHaveLength(1);
      expect(results[0]?.result.eligible_units).toBe(0);
      return;
    }
    const sliceKey = (slice: {
      currency?: string | undefined;
      source?: string | undefined;
      cost_basis?: string | undefined;
    }): string => JSON.stringify([slice.currency, slice.source, slice.cost_basis]);
    const published = new Map(results.map(({ result }) => [sliceKey(result.cohort), result]));
    expect([...published.keys()].sort()).toEqual(totals.money.map(sliceKey).sort());
    for (const slice of totals.money) {
      const result = published.get(sliceKey(slice));
      expect(result?.eligible_units).toBe(slice.units);
      if (result?.measures === null || result?.measures === undefined) continue;
      expect(String(result.measures.sum)).toBe(slice.amount_minor);
      expect(result.measures.contributing).toBe(slice.units);
    }
    return;
  }
  expect(results).toHaveLength(1);
  const result = results[0]?.result;
  if (result === undefined) return;
  expect(result.eligible_units).toBe(totals.eligible);
  const measures = result.measures;
  if (measures === null) return;
  switch (shape) {
    case "ratio":
      expect(measures.numerator).toBe(totals.hits);
      expect(measures.denominator).toBe(totals.eligible);
      return;
    case "per-category":
      expect(measures.categories).toEqual(totals.categories);
      expect(measures.denominator).toBe(totals.eligible);
      return;
    case "mean-duration":
      expect(measures.sum).toBe(Number(totals.amount) / 1000);
      expect(measures.contributing).toBe(totals.eligible);
      return;
    case "sum":
      expect(String(measures.sum)).toBe(totals.amount);
      expect(measures.contributing).toBe(totals.eligible);
      return;
  }
}
