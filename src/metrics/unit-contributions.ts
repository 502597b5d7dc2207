import type { Contribution } from "./contribution.ts";
import { decodedContributions, type DocContributions, type DocTable, type StoredContributions } from "./entity-docs.ts";

/** Equal contributions, field by field (exclusions and money shares included), in the same order. */
export function sameContributions(a: readonly Contribution[], b: readonly Contribution[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) {
    const x = a[index] as Contribution;
    const y = b[index] as Contribution;
    if (
      x.groupKey !== y.groupKey ||
      x.candidate !== y.candidate ||
      x.covered !== y.covered ||
      x.eligible !== y.eligible ||
      x.hit !== y.hit ||
      x.category !== y.category ||
      x.amount !== y.amount ||
      x.asOf !== y.asOf
    )
      return false;
    if (x.money.length !== y.money.length || x.money.some((share, position) => !sameShare(share, y.money[position])))
      return false;
    const reasons = Object.keys(x.exclusions);
    if (
      reasons.length !== Object.keys(y.exclusions).length ||
      reasons.some((reason) => x.exclusions[reason] !== y.exclusions[reason])
    )
      return false;
  }
  return true;
}

function sameShare(a: Contribution["money"][number], b: Contribution["money"][number] | undefined): boolean {
  return (
    b !== undefined &&
    a.currency === b.currency &&
    a.source === b.source &&
    a.costBasis === b.costBasis &&
    a.amountMinor === b.amountMinor
  );
}

/** Where one kind of unit keeps its contributions. */
export interface UnitContributions {
  get(id: string): readonly Contribution[] | undefined;
  /** Every unit's contributions (a scan of the table or documents). */
  scan(): Iterable<[string, readonly Contribution[]]>;
  /** Sets them (empty: none left). */
  set(id: string, next: readonly Contribution[]): void;
  /** Sets them as read from the contributions changelog: kept as stored, when the store can (see inDocuments). */
  restore(id: string, next: readonly Contribution[]): void;
}

/**
 * A unit's contributions in its entity's document (which exists while the unit has any, or the entity facts).
 * `stored` (a store on disk) encodes restored contributions at once: a log load restores every unit
 * and reads none back, so its decoded contributions need not outlive the group sums they are added to.
 */
export function inDocuments<D extends { contributions: DocContributions }>(
  docs: DocTable<D>,
  stored?: (contributions: readonly Contribution[]) => StoredContributions,
): UnitContributions {
  const put = (id: string, next: DocContributions): void => {
    const doc = docs.edit(id, next.length * 32);
    doc.contributions = next;
    docs.settle(id, doc);
  };
  return {
    get: (id) => {
      const doc = docs.get(id);
      return doc === undefined ? undefined : decodedContributions(doc);
    },
    scan: function* () {
      for (const [id, doc] of docs.scan()) yield [id, decodedContributions(doc)];
    },
    set: put,
    restore: (id, next) => put(id, stored === undefined || next.length === 0 ? next : stored(next)),
  };
}
