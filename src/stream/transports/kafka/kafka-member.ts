import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { Cause, Effect, Exit, Fiber, Runtime, Schedule, type Scope } from "effect";
import type { Admin, Consumer, EachBatchPayload, Kafka, KafkaMessage, Message, Producer, TopicMessages } from "kafkajs";
import type { Logger } from "pino";
import { deadLetterKey, type DeadLetterRecord } from "../../../contract/dead-letter.ts";
import { EncodeError, KafkaIoError, ProcessorError, RegistryError } from "../../../errors.ts";
import { readTopicsFrom, readTopicToEnd } from "../../../kafka/read-topic.ts";
import { partitionOf } from "../../../metrics/partitioned/partitioner.ts";
import { isStageRole } from "../../../metrics/partitioned/stage-task.ts";
import { sendBounded } from "../../../kafka/send-bounded.ts";
import { decodeAgentEventRecord, encodeAgentEvent } from "../../../kafka/serde/agent-events-record.ts";
import { decodeFact } from "../../../kafka/serde/decode-fact.ts";
import { encodeEngineFact, readEngineFact } from "../../../kafka/serde/engine-facts-record.ts";
import type { TopicSerde } from "../../../kafka/serde/topic-serde.ts";
import { isTopicPosition, NOTHING, type DeadLetter, type EngineFact, type Processor, type ProcessResult, type SinkRecord, type SourceRecord, type Task, type TaskContext, type TopicPosition, type UnreadableRecord } from "../../processor.ts";
import { CHECKPOINT_INTERVAL_MS } from "../../processors/checkpoints.ts";
import { conflictRejection } from "../../processors/conflict-rejection.ts";
import { closeTaskStores, countDeadLetter, createTaskStores, settleBatch, storeSet, type ChangelogWrite, type TaskStores } from "../../runtime/task-writes.ts";
import type { StreamConfig } from "../../runtime/stream-config.ts";
import type { Telemetry } from "../../runtime/telemetry.ts";
import { sendOrder, TOPOLOGY, type ProcessorName } from "../../topology.ts";
import type { TopicNames, TopicRole } from "../../topic-names.ts";

/** How often a member commits the offsets whose batches' writes are acknowledged. */
export const COMMIT_INTERVAL_MS = 1_000;
/** Source partitions one member processes at a time. */
const PARTITIONS_CONCURRENTLY = 3;
/** The longest interval between a member's heartbeats; shorter when a third of the session timeout is (Kafka's advice). */
const MAX_HEARTBEAT_INTERVAL_MS = 3_000;

/** What an instance asks a member after its scope closed. */
export interface MemberCommits {
  /** True when the member processed records whose offsets it could not commit. */
  readonly uncommitted: () => boolean;
}

/** What every member of one instance shares. */
export interface KafkaEnvironment {
  readonly kafka: Kafka;
  readonly registry: SchemaRegistry;
  readonly serde: TopicSerde;
  readonly topics: TopicNames;
  readonly config: StreamConfig;
  readonly logger: Logger;
  readonly telemetry: Telemetry;
  /** The partitioned engine's partition count (topics.json): where ingest places a fact on the stage facts topic. */
  readonly enginePartitions: number;
  /**
   * Declares the instance broken (a consumer kafkajs will not restart, a failing processor or
   * encoding): /healthz turns 503 and `agentops run` exits 1, so a supervisor restarts the instance.
   */
  readonly fail: (error: MemberFailure) => void;
}

/** The failures that stop an instance: retrying the batch cannot heal them. */
export type MemberFailure = ProcessorError | EncodeError | KafkaIoError | RegistryError;

/** What handling one fetched batch can fail with: the broker or registry (kafkajs retries the batch), or a bug (fatal). */
type BatchError = KafkaIoError | RegistryError | ProcessorError | EncodeError;

/** How the records of each source topic are decoded for its processor. */
function sourceDecoder(environment: KafkaEnvironment, role: TopicRole): (message: KafkaMessage) => Promise<unknown> {
  if (role === "engineFacts" || role === "stageFacts") return (message) => Promise.resolve(message.value === null ? { unreadable: "a record without a value" } : decodeToEngineFact(message.value));
  // The partitioned engine's stage topics: the stage decodes its records itself (its key names their kind).
  if (isStageRole(role)) {
    return (message) => Promise.resolve(message.key === null ? { unreadable: "a stage record without a key" } : { key: message.key.toString("utf8"), value: message.value });
  }
  // Agent events forwarded by ingest are in the internal layout (read without validating again);
  // producers that publish agent events directly use the registry's Avro (validated here, once).
  if (role === "agentEvents") return (message) => decodeAgentEventRecord(environment.registry, message.value);
  return (message) => decodeFact(environment.registry, message.value);
}

/** An engine-facts record as the engine reads it: the fact with where ingest read it, or why it cannot be read. */
function decodeToEngineFact(value: Buffer): EngineFact | UnreadableRecord {
  const reading = readEngineFact(value);
  return reading.ok ? { fact: reading.fact, source: reading.source } : { unreadable: reading.detail };
}

