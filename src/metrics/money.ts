import type { Cost } from "../contract/facts.ts";
import type { MoneyShare } from "./contribution.ts";
import { evidenceBasis } from "./evidence-basis.ts";
import { addExact } from "./exact-sum.ts";
import { byUtf8 } from "../contract/code-point-order.ts";

/**
 * Contract §2 and revision 2 §1, §3: a cost is eligible money only when its money fields are all
 * valid, it is reported directly (PROVIDER or HOST), attributed to the project, not estimated, and
 * is itself direct evidence (DIRECT_HOST or DIRECT_PROVIDER provenance). Everything else is left
 * out and counted by its reason.
 */
export function costExclusion(cost: Cost): string | undefined {
  if (
    cost.amount_minor === undefined ||
    cost.currency === undefined ||
    cost.source === undefined ||
    cost.cost_basis === undefined ||
    cost.attribution === undefined ||
    cost.estimated === undefined
  )
    return "INVALID_COST";
  if (cost.source === "ESTIMATE" || cost.estimated) return "ESTIMATED_COST";
  if (cost.attribution !== "PROJECT") return "UNATTRIBUTED_COST";
  const basis = evidenceBasis(cost);
  if (basis === "NONDIRECT") return "NONDIRECT_COST";
  if (basis === "UNREADABLE") return "UNREADABLE_PROVENANCE_COST";
  return undefined;
}

/** A cost that passed costExclusion: its money fields are present. */
type EligibleCost = Cost & {
  readonly amount_minor: number;
  readonly currency: string;
  readonly source: string;
  readonly cost_basis: string;
};

/** What a unit's linked costs add up to, per exact slice, plus the costs left out by reason. */
export interface MoneyReading {
  readonly shares: readonly MoneyShare[];
  readonly excluded: Readonly<Record<string, number>>;
  readonly asOf: number;
}

const NO_EXCLUDED_COSTS: Readonly<Record<string, number>> = Object.freeze({});
const NO_SHARES: readonly MoneyShare[] = Object.freeze([]);

/**
 * Sums eligible costs separately by exact (currency, source, cost_basis). No conversion, no
 * rounding: amounts are integer minor units. Slices come out sorted so contributions are stable.
 * Almost every unit has at most one slice, so a Map is made only when a second slice appears.
 */
export function readMoney(costs: readonly Cost[]): MoneyReading {
  let single: MoneyShare | undefined;
  let singleKey = "";
  let slices: Map<string, MoneyShare> | undefined;
  let excluded: Record<string, number> | undefined;
  let asOf = Number.NEGATIVE_INFINITY;
  for (let index = 0; index < costs.length; index++) {
    const cost = costs[index] as Cost;
    asOf = Math.max(asOf, cost.event_time);
    const reason = costExclusion(cost);
    if (reason !== undefined) {
      excluded ??= {};
      excluded[reason] = (excluded[reason] ?? 0) + 1;
      continue;
    }
    const { currency, source, cost_basis: costBasis, amount_minor: amount } = cost as EligibleCost;
    const key = moneySliceKey(currency, source, costBasis);
    if (slices === undefined && (single === undefined || singleKey === key)) {
      single = { currency, source, costBasis, amountMinor: addExact(single?.amountMinor ?? 0, amount) };
      singleKey = key;
      continue;
    }
    if (slices === undefined) {
      slices = new Map();
      if (single !== undefined) slices.set(singleKey, single);
    }
    const known = slices.get(key);
    slices.set(key, { currency, source, costBasis, amountMinor: addExact(known?.amountMinor ?? 0, amount) });
  }
  const shares =
    slices !== undefined
      ? [...slices.entries()].sort(([a], [b]) => byUtf8(a, b)).map(([, share]) => share)
      : single !== undefined
        ? [single]
        : NO_SHARES;
  return { shares, excluded: excluded ?? NO_EXCLUDED_COSTS, asOf };
}

/** Slice keys by currency, source and cost basis: built once per distinct slice, then looked up. */
const sliceKeys = new Map<string, Map<string, Map<string, string>>>();

/** The canonical key of an exact money slice: JSON of [currency, source, cost_basis]. */
export function moneySliceKey(currency: string, source: string, costBasis: string): string {
  let bySource = sliceKeys.get(currency);
  if (bySource === undefined) sliceKeys.set(currency, (bySource = new Map()));
  let byBasis = bySource.get(source);
  if (byBasis === undefined) bySource.set(source, (byBasis = new Map()));
  let key = byBasis.get(costBasis);
  if (key === undefined) byBasis.set(costBasis, (key = JSON.stringify([currency, source, costBasis])));
  return key;
}
