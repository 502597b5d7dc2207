import type { CatalogSummary } from "../../catalog/metric-definitions.ts";
import type { MetricFact } from "../../contract/facts.ts";
import type { EngineConfig } from "../engine-config.ts";
import type { Conflict, FactOrigin } from "../fact-ledger.ts";
import { byUtf8 } from "../key-order.ts";
import { StateStore } from "../state/state-store.ts";
import type { MetricResult, ResultChange } from "../result-record.ts";
import { AggregationPartition } from "./aggregation-stage.ts";
import { EntityPartition } from "./entity-stage.ts";
import { DomainLedgerPartition, FactIdLedgerPartition, type FactLedgerOutcome, type StagePartitions } from "./ledger-stages.ts";
import { partitionOf } from "./partitioner.ts";
import type { StageRecord, StageTopic } from "./stage-records.ts";
import { decodeStageValue, encodeStageValue } from "./stage-wire.ts";

/** Which stage reads a topic. */
const READER: Readonly<Record<Exclude<StageTopic, "conflicts">, "domainLedger" | "entities" | "aggregation">> = {
  claims: "domainLedger",
  admissions: "entities",
  pushes: "entities",
  subscriptions: "entities",
  responses: "entities",
  partials: "aggregation",
};

/**
 * Chooses what is delivered next: one of the non-empty channels (a channel is one writer
 * partition's records to one reader partition, kept in order, as a Kafka partition keeps them),
 * and how many of its records form the batch. The default takes channels in turn and whole.
 */
export interface Schedule {
  channel(count: number): number;
  batch(available: number): number;
  /** Whether the receiving entity partition flushes after this batch, or only once every channel is empty (a commit interval). */
  flushAfterBatch(): boolean;
}

const IN_TURN: Schedule = { channel: () => 0, batch: (available) => available, flushAfterBatch: () => false };

export interface PartitionedEngineOptions {
  /** Partitions of every stage (the topics' partition count). */
  readonly partitions: number;
  readonly schedule?: Schedule;
  /** Every record crosses its hop encoded and decoded, as on a topic (stage-wire.ts). */
  readonly wire?: boolean;
  /** The keyed state of one stage partition (default: in memory); a store on disk is committed by `commit`. */
  readonly state?: (stage: StageName, partition: number) => StateStore;
}

export type StageName = "factLedger" | "domainLedger" | "entities" | "aggregation";

/** Records sent per topic, for the traffic each hop costs. */
export type StageTraffic = Record<StageTopic, number>;

/**
 * The partitioned engine run in one process (docs/engine-state.md §4, as built): the fact ledger
 * by fact_id, the domain ledger by identity, the entity stage by bundle, and the aggregation
 * stage by result group, each on N partitions, exchanging keyed upserts over in-memory channels
 * that keep each writer's order per reader partition and interleave writers as the schedule says.
 *
 * The results, once every record is delivered, equal the single `MetricEngine`'s byte for byte
 * for any N and any schedule (test/property/partitioned-engine.property.test.ts); what is
 * published on the way may differ.
 */
export class PartitionedEngine {
  readonly stages: StagePartitions;
  private readonly factLedger: FactIdLedgerPartition[];
  private readonly domainLedger: DomainLedgerPartition[];
  private readonly entities: EntityPartition[];
  private readonly aggregation: AggregationPartition[];
  /** "reader stage \0 reader partition \0 writer" → records in order. */
  private readonly channels = new Map<string, StageRecord[]>();
  private readonly conflictReports = new Map<string, Conflict>();
  private readonly stores: readonly StateStore[];
  private readonly schedule: Schedule;
  private readonly wire: boolean;
  readonly traffic: StageTraffic = { claims: 0, admissions: 0, pushes: 0, subscriptions: 0, responses: 0, partials: 0, conflicts: 0 };

  constructor(config: EngineConfig, catalog: CatalogSummary, options: PartitionedEngineOptions) {
    const n = options.partitions;
    if (!Number.isInteger(n) || n < 1) throw new Error(`partitions must be a positive integer, got ${n}`);
    this.stages = { factLedger: n, domainLedger: n, entities: n, aggregation: n };
    const state = options.state ?? (() => new StateStore(undefined));
    const stores: StateStore[] = [];
    const storeOf = (stage: StageName, partition: number): StateStore => {
      const store = state(stage, partition);
      stores.push(store);
      return store;
    };
    this.factLedger = Array.from({ length: n }, (_, partition) => new FactIdLedgerPartition(this.stages, storeOf("factLedger", partition)));
    this.domainLedger = Array.from({ length: n }, (_, partition) => new DomainLedgerPartition(this.stages, storeOf("domainLedger", partition)));
    this.entities = Array.from({ length: n }, (_, partition) => new EntityPartition(partition, this.stages, config, storeOf("entities", partition)));
    this.aggregation = Array.from({ length: n }, (_, partition) => new AggregationPartition(catalog, config, storeOf("aggregation", partition)));
    this.stores = stores;
    this.schedule = options.schedule ?? IN_TURN;
    this.wire = options.wire ?? false;
  }