interface PartitionTask {
  readonly task: Task<unknown>;
  readonly stores: TaskStores;
  /** Offset (exclusive) up to which the source is replayed into the task's state; undefined once live. */
  restoreEnd: bigint | undefined;
  /** When the replay began and from which offset, for its rate. */
  restoreStarted: { readonly at: number; readonly offset: bigint } | undefined;
  /** A batch's writes whose send failed, sent again before the next batch's. */
  unsent: { readonly outputs: readonly SinkRecord[]; readonly changelog: readonly ChangelogWrite[] } | undefined;
  /** The stores hold writes not yet acknowledged on their changelogs: they may not be checkpointed. */
  storesAhead: boolean;
  /** When the stores that keep their contents (on disk) were last checkpointed. */
  storesCheckpointedAt: number;
}

/** Runs a processor's code, turning what it throws into the processor's typed failure. */
function processorCall<A>(processor: ProcessorName, call: () => A): Effect.Effect<A, ProcessorError> {
  return Effect.try({ try: call, catch: (cause) => new ProcessorError({ processor, cause }) });
}

/**
 * One consumer-group member for any processor of topology.ts, for the life of the enclosing
 * scope, on its own idempotent producer. kafkajs is the transport underneath; what the member does
 * is Effect programs run through the scope's runtime from kafkajs' callbacks:
 *
 * - on every assignment, `restore`: the tasks' stores from their changelogs, or, for a processor
 *   whose source is its changelog, a replay of the source from offset 0 through `restore`, then
 *   `goLive`;
 * - for each fetched batch, `handleBatch`: decode, process, encode, send to the declared sinks
 *   (the topology's `first` sinks in a request of their own, ahead of the rest), then mark the
 *   batch's offsets acknowledged;
 * - commits off the latency path: acknowledged offsets are committed every COMMIT_INTERVAL_MS, when
 *   the group rebalances, and on shutdown, never before the batch's writes are acknowledged
 *   (at-least-once), so no fetch waits on a commit round trip;
 * - shutdown: no new batch starts, the batches in flight finish, the acknowledged offsets are
 *   committed, then the consumer leaves the group.
 *
 * A broker or registry failure (`KafkaIoError`, `RegistryError`) goes back to kafkajs, which
 * retries the batch and restarts a crashed consumer (how a broker restart is survived); a failing
 * processor or encoding (`ProcessorError`, `EncodeError`), or a consumer kafkajs will not restart,
 * fails the instance.
 */
