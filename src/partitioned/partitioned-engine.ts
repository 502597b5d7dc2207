import type { CatalogSummary } from "../catalog/metric-definitions.ts";
import type { MetricFact } from "../contract/facts.ts";
import type { EngineConfig } from "../metrics/engine-config.ts";
import type { Conflict, FactOrigin } from "../metrics/fact-ledger.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import { StateStore } from "../state/state-store.ts";
import type { MetricResult, ResultChange } from "../contract/result-record.ts";
import { samePartitions, type FactLedgerOutcome, type StagePartitions } from "./ledger-stages.ts";
import { partitionOf } from "../kafka/key-partitioner.ts";
import type { StageTopic } from "./stage-records.ts";
import { READER_OF, STAGE_NAMES, StageTask, type StageFlush, type StageName, type WireRecord } from "./stage-task.ts";
import { InvariantError } from "../errors.ts";

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
  /** The keyed state of one stage partition (default: in memory); a store on disk is committed by `commit`. */
  readonly state?: (stage: StageName, partition: number) => StateStore;
}

/** Records sent per kind of stage record, for the traffic each hop costs. */
export type StageTraffic = Record<StageTopic, number>;

/**
 * The partitioned engine run in one process (docs/engine-state.md §4, as built): the fact ledger
 * by fact_id, the domain ledger by identity, the entity stage by bundle, and the aggregation
 * stage by result group, each on N partitions of `StageTask`s (the same tasks the Kafka stage
 * processors run), exchanging their topics' records (keys and encoded values) over in-memory
 * channels that keep each writer's order per reader partition and interleave writers as the
 * schedule says.
 *
 * The results, once every record is delivered, equal the single `MetricEngine`'s byte for byte
 * for any N and any schedule (test/property/partitioned-engine.property.test.ts); what is
 * published on the way may differ.
 */
export class PartitionedEngine {
  readonly stages: StagePartitions;
  private readonly tasks: Readonly<Record<StageName, readonly StageTask[]>>;
  /** "reader stage \0 reader partition \0 writer" → records in order. */
  private readonly channels = new Map<string, WireRecord[]>();
  private readonly conflictReports = new Map<string, Conflict>();
  private readonly stores: readonly StateStore[];
  private readonly schedule: Schedule;
  readonly traffic: StageTraffic = {
    claims: 0,
    admissions: 0,
    pushes: 0,
    subscriptions: 0,
    responses: 0,
    partials: 0,
    conflicts: 0,
  };

  constructor(config: EngineConfig, catalog: CatalogSummary, options: PartitionedEngineOptions) {
    const n = options.partitions;
    if (!Number.isInteger(n) || n < 1)
      throw new InvariantError({ problem: `partitions must be a positive integer, got ${n}` });
    this.stages = samePartitions(n);
    const state = options.state ?? (() => new StateStore(undefined));
    const stores: StateStore[] = [];
    const tasksOf = (stage: StageName): StageTask[] =>
      Array.from({ length: n }, (_, partition) => {
        const store = state(stage, partition);
        stores.push(store);
        return new StageTask(stage, partition, this.stages, config, catalog, store);
      });
    this.tasks = {
      factLedger: tasksOf("factLedger"),
      domainLedger: tasksOf("domainLedger"),
      entities: tasksOf("entities"),
      aggregation: tasksOf("aggregation"),
    };
    this.stores = stores;
    this.schedule = options.schedule ?? IN_TURN;
  }

  /** Records one fact at the fact ledger (its partition by fact_id); what follows is delivered by `run`. */
  ingest(fact: MetricFact, origin?: FactOrigin): FactLedgerOutcome {
    const partition = partitionOf(fact.fact_id, this.stages.factLedger);
    const ledger = this.task("factLedger", partition);
    const outcome = ledger.ingest(fact, origin);
    this.send(ledger, ledger.flush(), []);
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
      const queue = this.channels.get(name) as WireRecord[];
      const batch = queue.splice(0, Math.max(1, Math.min(queue.length, this.schedule.batch(queue.length))));
      const [stage, partition] = name.split("\u0000") as [StageName, string];
      const reader = this.task(stage, Number(partition));
      for (const record of batch) reader.receive(record.key, record.value);
      // A stream task flushes at its commit: the ledgers and the aggregation after every batch, the
      // entity stage after this batch or once the channels are empty (a commit interval).
      if (stage !== "entities" || this.schedule.flushAfterBatch()) this.send(reader, reader.flush(), published);
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
    return this.tasks.aggregation.flatMap((task) => task.results()).sort((a, b) => byUtf8(a.key, b.key));
  }

  /** Per entity partition: facts indexed, bundles owned, subscriptions served (the balance of the keying). */
  entityStats(): { facts: number; bundles: number; subscriptions: number }[] {
    return this.tasks.entities.flatMap((task) => task.entityStats() ?? []);
  }

  /** Identity conflicts and Deliveries with later TERMINAL summaries, sorted by identity. */
  conflicts(): Conflict[] {
    this.run();
    return [...this.conflictReports.values()].sort((a, b) => byUtf8(a.identity, b.identity));
  }

  private task(stage: StageName, partition: number): StageTask {
    return this.tasks[stage][partition] as StageTask;
  }

  private flushAll(published: ResultChange[]): boolean {
    let sent = false;
    for (const stage of STAGE_NAMES) {
      for (const task of this.tasks[stage]) {
        if (task.settled) continue;
        const flushed = task.flush();
        sent ||= flushed.records.length > 0;
        this.send(task, flushed, published);
      }
    }
    return sent;
  }

  private send(writer: StageTask, flushed: StageFlush, published: ResultChange[]): void {
    published.push(...flushed.results);
    for (const { key, conflict } of flushed.conflicts) {
      this.traffic.conflicts++;
      if (conflict === null) this.conflictReports.delete(key);
      else this.conflictReports.set(key, conflict);
    }
    for (const record of flushed.records) {
      this.traffic[record.topic]++;
      const name = `${READER_OF[record.role]}\u0000${record.partition}\u0000${writer.stage}:${writer.partition}`;
      const queue = this.channels.get(name);
      if (queue === undefined) this.channels.set(name, [record]);
      else queue.push(record);
    }
  }
}
