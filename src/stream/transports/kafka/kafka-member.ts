import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { Effect, type Scope } from "effect";
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage, Message, Producer, TopicMessages } from "kafkajs";
import type { Logger } from "pino";
import { deadLetterKey, type DeadLetterRecord } from "../../../contract/dead-letter.ts";
import { KafkaIoError, ProcessorError } from "../../../errors.ts";
import { readTopicToEnd } from "../../../kafka/read-topic.ts";
import { sendBounded } from "../../../kafka/send-bounded.ts";
import { decodeAgentEventRecord, encodeAgentEvent } from "../../../kafka/serde/agent-events-record.ts";
import { decodeFact } from "../../../kafka/serde/decode-fact.ts";
import { decodeEngineFact, encodeEngineFact } from "../../../kafka/serde/engine-facts-record.ts";
import type { TopicSerde } from "../../../kafka/serde/topic-serde.ts";
import { isTopicPosition, type DeadLetter, type Processor, type SinkRecord, type SourceRecord, type Task, type TopicPosition } from "../../processor.ts";
import { conflictRejection } from "../../processors/conflict-rejection.ts";
import { countDeadLetter, createTaskStores, settleBatch, storeSet, type ChangelogWrite, type TaskStores } from "../../runtime/task-writes.ts";
import type { StreamConfig } from "../../runtime/stream-config.ts";
import type { Telemetry } from "../../runtime/telemetry.ts";
import { TOPOLOGY, type ProcessorName } from "../../topology.ts";
import type { TopicNames, TopicRole } from "../../topic-names.ts";

/**
 * Whether a member has started a batch whose offsets it has not committed yet, so a shutdown can
 * say whether it committed what was processed.
 */
export interface CommitState {
  uncommitted: boolean;
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
  /**
   * Declares the instance broken (a consumer kafkajs will not restart, a failing processor):
   * /healthz turns 503 and `agentops run` exits 1, so a supervisor restarts the instance.
   */
  readonly fail: (reason: string) => void;
}

/** How the records of each source topic are decoded for its processor. */
function sourceDecoder(environment: KafkaEnvironment, role: TopicRole): (message: KafkaMessage) => Promise<unknown> {
  if (role === "engineFacts") return (message) => Promise.resolve(message.value === null ? undefined : decodeToEngineFact(message.value));
  // Agent events forwarded by ingest are in the internal layout (read without validating again);
  // producers that publish agent events directly use the registry's Avro (validated here, once).
  if (role === "agentEvents") return (message) => decodeAgentEventRecord(environment.registry, message.value);
  return (message) => decodeFact(environment.registry, message.value);
}

function decodeToEngineFact(value: Buffer): { fact: NonNullable<ReturnType<typeof decodeEngineFact>>["fact"]; source: TopicPosition } | undefined {
  const decoded = decodeEngineFact(value);
  return decoded === undefined ? undefined : { fact: decoded.fact, source: decoded.source };
}

interface PartitionTask {
  readonly task: Task<unknown>;
  readonly stores: TaskStores;
  /** Offset (exclusive) up to which the source is replayed into the task's state; undefined once live. */
  restoreEnd: bigint | undefined;
}

/**
 * One consumer-group member for any processor of topology.ts, for the life of the enclosing
 * scope, on its own idempotent producer. On every assignment it restores the tasks' stores from
 * their changelogs (or, for a processor whose source is its changelog, replays the source from
 * offset 0 through `restore`, then goes live); for each fetched batch it decodes, calls the
 * processor, writes the outputs and the stores' changelogs to the declared sinks only, and commits
 * the offsets after the writes are acknowledged. kafkajs restarts a crashed consumer itself (how a
 * broker restart is survived); one it will not restart fails the instance.
 */
