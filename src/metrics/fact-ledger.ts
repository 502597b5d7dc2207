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

/** The kinds of identity a fact can claim (see identityOf). */
type IdentityKind = "fact" | "call" | "snapshot" | "cost" | "packet" | "repair";

/**
 * The identity a fact claims besides its fact_id. Two distinct records under one identity are a
 * conflict: all of them are quarantined and none contributes. Beyond the contract's call_id and
 * snapshot_id, the ids of costs, packets and repairs are identities too (docs/semantics.md): a
 * second, different report of the same cost is not a correction we may pick a winner for.
 */
function secondaryIdentity(fact: MetricFact): [IdentityKind, string] | undefined {
  switch (fact.type) {
    case "model_call":
      return ["call", fact.call_id];
    case "task_snapshot":
      return ["snapshot", fact.snapshot_id];
    case "cost":
      return ["cost", fact.cost_id];
    case "packet":
      return ["packet", fact.packet_id];
    case "repair":
      return ["repair", fact.repair_id];
    case "delivery_summary":
      return undefined;
  }
}

/** Every identity a fact claims, as `kind id` strings (for reports and tests). */
export function identitiesOf(fact: MetricFact): string[] {
  const secondary = secondaryIdentity(fact);
  return [`fact\u0000${fact.fact_id}`, ...(secondary === undefined ? [] : [`${secondary[0]}\u0000${secondary[1]}`])];
}

const REDELIVERY: LedgerOutcome = Object.freeze({ kind: "redelivery" });

/** The records under one identity: one record as itself (the usual case), several as an array. */
type Versions = MetricFact | MetricFact[];

const versionList = (versions: Versions | undefined): readonly MetricFact[] => (versions === undefined ? [] : Array.isArray(versions) ? versions : [versions]);

/**
 * Decides, for every record, whether it is new, a byte-identical redelivery (a no-op) or part of a
 * conflict. A fact is accepted exactly when each of its identities has one distinct record; since
 * identities only ever gain records, the final accepted set depends on the set of records seen,
 * not on their order.
 */
export class FactLedger {
  private readonly byKind: Record<IdentityKind, Map<string, Versions>> = { fact: new Map(), call: new Map(), snapshot: new Map(), cost: new Map(), packet: new Map(), repair: new Map() };

  record(fact: MetricFact): LedgerOutcome {
    const own = this.byKind.fact.get(fact.fact_id);
    if (own !== undefined && versionList(own).some((known) => sameRecord(known, fact))) return REDELIVERY;

    const identities: [IdentityKind, string][] = [["fact", fact.fact_id]];
    const secondary = secondaryIdentity(fact);
    if (secondary !== undefined) identities.push(secondary);

    const retracted: MetricFact[] = [];
    let conflictAt: [IdentityKind, string] | undefined;
    for (const identity of identities) {
      const [kind, id] = identity;
      const map = this.byKind[kind];
      const known = map.get(id);
      if (known === undefined) {
        map.set(id, fact);
        continue;
      }
      if (!Array.isArray(known)) {
        retracted.push(known);
        map.set(id, [known, fact]);
      } else {
        known.push(fact);
      }
      conflictAt ??= identity;
    }
    if (conflictAt === undefined) return { kind: "accepted", fact };
    const stillAccepted = retracted.filter((earlier, index) => retracted.indexOf(earlier) === index && this.wasAcceptedBefore(earlier, fact));
    const [kind, id] = conflictAt;
    return { kind: "quarantined", retracted: stillAccepted, conflict: { identity: `${kind}\u0000${id}`, factIds: versionList(this.byKind[kind].get(id)).map((version) => version.fact_id) } };
  }

  /** Every identity that currently carries more than one record, sorted, for reports. */
  conflicts(): Conflict[] {
    const found: Conflict[] = [];
    for (const [kind, map] of Object.entries(this.byKind)) {
      for (const [id, versions] of map) {
        if (Array.isArray(versions)) found.push({ identity: `${kind}\u0000${id}`, factIds: versions.map((record) => record.fact_id).sort() });
      }
    }
    return found.sort((a, b) => (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0));
  }

  /**
   * Was `earlier` accepted until `incoming` arrived? Its identities all had one record, except the
   * ones that `incoming` just joined (which now hold exactly earlier and incoming).
   */
  private wasAcceptedBefore(earlier: MetricFact, incoming: MetricFact): boolean {
    const identities: [IdentityKind, string][] = [["fact", earlier.fact_id]];
    const secondary = secondaryIdentity(earlier);
    if (secondary !== undefined) identities.push(secondary);
    return identities.every(([kind, id]) => {
      const known = this.byKind[kind].get(id);
      if (!Array.isArray(known)) return known === earlier;
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
