import type { CatalogSummary } from "../catalog/metric-definitions.ts";
import type { MetricFact } from "../contract/facts.ts";
import type { EngineConfig } from "../metrics/engine-config.ts";
import type { Conflict, FactOrigin } from "../metrics/fact-ledger.ts";
import type { MetricResult, ResultChange } from "../contract/result-record.ts";
import { detachedBytes } from "../codec/binary-form.ts";
import type { Table } from "../metrics/tables.ts";
import { bytesCodec } from "../state/codecs/values.ts";
import { StateStore } from "../state/state-store.ts";
import { AggregationPartition } from "./aggregation-stage.ts";
import { EntityPartition } from "./entity-stage.ts";
import {
  DomainLedgerPartition,
  FactIdLedgerPartition,
  type FactLedgerOutcome,
  type StagePartitions,
} from "./ledger-stages.ts";
import { compositeKey, splitKey, type StageRecord, type StageTopic } from "./stage-records.ts";
import { decodeStageValue, encodeStageValue } from "./stage-wire.ts";
import { InvariantError } from "../errors.ts";

/** The stages, in the order records flow. */
export const STAGE_NAMES = ["factLedger", "domainLedger", "entities", "aggregation"] as const;

export type StageName = (typeof STAGE_NAMES)[number];

/** The topics between the stages, by the role topics.json gives them (one topic per reading stage). */
export type StageRole = "stageClaims" | "stageEntities" | "stagePartials";

/** Which topic carries each kind of stage record: every record a stage reads arrives on its one input topic. */
export const STAGE_ROLE: Readonly<Record<Exclude<StageTopic, "conflicts">, StageRole>> = {
  claims: "stageClaims",
  admissions: "stageEntities",
  pushes: "stageEntities",
  subscriptions: "stageEntities",
  responses: "stageEntities",
  partials: "stagePartials",
};

/** The stage that reads each stage topic. */
export const READER_OF: Readonly<Record<StageRole, StageName>> = {
  stageClaims: "domainLedger",
  stageEntities: "entities",
  stagePartials: "aggregation",
};

/** Whether a topic role is one of the topics between the stages. */
export function isStageRole(role: string): role is StageRole {
  return Object.hasOwn(READER_OF, role);
}

/**
 * A stage record as a topic carries it: the key names the record's kind first (`compositeKey(kind,
 * key)`), so the kinds sharing the entity topic never collide and a compacted topic keeps the
 * latest value of each; the value is the stage-wire encoding (null: a tombstone).
 */
export interface WireRecord {
  readonly role: StageRole;
  readonly topic: Exclude<StageTopic, "conflicts">;
  readonly partition: number;
  readonly key: string;
  readonly value: Buffer | null;
}

export function toWire(record: Exclude<StageRecord, { topic: "conflicts" }>): WireRecord {
  return {
    role: STAGE_ROLE[record.topic],
    topic: record.topic,
    partition: record.partition,
    key: compositeKey(record.topic, record.key),
    value: encodeStageValue(record),
  };
}

/** A topic record back as the stage record it carries; the partition is the reader's own. */
export function fromWire(
  key: string,
  value: Buffer | null,
  partition: number,
): Exclude<StageRecord, { topic: "conflicts" }> {
  const [topic, inner] = splitKey(key) as [string, string];
  if (!(topic in STAGE_ROLE) || inner === undefined)
    throw new InvariantError({ problem: `not a stage record key: ${JSON.stringify(key)}` });
  return decodeStageValue(
    { topic, partition, key: inner, value: null } as Exclude<StageRecord, { topic: "conflicts" }>,
    value,
  );
}

/** What one flush sends on: stage records (coalesced, only where they change what the reader holds), results, conflict reports. */
export interface StageFlush {
  readonly records: readonly WireRecord[];
  readonly results: readonly ResultChange[];
  /** Conflict reports by identity (null: no longer a conflict), in the order they were found. */
  readonly conflicts: readonly { readonly key: string; readonly conflict: Conflict | null }[];
}

/**
 * One partition of one stage of the partitioned engine, as both transports run it (the in-process
 * `PartitionedEngine` and the Kafka stage processors): its stage's state, and its **outbox**, the
 * value it last sent for every key it writes (kept in its state store, so on disk and
 * checkpointed with it). Everything the stage emits goes through the outbox at `flush`:
 * - records of one key within a flush are coalesced to the last, and a record equal to what the
 *   reader already holds is not sent (Kafka Streams' record cache does the same for its changelog
 *   and repartition writes);
 * - after a crash, the writer's readers may hold values it sent after its last checkpoint, which
 *   its restored state knows nothing of. The transport reads back what this writer wrote since the
 *   checkpoint and asks `current` for each key: the value the reader must hold now (a tombstone
 *   when it is gone), so no reader keeps a value the writer's final state does not have.
 */
