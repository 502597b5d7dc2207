import type { CatalogSummary } from "../../catalog/metric-definitions.ts";
import type { EngineConfig } from "../../metrics/engine-config.ts";
import type { Conflict } from "../../metrics/fact-ledger.ts";
import { samePartitions } from "../../partitioned/ledger-stages.ts";
import { isStageRole, StageTask, type StageFlush } from "../../partitioned/stage-task.ts";
import { checkpointWrite, openLocalState, stateIdentity, type Checkpoint } from "../../state/local-state.ts";
import {
  originOf,
  type EngineFact,
  type Processor,
  type SinkRecord,
  type SourcePosition,
  type SourceRecord,
  type TopicPosition,
  type UnreadableRecord,
} from "../processor.ts";
import { ENGINE_STAGES, STAGE_OF, TOPOLOGY, type StageProcessorName } from "../topology.ts";
import type { TopicRole } from "../topic-names.ts";
import { TaskCheckpoints } from "./checkpoints.ts";
import type { EngineStateOptions } from "./engine.ts";
import { InvariantError } from "../../errors.ts";

/** A record of a stage topic as a stage reads it: its key and its (still encoded) value. */
export interface StageInput {
  readonly key: string;
  readonly value: Buffer | null;
}

export type StageSourceValue = EngineFact | UnreadableRecord | StageInput;

/** The topics a stage writes keyed upserts to (its sinks but the dead letters), which a restarted task reads back. */
function upsertSinks(name: StageProcessorName): readonly TopicRole[] {
  return TOPOLOGY[name].sinks.map((sink) => sink.topic).filter((role) => role !== "deadLetters");
}

/**
 * One stage of the partitioned engine as a processor (docs/engine-state.md §4): a `StageTask` per
 * source partition, its state on disk, checkpointed with its source offset and its output topics'
 * ends. Its outputs are keyed upserts, so after a crash it reconciles what it wrote since the
 * checkpoint instead of trusting readers to hold only what its state reflects.
 */
