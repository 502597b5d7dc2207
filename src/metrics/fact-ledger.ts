import type { MetricFact } from "../contract/facts.ts";
import type { Table } from "./tables.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import { InvariantError } from "../errors.ts";

/**
 * Where a version was read: the 1-based line (or record) of a file, or `topic/partition/offset`
 * of a topic. Conflict reports name it for every version (contract revision 2 §3).
 */
export type FactOrigin = number | string;

/** A record under its fact_id, with where it was read (unknown: undefined). */
export interface StoredVersion {
  readonly fact: MetricFact;
  readonly origin: FactOrigin | undefined;
}

/** The ledger's two tables. */
export interface LedgerTables {
  /** fact_id → its versions, in the order recorded. */
  readonly versions: Table<readonly StoredVersion[]>;
  /** A domain identity → the versions claiming it, as references into `versions`. */
  readonly claims: Table<readonly string[]>;
}

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
  | {
      readonly kind: "accepted";
      readonly fact: MetricFact;
      readonly admitted: readonly MetricFact[];
      readonly retracted: readonly MetricFact[];
    }
  | { readonly kind: "redelivery"; readonly admitted: readonly MetricFact[]; readonly retracted: readonly MetricFact[] }
  | { readonly kind: "re-report"; readonly admitted: readonly MetricFact[]; readonly retracted: readonly MetricFact[] }
  | {
      readonly kind: "quarantined";
      readonly admitted: readonly MetricFact[];
      readonly retracted: readonly MetricFact[];
      readonly conflict: Conflict;
      readonly conflicts: readonly Conflict[];
    };

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
const NO_VERSIONS: readonly StoredVersion[] = Object.freeze([]);
const NO_REFS: readonly string[] = Object.freeze([]);

/**
 * A version's name in the ledger: its fact_id and its position among that fact_id's versions.
 * Versions are only ever appended, so the name is stable; it never leaves the ledger.
 */
const versionRef = (factId: string, position: number): string => `${position}\u0000${factId}`;
const refFactId = (ref: string): string => ref.slice(ref.indexOf("\u0000") + 1);
const refPosition = (ref: string): number => Number(ref.slice(0, ref.indexOf("\u0000")));
const domainKey = (domain: readonly [DomainKind, string]): string => `${domain[0]}\u0000${domain[1]}`;

/**
 * Decides, for every record, whether it is new, a redelivery (a no-op; see isRedelivery), a
 * re-report of a domain identity under another fact_id (counts once), or part of a conflict.
 *
 * A fact counts (is admitted) exactly when its fact_id carries only it, its domain identity's
 * versions all have the same content apart from fact_id and provenance.source, and it is the
 * first such live version recorded. Which identical re-report counts changes nothing a metric
 * reads, and identities only ever gain records, so the results depend on the set of records seen,
 * not on their order.
 *
 * Its state is its two tables (LedgerTables).
 */
export class FactLedger {
  private readonly byFact: Table<readonly StoredVersion[]>;
  private readonly byDomain: Table<readonly string[]>;

  constructor(tables: LedgerTables) {
    this.byFact = tables.versions;
    this.byDomain = tables.claims;
  }

  record(fact: MetricFact, origin?: FactOrigin): LedgerOutcome {
    const own = this.byFact.get(fact.fact_id) ?? NO_VERSIONS;
    if (own.some((known) => isRedelivery(known.fact, fact)))
      return { kind: "redelivery", admitted: NO_FACTS, retracted: NO_FACTS };

    const domain = domainIdentity(fact);
    const claimKey = domain === undefined ? undefined : domainKey(domain);
    const knownDomain = claimKey === undefined ? undefined : this.byDomain.get(claimKey);
    const ref = versionRef(fact.fact_id, own.length);
    if (own.length === 0 && knownDomain === undefined) {
      // The common case: nothing else claims either identity.
      this.byFact.set(fact.fact_id, [{ fact, origin }]);
      if (claimKey !== undefined) this.byDomain.set(claimKey, [ref]);
      return { kind: "accepted", fact, admitted: [fact], retracted: NO_FACTS };
    }

