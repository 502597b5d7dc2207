import type { MetricFact } from "../contract/facts.ts";

/** A conflict: one identity carried by more than one distinct record. */
export interface Conflict {
  readonly identity: string;
  readonly factIds: readonly string[];
}

export type LedgerOutcome =
  | { readonly kind: "accepted"; readonly fact: MetricFact }
  | { readonly kind: "redelivery" }
  | { readonly kind: "quarantined"; readonly retracted: readonly MetricFact[]; readonly conflict: Conflict };

/**
 * Identities a fact claims. Two distinct records under one identity are a conflict: all of them are
 * quarantined and none contributes. Beyond the contract's fact_id, call_id and snapshot_id, the
 * ids of costs, packets and repairs are identities too (docs/semantics.md): a second, different
 * report of the same cost is not a correction we may pick a winner for.
 */
export function identitiesOf(fact: MetricFact): string[] {
  const own = `fact\u0000${fact.fact_id}`;
  switch (fact.type) {
    case "model_call":
      return [own, `call\u0000${fact.call_id}`];
    case "task_snapshot":
      return [own, `snapshot\u0000${fact.snapshot_id}`];
    case "cost":
      return [own, `cost\u0000${fact.cost_id}`];
    case "packet":
      return [own, `packet\u0000${fact.packet_id}`];
    case "repair":
      return [own, `repair\u0000${fact.repair_id}`];
    case "delivery_summary":
      return [own];
  }
}

/**
 * Decides, for every record, whether it is new, a byte-identical redelivery (a no-op) or part of a
 * conflict. A fact is accepted exactly when each of its identities has one distinct record; since
 * identities only ever gain records, the final accepted set depends on the set of records seen,
 * not on their order.
 */
export class FactLedger {
  /** identity → its distinct records (almost always exactly one). */
  private readonly versions = new Map<string, MetricFact[]>();

  record(fact: MetricFact): LedgerOutcome {
    const identities = identitiesOf(fact);
    const ownVersions = this.versions.get(identities[0] as string);
    if (ownVersions !== undefined && ownVersions.some((known) => sameRecord(known, fact))) return { kind: "redelivery" };

    const retracted: MetricFact[] = [];
    let conflictIdentity: string | undefined;
    for (const identity of identities) {
      const known = this.versions.get(identity);
      if (known === undefined) {
        this.versions.set(identity, [fact]);
        continue;
      }
      if (known.length === 1) retracted.push(known[0] as MetricFact);
      known.push(fact);
      conflictIdentity ??= identity;
    }
    if (conflictIdentity === undefined) return { kind: "accepted", fact };
    const stillAccepted = retracted.filter((earlier, index) => retracted.indexOf(earlier) === index && this.wasAcceptedBefore(earlier, fact));
    const all = this.versions.get(conflictIdentity) ?? [];
    return { kind: "quarantined", retracted: stillAccepted, conflict: { identity: conflictIdentity, factIds: all.map((version) => version.fact_id) } };
  }

  /** True when the fact is currently accepted (every identity has exactly this one record). */
  isAccepted(fact: MetricFact): boolean {
    return identitiesOf(fact).every((identity) => {
      const known = this.versions.get(identity);
      return known !== undefined && known.length === 1 && known[0] === fact;
    });
  }

  /** Every identity that currently carries more than one record, sorted, for reports. */
  conflicts(): Conflict[] {
    const found: Conflict[] = [];
    for (const [identity, records] of this.versions) {
      if (records.length > 1) found.push({ identity, factIds: records.map((record) => record.fact_id).sort() });
    }
    return found.sort((a, b) => (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0));
  }

  /**
   * Was `earlier` accepted until `incoming` arrived? Its identities all had one record, except the
   * ones that `incoming` just joined (which now hold two: earlier and incoming).
   */
  private wasAcceptedBefore(earlier: MetricFact, incoming: MetricFact): boolean {
    return identitiesOf(earlier).every((identity) => {
      const known = this.versions.get(identity) ?? [];
      if (known.length === 1) return known[0] === earlier;
      return known.length === 2 && known[0] === earlier && known[1] === incoming;
    });
  }
}

/**
 * Byte-identical after normalisation. Parsed facts have their keys in the schema's order, so
 * JSON.stringify is a canonical form here; it runs only when an identity is seen twice.
 */
function sameRecord(a: MetricFact, b: MetricFact): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
