import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import type { CatalogSummary } from "../../../catalog/metric-definitions.ts";
import type { AgentEvent } from "../../../contract/facts.ts";
import type { DecodedFact } from "../../../kafka/serde/decode-fact.ts";
import type { RunStateSummary, TripwireAlert } from "../../../tripwires/index.ts";
import { FileIoError, ProcessorError, type TransportError } from "../../../errors.ts";
import {
  isTopicPosition,
  type AgentEventRecord,
  type Batch,
  type EngineFact,
  type Processor,
  type SinkRecord,
  type SourceRecord,
  type Task,
} from "../../processor.ts";
import { acknowledged, closeTask, goLivePages, restore } from "../../runtime/task-capabilities.ts";
import {
  closeTaskStores,
  createTaskStores,
  settleBatch,
  storeSet,
  type TaskStores,
} from "../../runtime/task-writes.ts";
import { Catalog, Config, Telemetry, TopicSerde, Transport, type TopologyConfig } from "../../runtime/services.ts";
import { Telemetry as TelemetryRegistry } from "../../runtime/telemetry.ts";
import { ENGINE_STAGES, TOPOLOGY, type ProcessorName } from "../../topology.ts";
import type { StageSourceValue } from "../../processors/engine-stages.ts";
import { topicNames } from "../../topic-names.ts";
import { deliverOutput, type EmbeddedTargets, type StageLogRole } from "../sink-roles.ts";
import { fileConflictLine, fileDeadLetterLine } from "./file-dead-letters.ts";
import { memorySinkLog, tupleKey, type SinkLog } from "./sink-log.ts";
import { jsonTopicSerde } from "./json-topic-serde.ts";
import type { TopologySource } from "./topology-sources.ts";

/**
 * The embedded transport: the topology in one process over a facts file (`agentops replay`,
 * `npm start`). The facts file is the facts topic; the internal topics (engine facts, agent
 * events, the run-states changelog) are in-process logs; the sinks are collected for the output
 * files: results as the compacted table the results topic is, alerts in their canonical order,
 * the last run-state summary per run, and the dead letters of the file. The processors, their
 * stores and the writing of changelogs are those of the Kafka transport (runtime/task-writes.ts).
 * Nothing is restored: every run starts from an empty log.
 */

/** Records read from the file per ingest batch. */
const FILE_BATCH = 4096;

/**
 * What an embedded run leaves in its sinks, for the output files and the summary: read once the
 * run has ended, from its sink log (on disk for a replay with its state on disk).
 */
export interface EmbeddedSinks {
  /** The results topic's latest value per key, sorted by key, each as its JSON line. */
  results(): Iterable<{ readonly key: string; readonly json: string }>;
  /** Tripwire alerts, sorted by (event_time, run_id, seq range, rule_id, alert_id). */
  alerts(): Iterable<TripwireAlert>;
  readonly alertCount: number;
  /** The last run-state summary of every run, by run id: what the run-state topic holds. */
  runStates(): Iterable<RunStateSummary>;
  /** The dead-letter file: rejected records and reports in input order, then one line per conflict (by identity, reason). */
  deadLetterLines(): Iterable<string>;
  /** Distinct conflicting identities reported. */
  conflicts(): number;
}

interface Member {
  readonly name: ProcessorName;
  readonly partition: number;
  readonly task: Task<never>;
  readonly stores: TaskStores;
}

/** The stage processor reading each stage log (its source in the topology), in the order records flow. */
const STAGE_READERS = ENGINE_STAGES.map((name) => [TOPOLOGY[name].source as StageLogRole, name] as const);

