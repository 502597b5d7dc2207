import type { Cost } from "../contract/facts.ts";
import type { MoneyShare } from "./contribution.ts";

/**
 * Contract §2: a cost is eligible money only when reported directly (PROVIDER or HOST), attributed
 * to the project, and not estimated. Everything else is left out and counted by its reason.
 */
export function costExclusion(cost: Cost): string | undefined {
  if (cost.source === "ESTIMATE" || cost.estimated) return "ESTIMATED_COST";
  if (cost.attribution !== "PROJECT") return "UNATTRIBUTED_COST";
  return undefined;
}

/** What a unit's linked costs add up to, per exact slice, plus the costs left out by reason. */
export interface MoneyReading {
  readonly shares: MoneyShare[];
  readonly excluded: Record<string, number>;
  readonly asOf: number;
}

/**
 * Sums eligible costs separately by exact (currency, source, cost_basis). No conversion, no
 * rounding: amounts are integer minor units. Slices come out sorted so contributions are stable.
 */
export function readMoney(costs: Iterable<Cost>): MoneyReading {
  const slices = new Map<string, MoneyShare>();
  const excluded: Record<string, number> = {};
  let asOf = Number.NEGATIVE_INFINITY;
  for (const cost of costs) {
    asOf = Math.max(asOf, cost.event_time);
    const reason = costExclusion(cost);
    if (reason !== undefined) {
      excluded[reason] = (excluded[reason] ?? 0) + 1;
      continue;
    }
    const key = moneySliceKey(cost.currency, cost.source, cost.cost_basis);
    const known = slices.get(key);
    slices.set(key, { currency: cost.currency, source: cost.source, costBasis: cost.cost_basis, amountMinor: (known?.amountMinor ?? 0) + cost.amount_minor });
  }
  const shares = [...slices.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, share]) => share);
  return { shares, excluded, asOf };
}

export function moneySliceKey(currency: string, source: string, costBasis: string): string {
  return JSON.stringify([currency, source, costBasis]);
}