export function kafkaMember(environment: KafkaEnvironment, processor: Processor<never>, producer: Producer, commitState: CommitState): Effect.Effect<void, KafkaIoError, Scope.Scope> {
  const { kafka, config, telemetry, logger, topics } = environment;
  const name: ProcessorName = processor.name;
  const node = TOPOLOGY[name];
  const sourceTopic = topics[node.source];
  const groupId = `${config.groupPrefix}.${name}`;
  const replaysSource = node.stores.some((store) => store.restore === "source");
  // A processor whose source is its changelog rebuilds from offset 0 on every assignment: nothing to commit.
  const commits = !replaysSource;
  const decode = sourceDecoder(environment, node.source);
  const tasks = new Map<number, PartitionTask>();
  let ready: Promise<void> = Promise.resolve();

  const write = async (outputs: readonly SinkRecord[], changelog: readonly ChangelogWrite[]): Promise<void> => {
    const byTopic = new Map<string, Message[]>(node.sinks.map((sink) => [topics[sink.topic], []]));
    for (const output of outputs) byTopic.get(topics[output.topic])?.push(await encodeOutput(environment, output));
    for (const entry of changelog) byTopic.get(topics[entry.topic])?.push({ key: entry.key, value: entry.value, ...(entry.partition === undefined ? {} : { partition: entry.partition }) });
    const results = changelog.filter((entry) => entry.topic === "results").length;
    const topicMessages: TopicMessages[] = [...byTopic].filter(([, messages]) => messages.length > 0).map(([topic, messages]) => ({ topic, messages }));
    if (topicMessages.length > 0) await sendBounded(producer, topicMessages);
    if (results > 0) telemetry.count("agentops_results_published_total", "Result upserts and tombstones written to the results topic", {}, results);
  };

  const settleAndWrite = async (entry: PartitionTask, partition: number, result: Parameters<typeof settleBatch>[1]): Promise<readonly ChangelogWrite[]> => {
    const settled = await settleBatch(name, result, entry.stores, partition, (value) => environment.serde.encodeResult(value));
    await write(settled.outputs, settled.changelog);
    return settled.changelog;
  };

  /** The rebuilt state's table written through the restored stores: only what differs is written. */
  const goLive = async (entry: PartitionTask, partition: number): Promise<void> => {
    entry.restoreEnd = undefined;
    const result = entry.task.goLive?.() ?? { outputs: [] };
    const written = await settleAndWrite(entry, partition, result);
    const results = result.outputs.filter((output) => output.topic === "results" && output.value !== null).length;
    const upserts = written.filter((change) => change.value !== null).length;
    logger.info({ processor: name, partition, results, upserts, tombstones: written.length - upserts, stage: "live" }, `${name} state rebuilt; results reconciled; live`);
  };

  const prepare = async (partitions: readonly number[], consumer: Consumer): Promise<void> => {
    tasks.clear();
    const storesByPartition = new Map(partitions.map((partition) => [partition, createTaskStores(name)] as const));
    for (const spec of node.stores) {
      if (spec.restore === "source") continue;
      const changelogTopic = topics[spec.changelog];
      logger.info({ processor: name, store: spec.name, changelog: changelogTopic, partitions, stage: "restore-begin" }, "restoring store from its changelog");
      let records = 0;
      await readTopicToEnd(kafka, changelogTopic, (message, partition) => {
        const key = message.key?.toString("utf8");
        if (key === undefined) return;
        const targets = spec.restore === "partition" ? [storesByPartition.get(partition)].filter((found) => found !== undefined) : [...storesByPartition.values()];
        for (const target of targets) {
          const value = message.value === null ? null : spec.restore === "partition" ? message.value.toString("utf8") : message.value;
          target.byName.get(spec.name)?.restore(key, value);
        }
        records += 1;
      });
      const held = [...storesByPartition.values()].reduce((sum, stores) => sum + (stores.byName.get(spec.name)?.size ?? 0), 0);
      logger.info({ processor: name, store: spec.name, records, held, stage: "restore-end" }, "store restored");
    }
    const ends = replaysSource ? await sourceEnds() : new Map<number, bigint>();
    for (const [partition, stores] of storesByPartition) {
      const task = processor.open(partition, storeSet(stores), telemetry) as Task<unknown>;
      const entry: PartitionTask = { task, stores, restoreEnd: undefined };
      tasks.set(partition, entry);
      if (!replaysSource) continue;
      entry.restoreEnd = ends.get(partition) ?? 0n;
      // Rebuild from the very beginning whatever position the group would resume from.
      consumer.seek({ topic: sourceTopic, partition, offset: "0" });
      logger.info({ processor: name, partition, restoreEnd: entry.restoreEnd.toString(), stage: "restore-begin" }, `rebuilding ${name} state from its input topic`);
      if (entry.restoreEnd === 0n) await goLive(entry, partition);
    }
  };

  const sourceEnds = async (): Promise<Map<number, bigint>> => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      return new Map((await admin.fetchTopicOffsets(sourceTopic)).map((entry) => [entry.partition, BigInt(entry.high)] as const));
    } finally {
      await admin.disconnect();
    }
  };

  const handleBatch = async (payload: EachBatchPayload): Promise<void> => {
    await ready;
    const { batch } = payload;
    const entry = tasks.get(batch.partition);
    if (entry === undefined) return;
    const records: SourceRecord<unknown>[] = [];
    let lastOffset: string | undefined;
    for (const message of batch.messages) {
      if (!payload.isRunning() || payload.isStale()) break;
      records.push({ position: { topic: batch.topic, partition: batch.partition, offset: message.offset }, value: await decode(message), original: { key: message.key, value: message.value } });
      lastOffset = message.offset;
    }
    if (lastOffset === undefined) return;
    let live = records;
    if (entry.restoreEnd !== undefined) {
      const end = entry.restoreEnd;
      const restoring = records.filter((record) => BigInt((record.position as TopicPosition).offset) < end);
      live = records.slice(restoring.length);
      entry.task.restore?.(restoring);
      if (BigInt(lastOffset) + 1n >= end) {
        logger.info({ processor: name, partition: batch.partition, records: end.toString(), stage: "restore-end" }, "source replayed into the processor's state");
        await goLive(entry, batch.partition);
      }
    }
    if (live.length > 0 || entry.restoreEnd === undefined) {
      const backlog = Number(BigInt(batch.highWatermark) - BigInt(lastOffset) - 1n);
      let result;
      try {
        result = entry.task.process({ partition: batch.partition, records: live, backlog });
      } catch (cause) {
        throw new ProcessorError({ processor: name, cause });
      }
      await settleAndWrite(entry, batch.partition, result);
    }
    payload.resolveOffset(lastOffset);
    telemetry.count("agentops_records_processed_total", "Records processed, by processor", { processor: name }, records.length);
    await payload.heartbeat();
  };

  const acquire = Effect.tryPromise({
    try: async () => {
      const consumer = kafka.consumer({ groupId, sessionTimeout: 30_000, rebalanceTimeout: 60_000, heartbeatInterval: 3_000, maxWaitTimeInMs: 200, retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 10_000 } });
      consumer.on(consumer.events.GROUP_JOIN, (event) => {
        const partitions = event.payload.memberAssignment[sourceTopic] ?? [];
        telemetry.count("agentops_rebalances_total", "Consumer group (re)joins, by processor", { processor: name });
        logger.info({ processor: name, groupId, partitions, instance: config.instanceId, stage: "assigned" }, "partitions assigned");
        ready = prepare(partitions, consumer).catch((error: unknown) => {
          logger.error({ err: error, processor: name }, "restoring the assignment's state failed");
          environment.fail(`${name}: restoring state failed: ${String(error)}`);
        });
      });
      consumer.on(consumer.events.CRASH, (event) => {
        telemetry.count("agentops_consumer_crashes_total", "Consumer crashes (kafkajs restarts the consumer), by processor", { processor: name });
        logger.warn({ processor: name, error: String(event.payload.error), restart: event.payload.restart }, "consumer crashed");
        if (!event.payload.restart) environment.fail(`${name} consumer crashed and will not restart: ${String(event.payload.error)}`);
      });
      logger.info({ processor: name, groupId, topic: sourceTopic, stage: "consumer-connect" }, "connecting consumer");
      await consumer.connect();
      await consumer.subscribe({ topic: sourceTopic, fromBeginning: true });
      await consumer.run({
        autoCommit: commits,
        eachBatchAutoResolve: false,
        // Partitions are independent (ingest is stateless, run monitors are per partition): while one
        // batch waits for its produce acknowledgements, the next partition's batch is decoded.
        partitionsConsumedConcurrently: 3,
        eachBatch: async (payload) => {
          if (commits) commitState.uncommitted = true;
          await handleBatch(payload);
          if (commits) {
            await payload.commitOffsetsIfNecessary();
            commitState.uncommitted = false;
          }
          const lag = Number(BigInt(payload.batch.highWatermark) - BigInt(payload.batch.lastOffset()) - 1n);
          telemetry.gauge("agentops_consumer_lag", "Records behind the partition's high watermark after the last batch", { processor: name, topic: sourceTopic, partition: String(payload.batch.partition) }, Math.max(0, lag));
        },
      });
      logger.info({ processor: name, groupId, stage: "consumer-running" }, "consumer joined its group and running");
      return consumer;
    },
    catch: (cause) => new KafkaIoError({ operation: `start ${name} consumer`, cause }),
  });
  return Effect.asVoid(
    Effect.acquireRelease(acquire, (consumer) =>
      Effect.promise(async () => {
        logger.info({ processor: name }, "stopping consumer");
        await consumer.disconnect().catch(() => undefined);
      }),
    ),
  );
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
    case "engineFacts": {
      const encoded = encodeEngineFact(output.value.fact, topicPosition(output.value.source));
      // The engine topic has one partition by design: naming it skips the key hash per record.
      return { key: encoded.key, value: encoded.value, partition: 0 };
    }
    case "alerts":
      return { key: output.key, value: await environment.serde.encodeAlert(output.value) };
    case "runState":
      return { key: output.key, value: JSON.stringify(output.value) };
    case "results":
    case "runMonitorChangelog":
    case "facts":
      throw new Error(`${output.topic} is written as a store's changelog, not as an output`);
  }
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