/** The layer providing every topology service over a file, and the sinks it fills. */
export function embeddedTransport(
  source: TopologySource,
  input: string,
  config: TopologyConfig,
  catalog: CatalogSummary,
  sinkLog: SinkLog = memorySinkLog(),
): {
  readonly layer: Layer.Layer<Transport | TopicSerde | Telemetry | Config | Catalog>;
  readonly sinks: EmbeddedSinks;
} {
  const telemetry = new TelemetryRegistry();
  const topics = topicNames();
  /** Every member by processor, one per partition (the partitioned engine's stages have N). */
  const members = new Map<ProcessorName, Member[]>();
  const enginePartitions = config.engineTopology?.kind === "stages" ? config.engineTopology.partitions : 1;
  /** "role \0 partition" → the stage log's records not yet read, and the next offset. */
  const stageLogs = new Map<string, SourceRecord<StageSourceValue>[]>();
  const stageOffsets = new Map<string, number>();
  // The in-process logs of the internal topics: records not yet read by their processor.
  const pending: { engineFacts: SourceRecord<EngineFact>[]; agentEvents: SourceRecord<DecodedFact>[] } = {
    engineFacts: [],
    agentEvents: [],
  };
  const offsets = { engineFacts: 0, agentEvents: 0 };
  // Alerts and dead letters keep their arrival order among equal sort keys.
  let alertCount = 0;
  let deadLetterCount = 0;

  /** Where the sink table (transports/sink-roles.ts) delivers each role's records in process. */
  const targets: EmbeddedTargets = {
    deadLetter: (letter) => {
      // A conflict is reported again as versions arrive; the file keeps its last, complete report.
      if (letter.kind === "conflict")
        sinkLog.set(
          "conflicts",
          tupleKey([letter.conflict.identity, letter.conflict.reason]),
          fileConflictLine(letter.conflict, input),
        );
      else sinkLog.set("deadLetters", tupleKey([deadLetterCount++]), fileDeadLetterLine(letter));
    },
    engineFact: (fact) => {
      const position = { topic: topics.engineFacts, partition: 0, offset: String(offsets.engineFacts++) };
      pending.engineFacts.push({ position, value: fact, original: { key: null, value: null } });
    },
    agentEvent: (record) => {
      pending.agentEvents.push(
        agentEventRecord(record, { topic: topics.agentEvents, partition: 0, offset: String(offsets.agentEvents++) }),
      );
    },
    stageLog: (role, partition, value) => appendStage(role, partition, value),
    // The aggregation stage's results (the single engine's come through its store's changelog).
    result: (key, result) => sinkLog.set("results", key, result === null ? null : JSON.stringify(result)),
    alert: (alert) => sinkLog.set("alerts", alertKey(alert, alertCount++), JSON.stringify(alert)),
    runState: (key, summary) => sinkLog.set("runStates", key, JSON.stringify(summary)),
  };
  const sinkContext = { telemetry, enginePartitions };
  const write = (output: SinkRecord): void => deliverOutput(sinkContext, targets, output);

  const appendStage = (role: StageLogRole, partition: number, value: StageSourceValue): void => {
    const log = `${role}\u0000${String(partition)}`;
    const offset = stageOffsets.get(log) ?? 0;
    stageOffsets.set(log, offset + 1);
    const record: SourceRecord<StageSourceValue> = {
      position: { topic: topics[role], partition, offset: String(offset) },
      value,
      original: { key: null, value: null },
    };
    const records = stageLogs.get(log);
    if (records === undefined) stageLogs.set(log, [record]);
    else records.push(record);
  };

  const step = (member: Member, result: { readonly outputs: readonly SinkRecord[] }): Promise<void> =>
    settleBatch(member.name, result, member.stores, member.partition, (value) =>
      jsonTopicSerde.encodeResult(value),
    ).then((settled) => {
      for (const output of settled.outputs) write(output);
      for (const entry of settled.changelog) {
        // The results topic is the published-results store's changelog: a compacted table.
        if (entry.topic === "results") sinkLog.set("results", entry.key, entry.value?.toString() ?? null);
      }
      return sinkLog.spill();
    });

  const feed = async <V>(
    name: ProcessorName,
    records: SourceRecord<V>[],
    backlog: number,
    partition = 0,
  ): Promise<void> => {
    const member = members.get(name)?.[partition];
    if (member === undefined) return;
    telemetry.count(
      "agentops_records_processed_total",
      "Records processed, by processor",
      { processor: name },
      records.length,
    );
    const batch: Batch<V> = { partition, records, backlog };
    await step(member, (member.task as unknown as Task<V>).process(batch));
    // The in-process logs acknowledge a batch once its outputs are written: a task with state on
    // disk may checkpoint it, which is what lets its cache evict.
    const last = records.at(-1);
    if (last !== undefined) await acknowledged(member.task, nextOffsetOf(last.position));
  };

  /**
   * Runs the partitioned engine's stages until their logs are empty: each stage partition reads
   * what its log holds, in the order records flow; the entity stage writes to its own log (pushes,
   * subscriptions, responses), so it runs again until nothing is left.
   */
  const drainStages = async (backlog: number): Promise<void> => {
    for (let moved = true; moved;) {
      moved = false;
      for (const [role, name] of STAGE_READERS) {
        for (let partition = 0; partition < enginePartitions; partition++) {
          const records = stageLogs.get(`${role}\u0000${String(partition)}`)?.splice(0) ?? [];
          if (records.length === 0) continue;
          moved = true;
          await feed(name, records, backlog, partition);
        }
      }
    }
  };

  /** Runs the downstream processors over what their logs hold; `backlog` is 0 once the input is read. */
  const drainInternal = async (backlog: number): Promise<void> => {
    const facts = pending.engineFacts.splice(0);
    if (facts.length > 0 || backlog === 0) await feed("engine", facts, backlog);
    await drainStages(backlog);
    const events = pending.agentEvents.splice(0);
    if (events.length > 0) await feed("run-monitor", events, backlog);
  };

  const transport = {
    member: (processor: Processor<never>) =>
      Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const partitions = STAGE_READERS.some(([, name]) => name === processor.name) ? enginePartitions : 1;
            const opened: Member[] = [];
            members.set(processor.name, opened);
            for (let partition = 0; partition < partitions; partition++) {
              const stores = createTaskStores(processor, partition);
              const task = processor.open(partition, storeSet(stores), telemetry);
              const member: Member = { name: processor.name, partition, task, stores };
              opened.push(member);
              // Nothing to restore: the logs start empty. The engine goes live at once.
              if (TOPOLOGY[processor.name].stores.some((store) => store.restore === "source")) {
                restore(task, []);
                for (const page of goLivePages(task)) await step(member, page);
              }
            }
          },
          catch: (cause) => new ProcessorError({ processor: processor.name, cause }),
        }),
        // Tasks with state on disk release it (close its stores, unlock their directories).
        () => Effect.promise(() => closeMembers(members.get(processor.name) ?? [])),
      ),
    run: Effect.tryPromise({
      try: async () => {
        if (source.into === "engine") {
          // The records are the engine's input log itself: they go where ingest's outputs would
          // (the stage facts log, by fact_id, for the partitioned engine).
          let read = 0;
          await source.read(async (record) => {
            if (config.engineTopology?.kind === "stages")
              write({ topic: "stageFacts", key: record.value.fact.fact_id, value: record.value });
            else pending.engineFacts.push(record);
            if ((read += 1) % FILE_BATCH === 0) await drainInternal(Number.POSITIVE_INFINITY);
          });
          await drainInternal(0);
          await sinkLog.settle();
          return;
        }
        let batch: SourceRecord<DecodedFact>[] = [];
        await source.read(async (record) => {
          batch.push(record);
          if (batch.length < FILE_BATCH) return;
          await feed("ingest", batch, Number.POSITIVE_INFINITY);
          batch = [];
          await drainInternal(Number.POSITIVE_INFINITY);
        });
        await feed("ingest", batch, 0);
        await drainInternal(0);
        await sinkLog.settle();
      },
      catch: (cause): TransportError =>
        isFileError(cause)
          ? new FileIoError({ path: input, operation: "read", cause })
          : new ProcessorError({ processor: "embedded", cause }),
    }),
  };

  const sinks: EmbeddedSinks = {
    *results() {
      for (const [key, json] of sinkLog.sorted("results")) yield { key, json };
    },
    *alerts() {
      for (const [, json] of sinkLog.sorted("alerts")) yield JSON.parse(json) as TripwireAlert;
    },
    get alertCount() {
      return alertCount;
    },
    *runStates() {
      for (const [, json] of sinkLog.sorted("runStates")) yield JSON.parse(json) as RunStateSummary;
    },
    *deadLetterLines() {
      for (const [, line] of sinkLog.sorted("deadLetters")) yield line;
      for (const [, line] of sinkLog.sorted("conflicts")) yield line;
    },
    conflicts: () => {
      let count = 0;
      for (const _ of sinkLog.sorted("conflicts")) count += 1;
      return count;
    },
  };

  const layer = Layer.mergeAll(
    Layer.succeed(Transport, transport),
    Layer.succeed(TopicSerde, jsonTopicSerde),
    Layer.succeed(Telemetry, telemetry),
    Layer.succeed(Config, config),
    Layer.succeed(Catalog, catalog),
  );
  return { layer, sinks };
}