  /** Records one fact at the fact ledger (its partition by fact_id); what follows is delivered by `run`. */
  ingest(fact: MetricFact, origin?: FactOrigin): FactLedgerOutcome {
    const out: StageRecord[] = [];
    const ledger = this.factLedger[partitionOf(fact.fact_id, this.stages.factLedger)] as FactIdLedgerPartition;
    const outcome = ledger.record(fact, origin, out);
    this.send(`ledger:${partitionOf(fact.fact_id, this.stages.factLedger)}`, out);
    return outcome;
  }

  /**
   * Delivers records until every channel is empty and every partition has flushed, and returns
   * the result changes published on the way (a key may change more than once).
   */
  run(): ResultChange[] {
    const published: ResultChange[] = [];
    for (;;) {
      const open = [...this.channels.keys()].filter((name) => (this.channels.get(name)?.length ?? 0) > 0).sort(byUtf8);
      if (open.length === 0) {
        const flushing = this.flushAll(published);
        if (!flushing) return published;
        continue;
      }
      const name = open[this.schedule.channel(open.length) % open.length] as string;
      const queue = this.channels.get(name) as StageRecord[];
      const batch = queue.splice(0, Math.max(1, Math.min(queue.length, this.schedule.batch(queue.length))));
      const [stage, partition] = name.split("\u0000") as [string, string];
      this.deliver(stage, Number(partition), batch, published);
    }
  }

  /**
   * Delivers everything (every partition flushed), then commits every stage partition's state (on
   * disk: written, and the cache evicted to its budget once it lands). A stream task commits at
   * the same point: after its outputs are sent and before its offsets are.
   */
  async commit(): Promise<ResultChange[]> {
    const published = this.run();
    await Promise.all(this.stores.map((store) => store.commit()));
    await Promise.all(this.stores.map((store) => store.landed()));
    return published;
  }

  /** Every current result, sorted by key (delivers everything first). */
  results(): { key: string; json: string; result: MetricResult }[] {
    this.run();
    return this.aggregation.flatMap((partition) => partition.results()).sort((a, b) => byUtf8(a.key, b.key));
  }

  /** Per entity partition: facts indexed, bundles owned, subscriptions served (the balance of the keying). */
  entityStats(): { facts: number; bundles: number; subscriptions: number }[] {
    return this.entities.map((partition) => partition.stats());
  }

  /** Identity conflicts and Deliveries with later TERMINAL summaries, sorted by identity. */
  conflicts(): Conflict[] {
    this.run();
    return [...this.conflictReports.values()].sort((a, b) => byUtf8(a.identity, b.identity));
  }

  private deliver(stage: string, partition: number, batch: readonly StageRecord[], published: ResultChange[]): void {
    const out: StageRecord[] = [];
    switch (stage) {
      case "domainLedger": {
        const reader = this.domainLedger[partition] as DomainLedgerPartition;
        for (const record of batch) if (record.topic === "claims") reader.receive(record.key, record.value, out);
        break;
      }
      case "entities": {
        const reader = this.entities[partition] as EntityPartition;
        for (const record of batch) reader.receive(record, out);
        // A stream task flushes at its commit: after this batch, or once the channels are empty.
        if (this.schedule.flushAfterBatch()) reader.flush(out);
        break;
      }
      case "aggregation": {
        const reader = this.aggregation[partition] as AggregationPartition;
        for (const record of batch) if (record.topic === "partials") reader.receive(record.key, record.value);
        published.push(...reader.flush());
        break;
      }
      default:
        throw new Error(`no stage ${stage}`);
    }
    this.send(`${stage}:${partition}`, out);
  }

  private flushAll(published: ResultChange[]): boolean {
    let sent = false;
    this.entities.forEach((partition, index) => {
      if (partition.settled) return;
      const out: StageRecord[] = [];
      partition.flush(out);
      sent ||= out.length > 0;
      this.send(`entities:${index}`, out);
    });
    for (const partition of this.aggregation) if (!partition.settled) published.push(...partition.flush());
    return sent;
  }

  private send(writer: string, records: readonly StageRecord[]): void {
    for (const sent of records) {
      this.traffic[sent.topic]++;
      if (sent.topic === "conflicts") {
        if (sent.value === null) this.conflictReports.delete(sent.key);
        else this.conflictReports.set(sent.key, sent.value);
        continue;
      }
      const record = this.wire ? decodeStageValue(sent, encodeStageValue(sent)) : sent;
      const name = `${READER[record.topic]}\u0000${record.partition}\u0000${writer}`;
      const queue = this.channels.get(name);
      if (queue === undefined) this.channels.set(name, [record]);
      else queue.push(record);
    }
  }
}