export class StageTask {
  readonly stage: StageName;
  readonly partition: number;
  private readonly outbox: Table<Buffer>;
  private readonly factLedger: FactIdLedgerPartition | undefined;
  private readonly domainLedger: DomainLedgerPartition | undefined;
  private readonly entities: EntityPartition | undefined;
  private readonly aggregation: AggregationPartition | undefined;
  /** Stage records emitted since the last flush, in order. */
  private pending: StageRecord[] = [];

  constructor(
    stage: StageName,
    partition: number,
    stages: StagePartitions,
    config: EngineConfig,
    catalog: CatalogSummary,
    state: StateStore = new StateStore(undefined),
  ) {
    this.stage = stage;
    this.partition = partition;
    this.outbox = state.table("Ob\u0000", bytesCodec);
    this.factLedger = stage === "factLedger" ? new FactIdLedgerPartition(stages, state) : undefined;
    this.domainLedger = stage === "domainLedger" ? new DomainLedgerPartition(stages, state) : undefined;
    this.entities = stage === "entities" ? new EntityPartition(partition, stages, config, state) : undefined;
    this.aggregation = stage === "aggregation" ? new AggregationPartition(catalog, config, state) : undefined;
  }

  /** The fact ledger's input: one accepted fact with where it was read. */
  ingest(fact: MetricFact, origin: FactOrigin | undefined): FactLedgerOutcome {
    if (this.factLedger === undefined)
      throw new InvariantError({ problem: `the ${this.stage} stage does not read facts` });
    return this.factLedger.record(fact, origin, this.pending);
  }

  /** One record of the stage's input topic (its key and value as the topic carries them). */
  receive(key: string, value: Buffer | null): void {
    const record = fromWire(key, value, this.partition);
    if (this.domainLedger !== undefined && record.topic === "claims")
      this.domainLedger.receive(record.key, record.value, this.pending);
    else if (this.entities !== undefined && record.topic !== "claims" && record.topic !== "partials")
      this.entities.receive(record, this.pending);
    else if (this.aggregation !== undefined && record.topic === "partials")
      this.aggregation.receive(record.key, record.value);
    else throw new InvariantError({ problem: `the ${this.stage} stage does not read ${record.topic}` });
  }

  /** True when nothing is waiting for a flush. */
  get settled(): boolean {
    return this.pending.length === 0 && (this.entities?.settled ?? true) && (this.aggregation?.settled ?? true);
  }

  /** Evaluates what changed (entity units, aggregation groups) and returns what is sent on. */
  flush(): StageFlush {
    this.entities?.flush(this.pending);
    const results = this.aggregation?.flush() ?? [];
    const emitted = this.pending;
    this.pending = [];
    const latest = new Map<string, WireRecord>();
    const conflicts = new Map<string, Conflict | null>();
    for (const record of emitted) {
      if (record.topic === "conflicts") {
        conflicts.delete(record.key);
        conflicts.set(record.key, record.value);
        continue;
      }
      const wire = toWire(record);
      latest.set(outboxKey(wire.role, wire.key), wire);
    }
    const records: WireRecord[] = [];
    for (const [key, wire] of latest) {
      const held = this.outbox.get(key);
      if (wire.value === null) {
        // The reader holds nothing for a key never sent, or already withdrawn.
        if (held === undefined) continue;
        this.outbox.delete(key);
      } else {
        if (held !== undefined && held.equals(wire.value)) continue;
        this.outbox.set(key, detachedBytes(wire.value), wire.value.length);
      }
      records.push(wire);
    }
    return { records, results, conflicts: [...conflicts].map(([key, conflict]) => ({ key, conflict })) };
  }

  /**
   * A key this writer wrote, found on its topic after a restart: what its reader must be sent now
   * (null: a tombstone), or undefined when nothing is needed. A task `rebuilt` from an empty state
   * sent every key it holds itself, after anything the lost state sent, so only the keys it no
   * longer holds need a tombstone; a task resumed from a checkpoint sends its current value of
   * every key it finds (its readers may hold a value sent from the state it lost).
   */
  correction(role: StageRole, key: string, rebuilt: boolean): { readonly value: Buffer | null } | undefined {
    const value = this.outbox.get(outboxKey(role, key)) ?? null;
    return rebuilt && value !== null ? undefined : { value };
  }

  /** The same for a result the aggregation stage published. */
  resultCorrection(key: string, rebuilt: boolean): { readonly result: MetricResult | null } | undefined {
    if (this.aggregation === undefined)
      throw new InvariantError({ problem: `the ${this.stage} stage publishes no results` });
    const result = this.aggregation.current(key);
    return rebuilt && result !== null ? undefined : { result };
  }

  /** The aggregation stage's current results, sorted by key. */
  results(): { key: string; json: string; result: MetricResult }[] {
    return this.aggregation?.results() ?? [];
  }

  /** The entity partition's balance figures (benchmarks). */
  entityStats(): { facts: number; bundles: number; subscriptions: number; responses: number } | undefined {
    return this.entities?.stats();
  }
}

function outboxKey(role: StageRole, key: string): string {
  return `${role}\u0000${key}`;
}
