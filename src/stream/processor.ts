import type { AgentEvent, MetricFact } from "../contract/facts.ts";
import type { Rejection } from "../contract/rejection.ts";
import type { Conflict } from "../metrics/fact-ledger.ts";
import type { MetricResult } from "../contract/result-record.ts";
import type { RunStateSummary, TripwireAlert } from "../tripwires/index.ts";
import type { StoreCodec } from "./stores/changelogging-store.ts";
import type { KeyValueStore } from "./stores/key-value-store.ts";
import type { ProcessorName } from "./topology.ts";
import type { TopicRole } from "./topic-names.ts";

/**
 * The processor contract: a processor is pure over a batch of decoded source records and returns
 * typed sink records addressed by topic role; the transport does every decode, encode and write.
 * The context Kafka Streams passes in is the return value here, so a test calls `process` and reads it.
 */

/** Where a record was read: a topic position, or a line of an input file (the embedded transport). */
export type SourcePosition = TopicPosition | FilePosition;

export interface TopicPosition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

export interface FilePosition {
  /** The input file as it was named. */
  readonly file: string;
  /** The 1-based line of an NDJSON file, or the 1-based record index of an Avro container. */
  readonly line: number;
}

export function isTopicPosition(position: SourcePosition): position is TopicPosition {
  return "topic" in position;
}

/**
 * How a conflict report names where a version was read: `topic/partition/offset` on Kafka, the
 * line number in a file (contract revision 2 §3). The engine keeps it with each fact version.
 */
export function originOf(position: SourcePosition): string | number {
  return isTopicPosition(position) ? `${position.topic}/${position.partition}/${position.offset}` : position.line;
}

/** The record as read, kept for a dead letter: its key and value bytes, or a file's text. */
export type OriginalRecord =
  { readonly key: Buffer | null; readonly value: Buffer | null } | { readonly text: string | null };

export interface SourceRecord<V> {
  readonly position: SourcePosition;
  readonly value: V;
  readonly original: OriginalRecord;
}

export interface Batch<V> {
  /** The source partition (0 for a single-partition source or a file). */
  readonly partition: number;
  readonly records: readonly SourceRecord<V>[];
  /** Records behind the source's head after this batch (0 at the head; unknown is Infinity). */
  readonly backlog: number;
}

/**
 * A dead letter as a value: a rejected record (or a non-rejecting report: an invalid measure), or
 * a conflict of the engine's ledger. The transport renders it: the dead-letter topic's Avro record
 * keyed by source coordinates, or a line of the replay's dead-letter file.
 */
export type DeadLetter =
  | {
      readonly kind: "record";
      readonly rejection: Rejection;
      /** False for a report that does not reject its record (INVALID_MEASURE). */
      readonly recordRejected: boolean;
      readonly position: SourcePosition;
      readonly factId: string | null;
      /** The record's original form, for rejected records only (null for reports). */
      readonly original: OriginalRecord | null;
    }
  | {
      readonly kind: "conflict";
      readonly conflict: Conflict;
      readonly position: SourcePosition;
      readonly factId: string;
    };

/** An accepted metric fact on its way to the engine, with where ingest read it. */
export interface EngineFact {
  readonly fact: MetricFact;
  readonly source: SourcePosition;
}

/**
 * An internal record its reader cannot read (a layout from a newer version, damaged bytes): the
 * processor dead-letters it with its position instead of dropping it.
 */
export interface UnreadableRecord {
  readonly unreadable: string;
}

/** An agent event on its way to the run monitor; `bytes` is the record as ingest read it (Kafka). */
export interface AgentEventRecord {
  readonly event: AgentEvent;
  readonly bytes: Buffer | null;
}

/** What each topic role carries, as a domain value. */
export interface SinkValues {
  readonly facts: never;
  readonly deadLetters: DeadLetter;
  readonly agentEvents: AgentEventRecord;
  readonly engineFacts: EngineFact;
  /** The engine's contributions changelog (encoded by the engine: its state's own binary layout), or null (a tombstone). */
  readonly engineContributions: Buffer | null;
  /** A result, or null: the key's result no longer exists (a tombstone). */
  readonly results: MetricResult | null;
  readonly alerts: TripwireAlert;
  readonly runState: RunStateSummary;
  /** A serialised run state, or null (a tombstone). */
  readonly runMonitorChangelog: string | null;
  /** An accepted fact for the partitioned engine (placed by fact_id). */
  readonly stageFacts: EngineFact;
  readonly stageClaims: StageWrite;
  readonly stageEntities: StageWrite;
  readonly stagePartials: StageWrite;
}

/** A record between the partitioned engine's stages: already encoded, with the partition its key is placed on. */
export interface StageWrite {
  readonly value: Buffer | null;
  readonly partition: number;
}

/**
 * A record addressed by topic role. `writer` names the stage partition that wrote it (the
 * partitioned engine's records carry it as a header, so a restarted writer finds what it wrote).
 */