export function kafkaMember(environment: KafkaEnvironment, processor: Processor<never>, producer: Producer): Effect.Effect<MemberCommits, KafkaIoError, Scope.Scope> {
  const { kafka, config, telemetry, logger, topics } = environment;
  const name: ProcessorName = processor.name;
  const node = TOPOLOGY[name];
  const sourceTopic = topics[node.source];
  const groupId = `${config.groupPrefix}.${name}`;
  const replaysSource = node.stores.some((store) => store.restore === "source");
  const logRole = node.stores.find((store) => store.restore === "source")?.log;
  // Every member commits its offsets (consumer lag is read from them). A processor whose source is
  // its changelog resumes from its own checkpoint (Task.resumeFrom), not from the committed offset.
  const commits = true;
  const decode = sourceDecoder(environment, node.source);
  const order = sendOrder(name).map((group) => group.map((role) => topics[role]));
  const tasks = new Map<number, PartitionTask>();
  /** Per source partition: the next offset to read, once the writes of the batches before it are acknowledged. */
  const acknowledged = new Map<number, string>();
  /** Per source partition: the offset the group coordinator holds for this member. */
  const committed = new Map<number, string>();
  /** Source partitions whose lag this member has reported. */
  const lagReported = new Set<number>();
  let inFlight = 0;
  let stopping = false;
  /** How often the consumer heartbeats, and how often a batch waiting for its assignment's restore does. */
  const heartbeatInterval = Math.min(MAX_HEARTBEAT_INTERVAL_MS, Math.floor(config.sessionTimeoutMs / 3));
  const uncommitted = (): boolean => commits && (inFlight > 0 || [...acknowledged].some(([partition, offset]) => committed.get(partition) !== offset));

  const write = (outputs: readonly SinkRecord[], changelog: readonly ChangelogWrite[]): Effect.Effect<void, KafkaIoError | EncodeError> =>
    Effect.gen(function* () {
      const byTopic = new Map<string, Message[]>(node.sinks.map((sink) => [topics[sink.topic], []]));
      // One program for the batch's encodings (a batch has thousands of records): the record that fails names its topic.
      let encoding = "";
      yield* Effect.tryPromise({
        try: async () => {
          for (const output of outputs) {
            encoding = topics[output.topic];
            byTopic.get(encoding)?.push(await encodeOutput(environment, output));
          }
        },
        catch: (cause) => new EncodeError({ topic: encoding, cause }),
      });
      for (const entry of changelog) byTopic.get(topics[entry.topic])?.push({ key: entry.key, value: entry.value, ...(entry.partition === undefined ? {} : { partition: entry.partition }) });
      for (const group of order) {
        const topicMessages: TopicMessages[] = group.map((topic) => ({ topic, messages: byTopic.get(topic) ?? [] })).filter((entry) => entry.messages.length > 0);
        if (topicMessages.length === 0) continue;
        yield* Effect.tryPromise({ try: () => sendBounded(producer, topicMessages), catch: (cause) => new KafkaIoError({ operation: `send ${name} outputs`, cause }) });
      }
      const results = changelog.filter((entry) => entry.topic === "results").length + outputs.filter((output) => output.topic === "results").length;
      if (results > 0) telemetry.count("agentops_results_published_total", "Result upserts and tombstones written to the results topic", {}, results);
    });

  const settleAndWrite = (entry: PartitionTask, partition: number, result: ProcessResult): Effect.Effect<readonly ChangelogWrite[], KafkaIoError | EncodeError | ProcessorError> =>
    Effect.gen(function* () {
      entry.storesAhead = true;
      const settled = yield* Effect.tryPromise({
        try: () => settleBatch(name, result, entry.stores, partition, (value) => environment.serde.encodeResult(value)),
        catch: (cause) => new ProcessorError({ processor: name, cause }),
      });
      // Writes that failed are sent again ahead of the next ones: kafkajs retries the batch, but the
      // task has already applied it (its records are redeliveries now, its stores hold the values),
      // so the retry alone would not produce them again.
      const outputs = [...(entry.unsent?.outputs ?? []), ...settled.outputs];
      const changelog = [...(entry.unsent?.changelog ?? []), ...settled.changelog];
      entry.unsent = { outputs, changelog };
      yield* write(outputs, changelog);
      entry.unsent = undefined;
      entry.storesAhead = false;
      return settled.changelog;
    });

  /** The rebuilt state's table written through the restored stores: only what differs is written. */
  const goLive = (entry: PartitionTask, partition: number): Effect.Effect<void, KafkaIoError | EncodeError | ProcessorError> =>
    Effect.gen(function* () {
      entry.restoreEnd = undefined;
      const pages = yield* processorCall(name, () => (entry.task.goLive?.() ?? [NOTHING])[Symbol.iterator]());
      let results = 0;
      let upserts = 0;
      let tombstones = 0;
      for (;;) {
        // The task renders a page only when asked (its code runs here), so a failure is the task's.
        const page = yield* processorCall(name, () => pages.next());
        if (page.done === true) break;
        const written = yield* settleAndWrite(entry, partition, page.value);
        results += page.value.outputs.filter((output) => output.topic === "results" && output.value !== null).length;
        const pageUpserts = written.filter((change) => change.value !== null).length;
        upserts += pageUpserts;
        tombstones += written.length - pageUpserts;
      }
      if (entry.task.writtenSince !== undefined) yield* reconcile(entry, partition);
      logger.info({ processor: name, partition, results, upserts, tombstones, stage: "live" }, `${name} state rebuilt; results reconciled; live`);
    });

  /**
   * A partitioned engine stage's task, before it goes live: what it wrote since its checkpoint
   * (everything, without one) is read back from its output topics, and every key it wrote there is
   * set to what the task holds now, so no reader keeps a value sent from state the task lost.
   */
  const reconcile = (entry: PartitionTask, partition: number): Effect.Effect<void, KafkaIoError | EncodeError | ProcessorError> =>
    Effect.gen(function* () {
      const since = yield* processorCall(name, () => entry.task.writtenSince?.());
      if (since === undefined) return;
      const roleOf = new Map([...since.from.keys()].map((role) => [topics[role], role] as const));
      const from = new Map([...since.from].map(([role, starts]) => [topics[role], new Map([...starts].map(([at, offset]) => [at, BigInt(offset)] as const))] as const));
      const corrections = new Map<string, SinkRecord>();
      let failure: unknown;
      const started = performance.now();
      const read = yield* Effect.tryPromise({
        try: () =>
          readTopicsFrom(kafka, from, (message, topic, at) => {
            const role = roleOf.get(topic);
            if (role === undefined || message.key === null || failure !== undefined || headerText(message.headers?.[WRITER_HEADER]) !== since.writer) return;
            const key = message.key.toString("utf8");
            try {
              const correction = entry.task.reconcile?.(role, key, at);
              if (correction !== undefined) corrections.set(`${topic}\u0000${key}`, correction);
            } catch (error) {
              failure = error;
            }
          }),
        catch: (cause) => new KafkaIoError({ operation: `read back what ${since.writer} wrote`, cause }),
      });
      if (failure !== undefined) return yield* Effect.fail(new ProcessorError({ processor: name, cause: failure }));
      yield* settleAndWrite(entry, partition, { outputs: [...corrections.values()] });
      const seconds = (performance.now() - started) / 1000;
      logger.info({ processor: name, partition, writer: since.writer, read, corrections: corrections.size, seconds: Number(seconds.toFixed(3)), stage: "reconciled" }, `${name} outputs read back and reconciled`);
    });

  /** One admin client for the member's tasks' offset lookups (a stage task asks at every checkpoint), connected on first use. */
  let admin: Promise<Admin> | undefined;
  const sharedAdmin = (): Promise<Admin> => {
    admin ??= (async () => {
      const client = kafka.admin();
      await client.connect();
      return client;
    })().catch((error: unknown) => {
      admin = undefined;
      throw error;
    });
    return admin;
  };
  /** What a task may ask of the transport besides its stores. */
  const context: TaskContext = {
    topicEnds: async (roles) => {
      const client = await sharedAdmin();
      const ends = new Map<TopicRole, Map<number, string>>();
      for (const role of roles) ends.set(role, new Map((await client.fetchTopicOffsets(topics[role])).map((entry) => [entry.partition, entry.high] as const)));
      return ends;
    },
  };

  const readChangelogs = (partitions: readonly number[]): Effect.Effect<Map<number, TaskStores>, KafkaIoError | RegistryError | ProcessorError> =>
    Effect.gen(function* () {
      const storesByPartition = new Map<number, TaskStores>();
      /** Stores not yet handed to a task are released if the restore fails (those on disk hold a directory). */
      const release = Effect.promise(async () => {
        for (const stores of storesByPartition.values()) await closeTaskStores(stores).catch(() => undefined);
      });
      const fill = Effect.gen(function* () {
        for (const partition of partitions) storesByPartition.set(partition, yield* processorCall(name, () => createTaskStores(processor, partition)));
        for (const spec of node.stores) {
          if (spec.restore === "source") continue;
          const changelogTopic = topics[spec.changelog];
          const started = performance.now();
          // Each task's store says where its changelog is read from (a store on disk reflects what
          // lies before its checkpoint); the topic is read from the earliest of them.
          const ends = yield* Effect.tryPromise({ try: () => context.topicEnds([spec.changelog]), catch: (cause) => new KafkaIoError({ operation: `read ${changelogTopic} end offsets`, cause }) });
          const endOffsets = new Map([...(ends.get(spec.changelog) ?? new Map<number, string>())].map(([partition, offset]) => [partition, BigInt(offset)] as const));
          const format = yield* tableFormat(spec);
          const starts = new Map([...storesByPartition].map(([partition, stores]) => [partition, stores.byName.get(spec.name)?.changelogStart(endOffsets, format) ?? new Map<number, bigint>()] as const));
          const from = new Map<number, bigint>();
          for (const [changelogPartition, end] of endOffsets) {
            const wanted = [...starts].filter(([partition]) => spec.restore !== "partition" || partition === changelogPartition).map(([, start]) => start.get(changelogPartition) ?? 0n);
            // A store restored per partition reads only its own partitions of the changelog.
            from.set(changelogPartition, wanted.length === 0 ? end : wanted.reduce((least, start) => (start < least ? start : least)));
          }
          logger.info({ processor: name, store: spec.name, changelog: changelogTopic, partitions, from: Object.fromEntries([...from].map(([partition, offset]) => [partition, offset.toString()])), stage: "restore-begin" }, "restoring store from its changelog");
          const records = yield* Effect.tryPromise({
            try: () =>
              readTopicsFrom(kafka, new Map([[changelogTopic, from]]), (message, _topic, changelogPartition) => {
                const key = message.key?.toString("utf8");
                if (key === undefined) return;
                const offset = BigInt(message.offset);
                for (const [partition, stores] of storesByPartition) {
                  if (spec.restore === "partition" && partition !== changelogPartition) continue;
                  // A store that already reflects this record (it lies before its checkpoint) skips it.
                  if (offset < (starts.get(partition)?.get(changelogPartition) ?? 0n)) continue;
                  stores.byName.get(spec.name)?.restore(key, message.value);
                }
              }),
            catch: (cause) => new KafkaIoError({ operation: `restore ${spec.name} from ${changelogTopic}`, cause }),
          });
          const held = [...storesByPartition.values()].reduce((sum, stores) => sum + (stores.byName.get(spec.name)?.size ?? 0), 0);
          const seconds = (performance.now() - started) / 1000;
          logger.info({ processor: name, store: spec.name, records, held, seconds: Number(seconds.toFixed(3)), stage: "restore-end" }, "store restored");
        }
      });
      yield* fill.pipe(Effect.tapError(() => release));
      return storesByPartition;
    });

  /** Per source partition: its end offset, and the group's committed offset (absent: nothing committed); one admin session. */
  const sourcePositions: Effect.Effect<{ ends: Map<number, bigint>; committed: Map<number, bigint> }, KafkaIoError> = Effect.tryPromise({
    try: async () => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        const ends = new Map((await admin.fetchTopicOffsets(sourceTopic)).map((entry) => [entry.partition, BigInt(entry.high)] as const));
        const [topic] = await admin.fetchOffsets({ groupId, topics: [sourceTopic] });
        const committed = new Map((topic?.partitions ?? []).filter((entry) => BigInt(entry.offset) >= 0n).map((entry) => [entry.partition, BigInt(entry.offset)] as const));
        return { ends, committed };
      } finally {
        await admin.disconnect();
      }
    },
    catch: (cause) => new KafkaIoError({ operation: `read ${sourceTopic} end offsets and ${groupId} committed offsets`, cause }),
  });

  /** A task without local state loads its contributions log (this partition of it) before reading its source. */
  const loadLog = (task: Task<unknown>, partition: number, logTopic: string): Effect.Effect<void, KafkaIoError | ProcessorError> =>
    Effect.gen(function* () {
      const started = performance.now();
      logger.info({ processor: name, partition, log: logTopic, stage: "log-load-begin" }, `loading ${name} state from its contributions log`);
      let failure: unknown;
      const records = yield* Effect.tryPromise({
        try: () =>
          readTopicToEnd(kafka, logTopic, async (message, from) => {
            const key = message.key?.toString("utf8");
            if (from !== partition || key === undefined || failure !== undefined) return;
            try {
              await task.loadChangelog?.(key, message.value);
            } catch (error) {
              failure = error;
            }
          }),
        catch: (cause) => new KafkaIoError({ operation: `load ${logTopic}`, cause }),
      });
      if (failure !== undefined) return yield* Effect.fail(new ProcessorError({ processor: name, cause: failure }));
      const seconds = (performance.now() - started) / 1000;
      logger.info({ processor: name, partition, records, seconds: Number(seconds.toFixed(3)), recordsPerSecond: seconds > 0 ? Math.round(records / seconds) : null, ...task.changelogLoaded?.(), stage: "log-load-end" }, `${name} contributions log loaded`);
    });

  /**
   * Stores that keep their contents on disk are checkpointed with their changelogs' end offsets,
   * so a restart reads the changelogs only from there; only when every write they hold is
   * acknowledged (no batch of the task between settling and its writes' acknowledgement).
   */
  const checkpointStores = (entry: PartitionTask): Effect.Effect<void, KafkaIoError | RegistryError | ProcessorError> =>
    Effect.gen(function* () {
      entry.storesCheckpointedAt = performance.now();
      const kept = entry.stores.declared.filter(({ store }) => store.checkpointed);
      if (kept.length === 0 || entry.storesAhead) return;
      const ends = yield* Effect.tryPromise({ try: () => context.topicEnds(kept.map(({ spec }) => spec.changelog)), catch: (cause) => new KafkaIoError({ operation: `read ${name} store changelogs' end offsets`, cause }) });
      for (const { spec, store } of kept) {
        const offsets = new Map([...(ends.get(spec.changelog) ?? new Map<number, string>())].map(([partition, offset]) => [partition, BigInt(offset)] as const));
        const format = yield* tableFormat(spec);
        yield* Effect.tryPromise({ try: () => store.checkpoint(offsets, format), catch: (cause) => new ProcessorError({ processor: name, cause }) });
      }
    });

  /** The form a store's values are encoded in: a table sink's (the results: its schema version); a store of the processor's own values has none. */
  const tableFormat = (spec: { readonly restore: string }): Effect.Effect<string | undefined, RegistryError> =>
    spec.restore === "topic" ? Effect.tryPromise({ try: () => environment.serde.resultEncoding(), catch: (cause) => new RegistryError({ operation: "find the results schema's id", cause }) }) : Effect.succeed(undefined);

  /** Releases the tasks' local state (a revoked assignment, or shutdown). */
  const closeTasks: Effect.Effect<void, ProcessorError> = Effect.gen(function* () {
    const open = [...tasks.values()];
    tasks.clear();
    for (const entry of open) {
      yield* Effect.tryPromise({ try: () => entry.task.close?.() ?? Promise.resolve(), catch: (cause) => new ProcessorError({ processor: name, cause }) });
      // Stopping cleanly, the stores' last acknowledged contents are checkpointed (a failure only
      // means the next start reads more of the changelog).
      yield* checkpointStores(entry).pipe(Effect.catchAll((error) => Effect.sync(() => logger.warn({ processor: name, error: error.message }, "checkpointing the stores on disk failed; the next start reads their changelogs from the last checkpoint"))));
      yield* Effect.tryPromise({ try: () => closeTaskStores(entry.stores), catch: (cause) => new ProcessorError({ processor: name, cause }) });
    }
  });

  /**
   * A new assignment: its tasks over restored stores. A processor whose source is its changelog
   * resumes from its task's checkpoint (live at once when the checkpoint was live), or replays the
   * source from offset 0.
   */
  const restore = (partitions: readonly number[], consumer: Consumer): Effect.Effect<void, BatchError> =>
    Effect.gen(function* () {
      yield* closeTasks;
      for (const partition of [...lagReported]) {
        if (partitions.includes(partition)) continue;
        // Another member reports this partition's lag now: a gauge left at its last value would read as lag for ever.
        telemetry.gauge("agentops_consumer_lag", "Records behind the partition's high watermark after the last batch", { processor: name, topic: sourceTopic, partition: String(partition) }, 0);
        lagReported.delete(partition);
      }
      for (const partition of acknowledged.keys()) if (!partitions.includes(partition)) acknowledged.delete(partition);
      const storesByPartition = yield* readChangelogs(partitions);
      const { ends, committed: groupOffsets } = replaysSource ? yield* sourcePositions : { ends: new Map<number, bigint>(), committed: new Map<number, bigint>() };
      for (const [partition, stores] of storesByPartition) {
        const task = yield* processorCall(name, () => processor.open(partition, storeSet(stores), telemetry, context) as Task<unknown>);
        const entry: PartitionTask = { task, stores, restoreEnd: undefined, restoreStarted: undefined, unsent: undefined, storesAhead: false, storesCheckpointedAt: performance.now() };
        tasks.set(partition, entry);
        if (!replaysSource) continue;
        const end = ends.get(partition) ?? 0n;
        const from = yield* processorCall(name, () => task.resumeFrom?.(end.toString()) ?? "0");
        if (from === "0" && logRole !== undefined && task.loadChangelog !== undefined) yield* loadLog(task, partition, topics[logRole]);
        const start = BigInt(from);
        // The source is replayed silently up to what the group committed (every write of the batches
        // before it was acknowledged: their results and dead letters are on their topics), or to the
        // end when nothing was committed; from there on it is processed live. So records whose
        // writes a crash may have lost are processed live again (at-least-once), never skipped.
        const committedAt = groupOffsets.get(partition);
        const restoreEnd = committedAt === undefined ? end : committedAt < start ? start : committedAt > end ? end : committedAt;
        // The task's own checkpoint decides where to read, whatever position the group would resume from.
        consumer.seek({ topic: sourceTopic, partition, offset: from });
        entry.restoreEnd = restoreEnd;
        entry.restoreStarted = { at: performance.now(), offset: start };
        if (start > 0n) logger.info({ processor: name, partition, offset: from, restoreEnd: restoreEnd.toString(), end: end.toString(), stage: "resume" }, `${name} state resumed from its local checkpoint`);
        else logger.info({ processor: name, partition, from, restoreEnd: restoreEnd.toString(), stage: "restore-begin" }, `rebuilding ${name} state from its input topic`);
        if (start >= restoreEnd) yield* goLive(entry, partition);
      }
    });

  const decodeBatch = (payload: EachBatchPayload): Effect.Effect<SourceRecord<unknown>[], RegistryError> =>
    Effect.tryPromise({
      try: async () => {
        const { batch } = payload;
        const records: SourceRecord<unknown>[] = [];
        for (const message of batch.messages) {
          if (!payload.isRunning() || payload.isStale()) break;
          records.push({ position: { topic: batch.topic, partition: batch.partition, offset: message.offset }, value: await decode(message), original: { key: message.key, value: message.value } });
        }
        return records;
      },
      catch: (cause) => new RegistryError({ operation: `decode ${sourceTopic} records`, cause }),
    });

  /**
   * Waits for the assignment's restore while heartbeating. kafkajs heartbeats only between batches,
   * and the first batch waits for the restore: a restore longer than the session timeout (loading
   * the contributions log of a long history, 30 s at 1M facts on a slow core) got the member removed
   * from its group, and the rejoin restored again, for ever. A heartbeat that fails (the group is
   * rebalancing) fails the batch, which makes kafkajs rejoin, as after any batch.
   */
  const awaitRestore = (ready: Effect.Effect<void, BatchError>, payload: EachBatchPayload): Effect.Effect<void, BatchError> => {
    const heartbeats = Effect.tryPromise({ try: () => payload.heartbeat(), catch: (cause) => new KafkaIoError({ operation: `heartbeat ${name} while restoring`, cause }) }).pipe(
      Effect.repeat(Schedule.spaced(`${heartbeatInterval} millis`)),
      Effect.delay(`${heartbeatInterval} millis`),
      Effect.andThen(Effect.never),
    );
    return Effect.raceFirst(ready, heartbeats);
  };

  /** One fetched batch, from decoding to its writes acknowledged; its offsets are then ready to commit. */
  const handleBatch = (payload: EachBatchPayload, ready: Effect.Effect<void, BatchError>): Effect.Effect<void, BatchError> =>
    Effect.gen(function* () {
      yield* awaitRestore(ready, payload);
      const { batch } = payload;
      const entry = tasks.get(batch.partition);
      if (entry === undefined) return;
      // A batch fetched before the assignment's seek took effect (from the group's committed offset)
      // is stale: decodeBatch stops at it, so a task resuming from its checkpoint reads from there.
      const records = yield* decodeBatch(payload);
      const last = records.at(-1);
      if (last === undefined) return;
      const lastOffset = (last.position as TopicPosition).offset;
      let live = records;
      if (entry.restoreEnd !== undefined) {
        const end = entry.restoreEnd;
        const restoring = records.filter((record) => BigInt((record.position as TopicPosition).offset) < end);
        live = records.slice(restoring.length);
        const restored = yield* processorCall(name, () => entry.task.restore?.(restoring));
        if (restored !== undefined && restored.outputs.length > 0) yield* settleAndWrite(entry, batch.partition, restored);
        if (BigInt(lastOffset) + 1n >= end) {
          const started = entry.restoreStarted;
          const records = started === undefined ? end : end - started.offset;
          const seconds = started === undefined ? 0 : (performance.now() - started.at) / 1000;
          logger.info(
            { processor: name, partition: batch.partition, records: records.toString(), seconds: Number(seconds.toFixed(3)), recordsPerSecond: seconds > 0 ? Math.round(Number(records) / seconds) : null, stage: "restore-end" },
            "source replayed into the processor's state",
          );
          yield* goLive(entry, batch.partition);
        }
      }
      if (live.length > 0 || entry.restoreEnd === undefined) {
        const backlog = Number(BigInt(batch.highWatermark) - BigInt(lastOffset) - 1n);
        const result = yield* processorCall(name, () => entry.task.process({ partition: batch.partition, records: live, backlog }));
        yield* settleAndWrite(entry, batch.partition, result);
      }
      // The assignment moved while this batch was in flight (a rebalance restored the partition
      // into a new task, or took it away): the old task is closed, and neither it nor the group's
      // offsets may hear of this batch; its writes are upserts the next owner rewrites.
      if (tasks.get(batch.partition) !== entry) {
        logger.info({ processor: name, partition: batch.partition, offset: lastOffset }, "a batch of a revoked assignment finished; its offsets are left to the partition's new task");
        return;
      }
      payload.resolveOffset(lastOffset);
      const nextOffset = String(BigInt(lastOffset) + 1n);
      // The batch's writes are acknowledged: the task may checkpoint its local state up to here.
      yield* Effect.tryPromise({ try: async () => entry.task.committed?.(nextOffset), catch: (cause) => new ProcessorError({ processor: name, cause }) });
      if (performance.now() - entry.storesCheckpointedAt >= CHECKPOINT_INTERVAL_MS) yield* checkpointStores(entry);
      if (commits) acknowledged.set(batch.partition, nextOffset);
      telemetry.count("agentops_records_processed_total", "Records processed, by processor", { processor: name }, records.length);
      telemetry.gauge("agentops_consumer_lag", "Records behind the partition's high watermark after the last batch", { processor: name, topic: sourceTopic, partition: String(batch.partition) }, Math.max(0, lagAfter(batch)));
      lagReported.add(batch.partition);
    });

  return Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>();
    const batches = yield* Effect.makeSemaphore(PARTITIONS_CONCURRENTLY);
    const commitLock = yield* Effect.makeSemaphore(1);
    let ready: Effect.Effect<void, BatchError> = Effect.void;
    let restoring: Fiber.RuntimeFiber<void, BatchError> | undefined;

    const consumer = kafka.consumer({ groupId, sessionTimeout: config.sessionTimeoutMs, rebalanceTimeout: 60_000, heartbeatInterval, maxWaitTimeInMs: 200, retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 10_000 } });

    /** Commits what is acknowledged and not yet committed; the coordinator's answer updates `committed`. */
    const commitAcknowledged = (reason: string): Effect.Effect<void, KafkaIoError> =>
      commitLock.withPermits(1)(
        Effect.suspend(() => {
          const offsets = [...acknowledged].filter(([partition, offset]) => committed.get(partition) !== offset).map(([partition, offset]) => ({ topic: sourceTopic, partition, offset }));
          if (offsets.length === 0) return Effect.void;
          return Effect.tryPromise({ try: () => consumer.commitOffsets(offsets), catch: (cause) => new KafkaIoError({ operation: `commit ${name} offsets (${reason})`, cause }) });
        }),
      );
    const commitQuietly = (reason: string): Effect.Effect<void> =>
      commitAcknowledged(reason).pipe(Effect.catchAll((error) => Effect.sync(() => logger.warn({ processor: name, reason, error: error.message }, "committing offsets failed; they stay uncommitted and are retried"))));

    consumer.on(consumer.events.COMMIT_OFFSETS, (event) => {
      for (const topic of event.payload.topics) {
        if (topic.topic !== sourceTopic) continue;
        for (const partition of topic.partitions) committed.set(Number(partition.partition), String(partition.offset));
      }
    });
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      const partitions = event.payload.memberAssignment[sourceTopic] ?? [];
      telemetry.count("agentops_rebalances_total", "Consumer group (re)joins, by processor", { processor: name });
      logger.info({ processor: name, groupId, partitions, instance: config.instanceId, stage: "assigned" }, "partitions assigned");
      // A rejoin while an earlier assignment is still restoring (its batches heartbeat, so the
      // member stays in the group) restores after it: two restores would share the tasks' stores.
      const previous = restoring;
      restoring = Runtime.runFork(runtime)(
        Effect.andThen(previous === undefined ? Effect.void : Fiber.await(previous), restore(partitions, consumer)).pipe(
          // Topics just created may have no leader yet (NOT_LEADER_FOR_PARTITION, LEADER_NOT_AVAILABLE):
          // what kafkajs marks retriable heals by waiting, so the assignment is restored again.
          Effect.tapError((error) => Effect.sync(() => (isRetriable(error) ? logger.warn({ processor: name, error: error.message }, "restoring the assignment's state failed; retrying") : undefined))),
          Effect.retry({ schedule: Schedule.intersect(Schedule.spaced("500 millis"), Schedule.recurs(60)), while: isRetriable }),
          Effect.tapError((error) =>
            Effect.sync(() => {
              logger.error({ err: error, processor: name }, "restoring the assignment's state failed");
              environment.fail(error);
            }),
          ),
        ),
      );
      ready = Fiber.join(restoring);
    });
    // The group is about to move partitions: what this member acknowledged is committed now, so
    // the next owner does not process it again.
    consumer.on(consumer.events.REBALANCING, () => {
      if (commits) Runtime.runFork(runtime)(commitQuietly("rebalance"));
    });
    consumer.on(consumer.events.CRASH, (event) => {
      telemetry.count("agentops_consumer_crashes_total", "Consumer crashes (kafkajs restarts the consumer), by processor", { processor: name });
      logger.warn({ processor: name, error: String(event.payload.error), restart: event.payload.restart }, "consumer crashed");
      if (!event.payload.restart) environment.fail(new KafkaIoError({ operation: `${name} consumer (kafkajs will not restart it)`, cause: event.payload.error }));
    });

    const eachBatch = async (payload: EachBatchPayload): Promise<void> => {
      if (stopping) {
        // Shutting down: the batch is left to the next owner, and fetching stops.
        payload.pause();
        return;
      }
      inFlight += 1;
      const handled = batches.withPermits(1)(Effect.suspend(() => (stopping ? Effect.succeed(false) : Effect.as(handleBatch(payload, ready), true))));
      const exit = await Runtime.runPromiseExit(runtime)(handled).finally(() => {
        inFlight -= 1;
      });
      if (Exit.isSuccess(exit)) {
        if (exit.value) await payload.heartbeat();
        else payload.pause();
        return;
      }
      const error = Cause.squash(exit.cause);
      if (error instanceof ProcessorError || error instanceof EncodeError) {
        // Retrying the batch cannot heal a bug: stop taking this partition's batches and fail the instance.
        payload.pause();
        logger.error({ err: error, processor: name, partition: payload.batch.partition }, "batch failed");
        environment.fail(error);
        return;
      }
      // The broker or registry: kafkajs retries the batch, and restarts the consumer if that fails.
      throw error;
    };

    const start = Effect.tryPromise({
      try: async () => {
        logger.info({ processor: name, groupId, topic: sourceTopic, stage: "consumer-connect" }, "connecting consumer");
        await consumer.connect();
        await consumer.subscribe({ topic: sourceTopic, fromBeginning: true });
        await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: PARTITIONS_CONCURRENTLY, eachBatch });
        logger.info({ processor: name, groupId, stage: "consumer-running" }, "consumer joined its group and running");
      },
      catch: (cause) => new KafkaIoError({ operation: `start ${name} consumer`, cause }),
    });

    const stop = Effect.gen(function* () {
      logger.info({ processor: name }, "stopping consumer");
      stopping = true;
      // Every permit at once: the batches in flight have finished (their writes acknowledged or
      // failed); a batch that was waiting for a permit then sees `stopping` and leaves its records.
      yield* batches.withPermits(PARTITIONS_CONCURRENTLY)(Effect.void);
      if (commits) yield* commitQuietly("shutdown");
      yield* Effect.promise(() => consumer.disconnect().catch(() => undefined));
      yield* closeTasks.pipe(Effect.catchAll((error) => Effect.sync(() => logger.warn({ processor: name, error: error.message }, "closing the tasks' local state failed"))));
      const client = admin;
      admin = undefined;
      if (client !== undefined) yield* Effect.promise(() => client.then((connected) => connected.disconnect()).catch(() => undefined));
    });

    yield* Effect.acquireRelease(start, () => stop);
    if (commits) yield* Effect.forkScoped(Effect.repeat(commitQuietly("interval"), Schedule.spaced(COMMIT_INTERVAL_MS)));
    return { uncommitted };
  });
}

