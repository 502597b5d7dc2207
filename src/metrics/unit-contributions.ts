import type { Contribution } from "./contribution.ts";
import type { DocTable } from "./entity-docs.ts";

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
}

/** A unit's contributions in its entity's document (which exists while the unit has any, or the entity facts). */
export function inDocuments<D extends { contributions: readonly Contribution[] }>(
  docs: DocTable<D>,
): UnitContributions {
  return {
    get: (id) => docs.get(id)?.contributions,
    scan: function* () {
      for (const [id, doc] of docs.scan()) yield [id, doc.contributions];
    },
    set: (id, next) => {
      const doc = docs.edit(id, next.length * 32);
      doc.contributions = next;
      docs.settle(id, doc);
    },
  };
}