export type SinkRecord = {
  readonly [R in TopicRole]: {
    readonly topic: R;
    readonly key: string;
    readonly value: SinkValues[R];
    readonly writer?: string;
  };
}[TopicRole];

export interface ProcessResult {
  readonly outputs: readonly SinkRecord[];
}

export const NOTHING: ProcessResult = { outputs: [] };

/** Counts and gauges a processor reports (Prometheus names); in memory, no I/O. */
export interface Metrics {
  count(name: string, help: string, labels?: Readonly<Record<string, string>>, delta?: number): void;
  gauge(name: string, help: string, labels: Readonly<Record<string, string>>, value: number): void;
}

/** The stores of one task, by the names topology.ts gives them. */
export type StoreSet = ReadonlyMap<string, KeyValueStore<unknown>>;

/**
 * One source partition's processing: `process` for each live batch, and the capabilities a task
 * has beyond it, each named and optional. The transports read them through one module
 * (runtime/task-capabilities.ts), which says what a task without one does.
 */
export interface Task<V> {
  process(batch: Batch<V>): ProcessResult;
  /** Its store's changelog is its own source (the engines): restored from the source, then live. */
  readonly sourceRestore?: SourceRestore<V>;
  /** It keeps its state on local disk with a checkpoint, so it may resume from there. */
  readonly localState?: LocalTaskState;
  /** It writes a log of its derived state, loaded instead of evaluating the source again. */
  readonly changelogLoad?: ChangelogLoad;
  /** Its outputs are keyed upserts it must keep true for their readers after a crash (the stages). */
  readonly reconciliation?: Reconciliation;
}

/**
 * A task given its source's history first through `restore`, publishing nothing, then `goLive`
 * once, then live batches.
 */
export interface SourceRestore<V> {
  /** Source records replayed into the state; publishes nothing, but may write its changelog. */
  restore(records: readonly SourceRecord<V>[]): ProcessResult;
  /**
   * What going live writes, in pages: the transport settles and writes each page before it asks
   * for the next, so a comparison of the whole result table holds one page at a time. Nothing
   * else runs on the task until every page is taken.
   */
  goLive(): Iterable<ProcessResult>;
}

/** State on local disk: the runtime reads the source from where it stands, and says when it may checkpoint. */
export interface LocalTaskState {
  /**
   * Where the state stands, given the source partition's end offset: the next offset it does not
   * reflect. A checkpoint beyond the end (the topic was recreated) is dropped, and it says 0.
   */
  resumeFrom(sourceEnd: string): string;
  /** The writes of every batch before `nextOffset` are acknowledged: state up to there may be checkpointed. */
  committed(nextOffset: string): Promise<void>;
  /** The partition is revoked or the member stops: release local state (after the last `committed`). */
  close(): Promise<void>;
}

/**
 * The task's log of derived state (a source-restored store's `log`, topology.ts), read to its end
 * before the source when the task has no local state (`resumeFrom` said offset 0).
 */
export interface ChangelogLoad {
  load(key: string, value: Buffer | null): Promise<void>;
  /** What loading the log restored, for the log line. */
  loaded(): Readonly<Record<string, string | number>>;
}

/**
 * What the task may have written that its local state does not reflect. Before the task goes live,
 * the transport reads these topics from the offsets given (every partition from 0 when none is
 * given), and for each record carrying `writer` asks `reconcile`.
 */
export interface Reconciliation {
  writtenSince(): WrittenSince;
  /** A key this task wrote (found on `partition` of the role's topic): what its readers must hold now, or undefined to leave it. */
  reconcile(role: TopicRole, key: string, partition: number): SinkRecord | undefined;
}

export interface WrittenSince {
  readonly writer: string;
  /** Per topic role: partition → the first offset to read. */
  readonly from: ReadonlyMap<TopicRole, ReadonlyMap<number, string>>;
}

/** What a transport offers a task besides its stores and metrics. */
export interface TaskContext {
  /** The end offsets, per partition, of the given topics now (for a checkpoint: where what is written next will be). */
  readonly topicEnds: (roles: readonly TopicRole[]) => Promise<ReadonlyMap<TopicRole, ReadonlyMap<number, string>>>;
}

export interface Processor<V> {
  readonly name: ProcessorName;
  /**
   * How the values of its stores (by the names topology.ts gives them) are held in their
   * changelogs; a store not named here holds its values already encoded (bytes).
   */
  readonly storeCodecs?: Readonly<Record<string, StoreCodec<unknown>>>;
  /**
   * The store a task of `partition` keeps `store` in, when not in memory (the single engine's
   * published results, on disk beside its state). The runtime restores and changelogs it as any
   * other, and closes it when the task closes.
   */
  openStore?(store: string, partition: number): KeyValueStore<unknown> | undefined;
  /** A task for one assigned source partition, over that partition's restored stores. */
  open(partition: number, stores: StoreSet, metrics: Metrics, context?: TaskContext): Task<V>;
}