    // Every version whose admission may change: the versions of both identities, and the versions of
    // the domain identities of facts sharing this fact_id (one of them may now stop counting and
    // let an identical re-report count instead).
    const affected = new Set<string>([
      ...own.map((_, position) => versionRef(fact.fact_id, position)),
      ...(knownDomain ?? NO_REFS),
    ]);
    for (const sibling of own) for (const other of this.domainRefs(sibling.fact)) affected.add(other);
    const before = new Set([...affected].filter((candidate) => this.isAdmitted(candidate)));

    this.byFact.set(fact.fact_id, [...own, { fact, origin }]);
    if (claimKey !== undefined) this.byDomain.set(claimKey, [...(knownDomain ?? NO_REFS), ref]);
    affected.add(ref);
    const after = new Set([...affected].filter((candidate) => this.isAdmitted(candidate)));

    const admitted = [...after]
      .filter((candidate) => !before.has(candidate))
      .map((candidate) => this.factOf(candidate));
    const retracted = [...before]
      .filter((candidate) => !after.has(candidate))
      .map((candidate) => this.factOf(candidate));
    // Both identities of the record may conflict (a fact_id re-sent with another cost id, and that
    // cost id already claimed): each is reported, as a report of the whole ledger would.
    const conflicts = [
      this.factConflict(fact.fact_id),
      claimKey === undefined ? undefined : this.domainConflict(claimKey),
    ].filter((found) => found !== undefined);
    const [conflict] = conflicts;
    if (conflict !== undefined) return { kind: "quarantined", admitted, retracted, conflict, conflicts };
    if (after.has(ref)) return { kind: "accepted", fact, admitted, retracted };
    return { kind: "re-report", admitted, retracted };
  }

  /** Every identity that currently carries more than one distinct record, sorted, for reports (a scan of the whole ledger). */
  conflicts(): Conflict[] {
    const found: Conflict[] = [];
    for (const [factId, versions] of this.byFact.scan())
      if (versions.length > 1) found.push(this.report("CONFLICT", `fact\u0000${factId}`, versions));
    for (const [claim, refs] of this.byDomain.scan()) {
      if (refs.length < 2) continue;
      const conflict = this.domainConflict(claim);
      if (conflict !== undefined) found.push(conflict);
    }
    return found.sort((a, b) => byUtf8(a.identity, b.identity));
  }

  /** The report of one Delivery's TERMINAL summaries beyond its earliest (the engine finds them). */
  laterTerminalConflict(deliveryId: string, terminalSummaries: readonly MetricFact[]): Conflict {
    return this.report(
      "LATER_TERMINAL_SUMMARY",
      `delivery\u0000${deliveryId}`,
      terminalSummaries.map((fact) => ({ fact, origin: this.originOf(fact) })),
    );
  }

  private factConflict(factId: string): Conflict | undefined {
    const versions = this.byFact.get(factId) ?? NO_VERSIONS;
    return versions.length > 1 ? this.report("CONFLICT", `fact\u0000${factId}`, versions) : undefined;
  }

  private domainConflict(claim: string): Conflict | undefined {
    const refs = this.byDomain.get(claim) ?? NO_REFS;
    if (refs.length < 2) return undefined;
    const versions = refs.map((ref) => this.versionOf(ref));
    if (!hasDistinctContent(versions.map((version) => version.fact))) return undefined;
    return this.report("CONFLICT", claim, versions);
  }

  private report(reason: Conflict["reason"], identity: string, versions: readonly StoredVersion[]): Conflict {
    return conflictReport(reason, identity, versions);
  }

  /** Every version recorded under a fact_id, with where each was read (for explanations). */
  versionsOf(factId: string): readonly StoredVersion[] {
    return this.byFact.get(factId) ?? NO_VERSIONS;
  }

  /** Where an admitted fact was read (the only version of its fact_id). */
  originOf(fact: MetricFact): FactOrigin | undefined {
    return (this.byFact.get(fact.fact_id) ?? NO_VERSIONS).find((version) => sameRecord(version.fact, fact))?.origin;
  }

  private versionOf(ref: string): StoredVersion {
    const version = (this.byFact.get(refFactId(ref)) ?? NO_VERSIONS)[refPosition(ref)];
    if (version === undefined)
      throw new InvariantError({ problem: `ledger reference ${JSON.stringify(ref)} names no version` });
    return version;
  }