/** An alert's place in the alerts file (compareAlerts' order), then its arrival among equal ones. */
function alertKey(alert: TripwireAlert, arrival: number): string {
  const { event_time, run_id, evidence, rule_id, alert_id } = alert;
  return tupleKey([event_time, run_id, evidence.seq_to, evidence.seq_from, rule_id, alert_id, arrival]);
}

/** An agent event as the run monitor reads it from the in-process log: already decoded and valid. */
function agentEventRecord(
  record: AgentEventRecord,
  position: SourceRecord<DecodedFact>["position"],
): SourceRecord<DecodedFact> {
  const event: AgentEvent = record.event;
  return {
    position,
    value: { ok: true, fact: event, invalidMeasures: [], factId: event.fact_id },
    original: { key: null, value: record.bytes },
  };
}

/** Closes the tasks (a task with local state checkpoints and releases it), then their stores. */
async function closeMembers(members: readonly Member[]): Promise<void> {
  for (const member of members) {
    try {
      await closeTask(member.task);
    } finally {
      await closeTaskStores(member.stores);
    }
  }
}

/** The offset after a record of an in-process log (a file's line is no offset: 0). */
function nextOffsetOf(position: SourceRecord<unknown>["position"]): string {
  return isTopicPosition(position) ? (BigInt(position.offset) + 1n).toString() : "0";
}

function isFileError(cause: unknown): boolean {
  return typeof cause === "object" && cause !== null && "syscall" in cause;
}
