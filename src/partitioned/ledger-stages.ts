import type { MetricFact } from "../contract/facts.ts";
import {
  conflictReport,
  domainIdentity,
  hasDistinctContent,
  isRedelivery,
  sameRecord,
  type FactOrigin,
  type StoredVersion,
} from "../metrics/fact-ledger.ts";
import type { LinkTable, Table } from "../metrics/tables.ts";
import { versionsCodec } from "../state/codecs/values.ts";
import type { StateStore } from "../state/state-store.ts";
import { admissionCodec, claimVersionCodec } from "./stage-codecs.ts";
import { admissionKey, destinationsOf } from "./bundles.ts";
import { partitionOf } from "../kafka/key-partitioner.ts";
import { compositeKey, splitKey, type Admission, type ClaimVersion, type StageRecord } from "./stage-records.ts";
import { byUtf8 } from "../contract/code-point-order.ts";

/** The outcome of one record at the fact ledger, as the single engine's ledger names it. */
export type FactLedgerOutcome = "new" | "redelivery" | "conflict";

/**
 * The fact ledger, first half of the single engine's `FactLedger` (partitioned by fact_id, so all
 * versions of a fact_id meet): a redelivery (isRedelivery) changes nothing; a second distinct
 * version makes the fact_id a conflict (no version of it counts). Every version is passed on to
 * the domain ledger with whether it is live (the only one of its fact_id); a summary, which claims
 * no domain identity, is admitted or withdrawn here directly.
 */
export class FactIdLedgerPartition {
  /** fact_id → its versions, with where each was read. */
  private readonly versions: Table<readonly StoredVersion[]>;
  private readonly stages: StagePartitions;

  constructor(stages: StagePartitions, state: StateStore) {
    this.stages = stages;
    this.versions = state.table("Lf\u0000", versionsCodec);
  }

  record(fact: MetricFact, origin: FactOrigin | undefined, out: StageRecord[]): FactLedgerOutcome {
    const known = this.versions.get(fact.fact_id) ?? [];
    if (known.some((version) => isRedelivery(version.fact, fact))) return "redelivery";
    const own = [...known, { fact, origin }];
    this.versions.set(fact.fact_id, own);
    this.send(own, own.length - 1, out);
    // The first version stops being live when a second one arrives; later versions change nothing more.
    if (own.length === 2) this.send(own, 0, out);
    if (own.length === 1) return "new";
    out.push({
      topic: "conflicts",
      partition: 0,
      key: `fact\u0000${fact.fact_id}`,
      value: conflictReport("CONFLICT", `fact\u0000${fact.fact_id}`, own),
    });
    return "conflict";
  }

  private send(own: readonly StoredVersion[], position: number, out: StageRecord[]): void {
    const { fact, origin } = own[position] as StoredVersion;
    const live = own.length === 1;
    const domain = domainIdentity(fact);
    if (domain !== undefined) {
      const claim = admissionKey(fact);
      const value: ClaimVersion = { fact, origin: origin ?? null, live };
      out.push({
        topic: "claims",
        partition: partitionOf(claim, this.stages.domainLedger),
        key: compositeKey(claim, fact.fact_id, String(position)),
        value,
      });
      return;
    }
    // A summary is admitted here; a version that is not (or no longer) live is withdrawn from its bundles.
    admit(
      this.stages,
      admissionKey(fact),
      live ? undefined : fact,
      live ? { fact, origin: origin ?? null } : undefined,
      out,
    );
  }
}

/**
 * The domain ledger, second half (partitioned by domain identity, so all versions claiming one
 * call_id, cost_id, … meet): versions of distinct content are a conflict (none counts); otherwise
 * the live version with the smallest fact_id counts. The single engine admits the first live
 * version recorded; both choose one of identical re-reports, which differ in nothing a metric
 * reads, and this choice does not depend on arrival order or partitioning.
 */
export class DomainLedgerPartition {
  /** identity → the versions claiming it (by the claim record's key). */
  private readonly claims: LinkTable<ClaimVersion>;
  /** identity → the version admitted under it. */
  private readonly admitted: Table<Admission>;
  private readonly stages: StagePartitions;

  constructor(stages: StagePartitions, state: StateStore) {
    this.stages = stages;
    this.claims = state.links("Lc\u0000", claimVersionCodec);
    this.admitted = state.table("La\u0000", admissionCodec);
  }

  /**
   * One claim record: a version claiming its identity, or null, a claim withdrawn (a fact ledger
   * partition restarted from less state than it had sent from withdraws what it no longer holds).
   */
  receive(key: string, version: ClaimVersion | null, out: StageRecord[]): void {
    const claim = version === null ? (splitKey(key)[0] as string) : admissionKey(version.fact);
    if (version === null) this.claims.delete(claim, key);
    else this.claims.add(claim, key, version);
    const all = [...this.claims.get(claim)];
    const distinct = hasDistinctContent(all.map((known) => known.fact));
    let next: ClaimVersion | undefined;
    if (!distinct)
      for (const candidate of all)
        if (candidate.live && (next === undefined || byUtf8(candidate.fact.fact_id, next.fact.fact_id) < 0))
          next = candidate;
    const previous = this.admitted.get(claim);
    const admitted: Admission | undefined = next === undefined ? undefined : { fact: next.fact, origin: next.origin };
    const changed =
      previous === undefined || admitted === undefined
        ? previous !== admitted
        : !sameRecord(previous.fact, admitted.fact);
    if (changed) {
      if (admitted === undefined) this.admitted.delete(claim);
      else this.admitted.set(claim, admitted);
      admit(this.stages, claim, previous?.fact, admitted, out);
    }
    if (distinct) {
      const reported = all.map((known) => ({ fact: known.fact, origin: known.origin ?? undefined }));
      out.push({ topic: "conflicts", partition: 0, key: claim, value: conflictReport("CONFLICT", claim, reported) });
    }
  }
}

/** The partition counts of the stages, which decide where a key's records go. */
export interface StagePartitions {
  readonly factLedger: number;
  readonly domainLedger: number;
  readonly entities: number;
  readonly aggregation: number;
}

/** Every stage on the same partition count (the stage topics' count). */
export function samePartitions(partitions: number): StagePartitions {
  return { factLedger: partitions, domainLedger: partitions, entities: partitions, aggregation: partitions };
}

/**
 * Sends what is admitted under `claim` now (`next`; undefined: nothing) to the owner of every
 * bundle it belongs to, and a tombstone to every bundle only the previous fact belonged to.
 */
function admit(
  stages: StagePartitions,
  claim: string,
  previous: MetricFact | undefined,
  next: Admission | undefined,
  out: StageRecord[],
): void {
  const now = next === undefined ? [] : destinationsOf(next.fact, stages.entities);
  const gone =
    previous === undefined
      ? []
      : destinationsOf(previous, stages.entities).filter(({ bundle }) => !now.some((kept) => kept.bundle === bundle));
  for (const { bundle, partition } of now)
    out.push({ topic: "admissions", partition, key: compositeKey(bundle, claim), value: next ?? null });
  for (const { bundle, partition } of gone)
    out.push({ topic: "admissions", partition, key: compositeKey(bundle, claim), value: null });
}