  private factOf(ref: string): MetricFact {
    return this.versionOf(ref).fact;
  }

  private domainRefs(fact: MetricFact): readonly string[] {
    const domain = domainIdentity(fact);
    return domain === undefined ? NO_REFS : (this.byDomain.get(domainKey(domain)) ?? NO_REFS);
  }

  /** Live: alone under its fact_id, and its domain identity is not in conflict. */
  private isLive(ref: string): boolean {
    const versions = this.byFact.get(refFactId(ref)) ?? NO_VERSIONS;
    if (versions.length !== 1) return false;
    const domain = domainIdentity((versions[0] as StoredVersion).fact);
    if (domain === undefined) return true;
    const refs = this.byDomain.get(domainKey(domain)) ?? NO_REFS;
    return refs.length < 2 || !hasDistinctContent(refs.map((other) => this.factOf(other)));
  }

  /** Admitted: live, and the first live version of its domain identity (an identical re-report counts once). */
  private isAdmitted(ref: string): boolean {
    if (!this.isLive(ref)) return false;
    const domain = domainIdentity(this.factOf(ref));
    if (domain === undefined) return true;
    const refs = this.byDomain.get(domainKey(domain)) ?? NO_REFS;
    return refs.find((other) => (this.byFact.get(refFactId(other)) ?? NO_VERSIONS).length === 1) === ref;
  }
}

/**
 * Byte-identical after normalisation. Parsed facts have their keys in the schema's order, and so
 * do facts read back from the state store (the binary layout reads fields in that order; a test of
 * the state codecs holds it), so JSON.stringify is a canonical form here; it runs only when an
 * identity is seen twice.
 */
export function sameRecord(a: MetricFact, b: MetricFact): boolean {
  return a === b || recordForm(a) === recordForm(b);
}

/** Forms already computed, by fact object: a fact held in a state table is compared again and again. */
const recordForms = new WeakMap<MetricFact, string>();

/**
 * A fact's normalised JSON, which orders and compares versions (facts are never mutated, so the
 * form of an object never changes). The partitioned engine's stages read each fact from its
 * encoded record, so two paths to one fact hold equal objects that are not the same object.
 */
export function recordForm(fact: MetricFact): string {
  let form = recordForms.get(fact);
  if (form === undefined) {
    form = JSON.stringify(fact);
    recordForms.set(fact, form);
  }
  return form;
}

/**
 * Contract §1: versions of one domain identity are one report made twice when their canonical
 * content differs in nothing but fact_id and provenance.source. Revision 3 change 11: a snapshot's
 * provenance gates nothing, so two snapshots that differ only in provenance are one report.
 */
function reportContent(fact: MetricFact): string {
  if (fact.type === "task_snapshot") return JSON.stringify({ ...fact, fact_id: undefined, provenance: undefined });
  const provenance = fact.provenance === null ? null : { ...fact.provenance, source: undefined };
  return JSON.stringify({ ...fact, fact_id: undefined, provenance });
}

/**
 * Contract revision 3 change 11: a record re-sent under one fact_id is a redelivery (a no-op, not
 * a conflict) when it is the same report: byte-identical, or different only where reportContent
 * looks past (provenance.source; a snapshot's provenance).
 */
export function isRedelivery(known: MetricFact, fact: MetricFact): boolean {
  if (sameRecord(known, fact)) return true;
  return known.fact_id === fact.fact_id && reportContent(known) === reportContent(fact);
}

export function hasDistinctContent(versions: readonly MetricFact[]): boolean {
  if (versions.length < 2) return false;
  const first = reportContent(versions[0] as MetricFact);
  return versions.some((version) => reportContent(version) !== first);
}

/** A conflict's report: its versions sorted by fact_id (versions of one fact_id keep the order given). */
export function conflictReport(
  reason: Conflict["reason"],
  identity: string,
  versions: readonly StoredVersion[],
): Conflict {
  const sorted = [...versions].sort((a, b) => byUtf8(a.fact.fact_id, b.fact.fact_id));
  return {
    reason,
    identity,
    factIds: sorted.map((version) => version.fact.fact_id),
    versions: sorted.map((version) => ({ factId: version.fact.fact_id, origin: version.origin ?? null })),
  };
}