/** A broker error kafkajs marks retriable (a leader moving or not yet elected), anywhere along the cause chain. */
function isRetriable(error: unknown): boolean {
  if (!(error instanceof KafkaIoError)) return false;
  for (let current: unknown = error.cause, depth = 0; typeof current === "object" && current !== null && depth < 5; current = (current as { cause?: unknown }).cause, depth += 1) {
    if ((current as { retriable?: unknown }).retriable === true) return true;
  }
  return false;
}

/** Records behind the partition's high watermark after this batch. */
function lagAfter(batch: EachBatchPayload["batch"]): number {
  return Number(BigInt(batch.highWatermark) - BigInt(batch.lastOffset()) - 1n);
}

/** A sink record as a Kafka message, in the form its topic carries. */
async function encodeOutput(environment: KafkaEnvironment, output: SinkRecord): Promise<Message> {
  switch (output.topic) {
    case "deadLetters": {
      countDeadLetter(environment.telemetry, output.value);
      const letter = deadLetterRecord(output.value);
      return { key: deadLetterKey(letter), value: await environment.serde.encodeDeadLetter(letter) };
    }
    case "agentEvents":
      return { key: output.key, value: encodeAgentEvent(output.value.event) };
    case "engineFacts":
    case "stageFacts": {
      const encoded = encodeEngineFact(output.value.fact, topicPosition(output.value.source));
      // The single engine's topic has one partition by design (naming it skips the key hash per
      // record); the partitioned engine's is placed by fact_id, with the stages' own placement.
      const partition = output.topic === "engineFacts" ? 0 : partitionOf(output.value.fact.fact_id, environment.enginePartitions);
      return { key: encoded.key, value: encoded.value, partition };
    }
    case "engineContributions":
      // Partitioned like the engine-facts topic it accompanies (one partition today).
      return { key: output.key, value: output.value, partition: 0 };
    case "stageClaims":
    case "stageEntities":
    case "stagePartials":
      return { key: output.key, value: output.value.value, partition: output.value.partition, headers: writerHeader(output.writer) };
    case "alerts":
      return { key: output.key, value: await environment.serde.encodeAlert(output.value) };
    case "runState":
      return { key: output.key, value: JSON.stringify(output.value) };
    case "results":
      // The single engine writes results through its published-results store; the partitioned
      // engine's aggregation stage writes them itself, naming its partition.
      if (output.writer === undefined) throw new Error("results are written as a store's changelog, or by a writer that names itself");
      return { key: output.key, value: output.value === null ? null : await environment.serde.encodeResult(output.value), headers: writerHeader(output.writer) };
    case "runMonitorChangelog":
    case "facts":
      throw new Error(`${output.topic} is written as a store's changelog, not as an output`);
  }
}

