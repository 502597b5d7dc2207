import type { MetricFact } from "../contract/facts.ts";

/**
 * Where a version was read: the 1-based line (or record) of a file, or `topic/partition/offset`
 * of a topic. Conflict reports name it for every version (contract revision 2 §3).
 */
export type FactOrigin = number | string;

/** One record under a conflicting identity. */
export interface ConflictVersion {
  readonly factId: string;
  readonly origin: FactOrigin | null;
}

/**
 * A conflict: one identity carried by more than one distinct record (`CONFLICT`, every version
 * quarantined), or one Delivery with more than one TERMINAL summary (`LATER_TERMINAL_SUMMARY`:
 * the earliest is read, the later ones are ignored).
 */
export interface Conflict {
  readonly reason: "CONFLICT" | "LATER_TERMINAL_SUMMARY";
  readonly identity: string;
  readonly factIds: readonly string[];
  readonly versions: readonly ConflictVersion[];
}

/**
 * What recording one record changed. `admitted` and `retracted` are the facts that start or stop
 * contributing (a conflict retracts; a re-report is admitted only when the version that counted
 * is quarantined by a conflict of its own fact_id).
 */
export type LedgerOutcome =
  | { readonly kind: "accepted"; readonly fact: MetricFact; readonly admitted: readonly MetricFact[]; readonly retracted: readonly MetricFact[] }
  | { readonly kind: "redelivery"; readonly admitted: readonly MetricFact[]; readonly retracted: readonly MetricFact[] }
  | { readonly kind: "re-report"; readonly admitted: readonly MetricFact[]; readonly retracted: readonly MetricFact[] }
  | { readonly kind: "quarantined"; readonly admitted: readonly MetricFact[]; readonly retracted: readonly MetricFact[]; readonly conflict: Conflict; readonly conflicts: readonly Conflict[] };

/** The kinds of identity a fact can claim (see domainIdentity). */
type IdentityKind = "fact" | "call" | "snapshot" | "cost" | "packet" | "repair";
type DomainKind = Exclude<IdentityKind, "fact">;

/**
 * The domain identity a fact claims besides its fact_id (contract §1): call_id, cost_id,
 * packet_id, repair_id, snapshot_id. Delivery summaries have none (several per Delivery are normal).
 */