export function stageProcessor(
  name: StageProcessorName,
  config: EngineConfig,
  catalog: CatalogSummary,
  partitions: number,
  stateOptions?: EngineStateOptions,
): Processor<StageSourceValue> {
  const stage = STAGE_OF[name];
  const stages = samePartitions(partitions);
  // The state also depends on the stage and on the partition count (which decides every record's placement).
  const identity = `${stateIdentity(config, catalog)}/${stage}/${String(partitions)}`;
  const sinks = upsertSinks(name);
  return {
    name,
    open: (partition, _stores, metrics, context) => {
      // The four stage tasks of one partition number share the budget one engine partition has.
      const local =
        stateOptions === undefined
          ? undefined
          : openLocalState(
              {
                directory: (index) => `${stateOptions.directory(index)}-${name}`,
                cacheBytes: Math.floor(stateOptions.cacheBytes / ENGINE_STAGES.length),
              },
              partition,
              identity,
            );
      const task = new StageTask(stage, partition, stages, config, catalog, local?.state);
      const writer = `${name}/${String(partition)}`;
      let checkpoint: Checkpoint | undefined = local?.checkpoint;
      /** Rebuilt from offset 0: every key it holds was sent while rebuilding. */
      let rebuilt = true;

      const apply = (records: readonly SourceRecord<StageSourceValue>[], outputs: SinkRecord[]): void => {
        for (const record of records) {
          const { value } = record;
          if ("unreadable" in value) {
            const rejection = {
              reason: "UNDECODABLE_BYTES",
              field: "",
              detail: `${name} input record: ${value.unreadable}`,
            } as const;
            outputs.push({
              topic: "deadLetters",
              key: String(originOf(record.position)),
              value: {
                kind: "record",
                rejection,
                recordRejected: true,
                position: record.position,
                factId: null,
                original: record.original,
              },
            });
          } else if ("fact" in value) {
            const outcome = task.ingest(value.fact, originOf(value.source));
            // The single engine's names: a version that makes its fact_id a conflict is quarantined.
            metrics.count("agentops_engine_facts_total", "Metric facts the engine read, by ledger outcome", {
              outcome: outcome === "new" ? "accepted" : outcome === "conflict" ? "quarantined" : "redelivery",
            });
          } else task.receive(value.key, value.value);
        }
      };
      /** Where the task last read, the coordinates of a conflict whose versions name none (a file replay's line numbers). */
      let lastRead: SourcePosition | undefined;
      const flushed = (flush: StageFlush): SinkRecord[] => {
        const outputs: SinkRecord[] = [];
        for (const record of flush.records)
          outputs.push({
            topic: record.role,
            key: record.key,
            value: { value: record.value, partition: record.partition },
            writer,
          });
        for (const change of flush.results)
          outputs.push({ topic: "results", key: change.key, value: change.result, writer });
        for (const { key, conflict } of flush.conflicts) {
          if (conflict === null) continue;
          // A conflict is found while reading a record, so the task has read one.
          const position = conflictPosition(conflict) ?? lastRead;
          if (position === undefined)
            throw new InvariantError({ problem: `${name} found conflict ${key} before reading any record` });
          outputs.push({
            topic: "deadLetters",
            key,
            value: { kind: "conflict", conflict, position, factId: conflict.factIds.at(-1) ?? "" },
          });
        }
        return outputs;
      };
      const batch = (records: readonly SourceRecord<StageSourceValue>[]): { outputs: SinkRecord[] } => {
        checkpoints.processed();
        const outputs: SinkRecord[] = [];
        apply(records, outputs);
        lastRead = records.at(-1)?.position ?? lastRead;
        outputs.push(...flushed(task.flush()));
        return { outputs };
      };
      const checkpoints = new TaskCheckpoints(local, async (store, offset) => {
        if (!task.settled || context === undefined) return false;
        const ends = await context.topicEnds(sinks);
        checkpoint = {
          offset,
          identity,
          sinkEnds: Object.fromEntries([...ends].map(([role, byPartition]) => [role, Object.fromEntries(byPartition)])),
        };
        await store.state.commit([checkpointWrite(checkpoint)]);
        return true;
      });
      return {
        ...(local === undefined
          ? {}
          : {
              localState: {
                resumeFrom: (sourceEnd) => {
                  if (checkpoint !== undefined && BigInt(checkpoint.offset) <= BigInt(sourceEnd)) {
                    rebuilt = false;
                    return checkpoint.offset;
                  }
                  local.state.clear();
                  checkpoint = undefined;
                  return "0";
                },
                committed: (nextOffset) => checkpoints.committed(nextOffset),
                close: () => checkpoints.close(),
              },
            }),
        reconciliation: {
          writtenSince: () => ({
            writer,
            from: new Map(
              sinks.map((role) => [
                role,
                new Map(
                  Object.entries(checkpoint?.sinkEnds?.[role] ?? {}).map(([partition, offset]) => [
                    Number(partition),
                    offset,
                  ]),
                ),
              ]),
            ),
          }),
          reconcile: (role, key, partition) => {
            if (role === "results") {
              const correction = task.resultCorrection(key, rebuilt);
              return correction === undefined ? undefined : { topic: "results", key, value: correction.result, writer };
            }
            if (!sinks.includes(role) || !isStageRole(role)) return undefined;
            const correction = task.correction(role, key, rebuilt);
            return correction === undefined
              ? undefined
              : { topic: role, key, value: { value: correction.value, partition }, writer };
          },
        },
        sourceRestore: { restore: (records) => batch(records), goLive: () => [{ outputs: flushed(task.flush()) }] },
        process: (input) => batch(input.records),
      };
    },
  };
}

/** Where the conflict's newest version was read (`topic/partition/offset`), for the dead letter's coordinates. */
function conflictPosition(conflict: Conflict): TopicPosition | undefined {
  const origin = conflict.versions.at(-1)?.origin;
  if (typeof origin !== "string") return undefined;
  const match = /^(.*)\/(\d+)\/(\d+)$/.exec(origin);
  return match === null
    ? undefined
    : { topic: match[1] as string, partition: Number(match[2]), offset: match[3] as string };
}