/** The header naming the stage partition that wrote a record (read back by `reconcile` after a restart). */
export const WRITER_HEADER = "agentops-writer";

function writerHeader(writer: string | undefined): Record<string, string> {
  if (writer === undefined) throw new Error("a partitioned engine stage's record must name its writer");
  return { [WRITER_HEADER]: writer };
}

function headerText(value: unknown): string | undefined {
  if (Buffer.isBuffer(value)) return value.toString("utf8");
  return typeof value === "string" ? value : undefined;
}

/** A dead letter as the dead-letter topic's record. */
export function deadLetterRecord(letter: DeadLetter): DeadLetterRecord {
  const source = topicPosition(letter.position);
  if (letter.kind === "conflict") {
    const { recordRejected, ...rejection } = conflictRejection(letter.conflict);
    return { ...rejection, source, factId: letter.factId, key: null, value: null, recordRejected };
  }
  const original = letter.original !== null && "value" in letter.original ? letter.original : { key: null, value: null };
  return { ...letter.rejection, source, factId: letter.factId, key: original.key, value: original.value, recordRejected: letter.recordRejected };
}

function topicPosition(position: SourceRecord<unknown>["position"]): TopicPosition {
  if (!isTopicPosition(position)) throw new Error(`a record read from a file (${position.file}:${position.line}) cannot be written to Kafka with topic coordinates`);
  return position;
}
