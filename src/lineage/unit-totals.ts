import { byUtf8 } from "../contract/code-point-order.ts";
import type { ExplainedUnit, UnitTotals } from "./explanation.ts";

/** What a group's explained units add up to: the counts and sums its published records are made of. */
export function totalsOf(units: readonly ExplainedUnit[]): UnitTotals {
  let candidates = 0;
  let covered = 0;
  let eligible = 0;
  let hits = 0;
  let amount = 0n;
  const categories = new Map<string, number>();
  const exclusions = new Map<string, number>();
  const money = new Map<
    string,
    { currency: string; source: string; cost_basis: string; units: number; amount: bigint }
  >();
  for (const { contribution, reasons } of units) {
    if (contribution.candidate) candidates += 1;
    if (contribution.covered) covered += 1;
    if (contribution.eligible) eligible += 1;
    if (contribution.hit) hits += 1;
    amount += BigInt(contribution.amount);
    if (contribution.category !== null)
      categories.set(contribution.category, (categories.get(contribution.category) ?? 0) + 1);
    for (const [reason, count] of Object.entries(reasons))
      exclusions.set(reason, (exclusions.get(reason) ?? 0) + count);
    for (const share of contribution.money) {
      const key = JSON.stringify([share.currency, share.source, share.cost_basis]);
      const slice = money.get(key) ?? {
        currency: share.currency,
        source: share.source,
        cost_basis: share.cost_basis,
        units: 0,
        amount: 0n,
      };
      slice.units += 1;
      slice.amount += BigInt(share.amount_minor);
      money.set(key, slice);
    }
  }
  const sorted = (counts: Map<string, number>): Record<string, number> =>
    Object.fromEntries([...counts.entries()].filter(([, count]) => count !== 0).sort(([a], [b]) => byUtf8(a, b)));
  return {
    candidates,
    covered,
    eligible,
    hits,
    amount: amount.toString(),
    categories: sorted(categories),
    exclusions: sorted(exclusions),
    money: [...money.keys()].sort(byUtf8).map((key) => {
      const slice = money.get(key) as {
        currency: string;
        source: string;
        cost_basis: string;
        units: number;
        amount: bigint;
      };
      return {
        currency: slice.currency,
        source: slice.source,
        cost_basis: slice.cost_basis,
        units: slice.units,
        amount_minor: slice.amount.toString(),
      };
    }),
  };
}