export function domainIdentity(fact: MetricFact): [DomainKind, string] | undefined {
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

const NO_FACTS: readonly MetricFact[] = Object.freeze([]);

/** The records under one identity: one record as itself (the usual case), several as an array. */
type Versions = MetricFact | MetricFact[];

const versionList = (versions: Versions | undefined): readonly MetricFact[] => (versions === undefined ? NO_FACTS : Array.isArray(versions) ? versions : [versions]);

/**
 * Decides, for every record, whether it is new, a byte-identical redelivery (a no-op), a
 * re-report of a domain identity under another fact_id (counts once), or part of a conflict.
 *
 * A fact counts (is admitted) exactly when its fact_id carries only it, its domain identity's
 * versions all have the same content apart from fact_id and provenance.source, and it is the
 * first such live version recorded. Which identical re-report counts changes nothing a metric
 * reads, and identities only ever gain records, so the results depend on the set of records seen,
 * not on their order.
 */
export class FactLedger {
  private readonly byKind: Record<IdentityKind, Map<string, Versions>> = { fact: new Map(), call: new Map(), snapshot: new Map(), cost: new Map(), packet: new Map(), repair: new Map() };
  /** Where each version was read, when the caller said (a symbol-free side table keyed by the fact object). */
  private readonly origins = new WeakMap<MetricFact, FactOrigin>();

  record(fact: MetricFact, origin?: FactOrigin): LedgerOutcome {
    const own = this.byKind.fact.get(fact.fact_id);
    if (own !== undefined && versionList(own).some((known) => sameRecord(known, fact))) return { kind: "redelivery", admitted: NO_FACTS, retracted: NO_FACTS };
    if (origin !== undefined) this.origins.set(fact, origin);

    const domain = domainIdentity(fact);
    const knownDomain = domain === undefined ? undefined : this.byKind[domain[0]].get(domain[1]);
    if (own === undefined && knownDomain === undefined) {
      // The common case: nothing else claims either identity.
      this.byKind.fact.set(fact.fact_id, fact);
      if (domain !== undefined) this.byKind[domain[0]].set(domain[1], fact);
      return { kind: "accepted", fact, admitted: [fact], retracted: NO_FACTS };
    }

    // Every fact whose admission may change: the versions of both identities, and the versions of
    // the domain identities of facts sharing this fact_id (one of them may now stop counting and
    // let an identical re-report count instead).
    const affected = new Set<MetricFact>([...versionList(own), ...versionList(knownDomain)]);
    for (const sibling of versionList(own)) for (const other of this.domainVersions(sibling)) affected.add(other);
    const before = new Set([...affected].filter((candidate) => this.isAdmitted(candidate)));

    this.push("fact", fact.fact_id, fact);
    if (domain !== undefined) this.push(domain[0], domain[1], fact);
    affected.add(fact);
    const after = new Set([...affected].filter((candidate) => this.isAdmitted(candidate)));

    const admitted = [...after].filter((candidate) => !before.has(candidate));
    const retracted = [...before].filter((candidate) => !after.has(candidate));
    // Both identities of the record may conflict (a fact_id re-sent with another cost id, and that
    // cost id already claimed): each is reported, as a report of the whole ledger would.
    const conflicts = [this.conflictOf("fact", fact.fact_id), domain === undefined ? undefined : this.conflictOf(domain[0], domain[1])].filter((found) => found !== undefined);
    const [conflict] = conflicts;
    if (conflict !== undefined) return { kind: "quarantined", admitted, retracted, conflict, conflicts };
    if (after.has(fact)) return { kind: "accepted", fact, admitted, retracted };
    return { kind: "re-report", admitted, retracted };
  }

  /** Every identity that currently carries more than one distinct record, sorted, for reports. */
  conflicts(): Conflict[] {
    const found: Conflict[] = [];
    for (const kind of Object.keys(this.byKind) as IdentityKind[]) {
      for (const id of this.byKind[kind].keys()) {
        const conflict = this.conflictOf(kind, id);
        if (conflict !== undefined) found.push(conflict);
      }
    }
    return found.sort((a, b) => (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0));
  }

  /** The report of one Delivery's TERMINAL summaries beyond its earliest (the engine finds them). */
  laterTerminalConflict(deliveryId: string, terminalSummaries: readonly MetricFact[]): Conflict {
    return this.report("LATER_TERMINAL_SUMMARY", `delivery\u0000${deliveryId}`, terminalSummaries);
  }

  private conflictOf(kind: IdentityKind, id: string): Conflict | undefined {
    const versions = this.byKind[kind].get(id);
    if (!Array.isArray(versions)) return undefined;
    if (kind !== "fact" && !hasDistinctContent(versions)) return undefined;
    return this.report("CONFLICT", `${kind}\u0000${id}`, versions);
  }

  private report(reason: Conflict["reason"], identity: string, versions: readonly MetricFact[]): Conflict {
    const sorted = [...versions].sort((a, b) => (a.fact_id < b.fact_id ? -1 : a.fact_id > b.fact_id ? 1 : 0));
    return { reason, identity, factIds: sorted.map((version) => version.fact_id), versions: sorted.map((version) => ({ factId: version.fact_id, origin: this.origins.get(version) ?? null })) };
  }

  private push(kind: IdentityKind, id: string, fact: MetricFact): void {
    const map = this.byKind[kind];
    const known = map.get(id);
    if (known === undefined) map.set(id, fact);
    else if (Array.isArray(known)) known.push(fact);
    else map.set(id, [known, fact]);
  }

  private domainVersions(fact: MetricFact): readonly MetricFact[] {
    const domain = domainIdentity(fact);
    return domain === undefined ? NO_FACTS : versionList(this.byKind[domain[0]].get(domain[1]));
  }

  /** Live: alone under its fact_id, and its domain identity is not in conflict. */
  private isLive(fact: MetricFact): boolean {
    if (this.byKind.fact.get(fact.fact_id) !== fact) return false;
    const domain = domainIdentity(fact);
    if (domain === undefined) return true;
    const versions = this.byKind[domain[0]].get(domain[1]);
    return !Array.isArray(versions) || !hasDistinctContent(versions);
  }

  /** Admitted: live, and the first live version of its domain identity (an identical re-report counts once). */
  private isAdmitted(fact: MetricFact): boolean {
    if (!this.isLive(fact)) return false;
    const domain = domainIdentity(fact);
    if (domain === undefined) return true;
    const versions = this.byKind[domain[0]].get(domain[1]);
    if (!Array.isArray(versions)) return versions === fact;
    return versions.find((version) => this.byKind.fact.get(version.fact_id) === version) === fact;
  }
}

/**
 * Byte-identical after normalisation. Parsed facts have their keys in the schema's order, so
 * JSON.stringify is a canonical form here; it runs only when an identity is seen twice.
 */
function sameRecord(a: MetricFact, b: MetricFact): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Contract §1: versions of one domain identity are one report made twice when their canonical
 * content differs in nothing but fact_id and provenance.source.
 */
function reportContent(fact: MetricFact): string {
  const provenance = fact.provenance === null ? null : { ...fact.provenance, source: undefined };
  return JSON.stringify({ ...fact, fact_id: undefined, provenance });
}

function hasDistinctContent(versions: readonly MetricFact[]): boolean {
  const first = reportContent(versions[0] as MetricFact);
  return versions.some((version) => reportContent(version) !== first);
}
