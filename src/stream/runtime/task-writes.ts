import type { DeadLetter, Metrics, Processor, ProcessResult, SinkRecord } from "../processor.ts";
import {
  BYTES_CODEC,
  ChangeLoggingKeyValueStore,
  writeChanged,
  type StoreCodec,
} from "../stores/changelogging-store.ts";
import { InMemoryKeyValueStore, type KeyValueStore } from "../stores/key-value-store.ts";
import { sinkRoles, TOPOLOGY, type ProcessorName, type StateStore } from "../topology.ts";
import type { TopicRole } from "../topic-names.ts";
import type { MetricResult } from "../../contract/result-record.ts";
import { InvariantError } from "../../errors.ts";

/**
 * The part of running a task that both transports share: the task's stores as topology.ts
 * declares them, the refusal of undeclared sinks, table sinks written through their store, and the
 * stores' changelogs drained after a batch. What remains for a transport is reading, encoding,
 * writing and committing.
 */

/** A changelog record, already in the form its topic holds (a store holds encoded values). */
export interface ChangelogWrite {
  readonly topic: TopicRole;
  readonly key: string;
  readonly value: Buffer | string | null;
  /** Set for a store restored per partition: its changelog partition is the source partition. */
  readonly partition?: number;
}

/** The stores of one task, by name, each changelogged (a `source`-restored store is the task's own state). */
export interface TaskStores {
  readonly byName: ReadonlyMap<string, ChangeLoggingKeyValueStore<unknown>>;
  readonly declared: readonly { readonly spec: StateStore; readonly store: ChangeLoggingKeyValueStore<unknown> }[];
}

/** The stores of the task of `partition`: in memory, unless the processor keeps one itself (openStore). */
export function createTaskStores(
  processor: Pick<Processor<unknown>, "name" | "storeCodecs" | "openStore">,
  partition: number,
): TaskStores {
  const codecOf = (store: string): StoreCodec<unknown> =>
    processor.storeCodecs?.[store] ?? (BYTES_CODEC as StoreCodec<unknown>);
  const declared: { spec: StateStore; store: ChangeLoggingKeyValueStore<unknown> }[] = [];
  try {
    for (const spec of TOPOLOGY[processor.name].stores) {
      if (spec.restore === "source") continue;
      const inner = processor.openStore?.(spec.name, partition) ?? new InMemoryKeyValueStore(spec.name);
      declared.push({ spec, store: new ChangeLoggingKeyValueStore<unknown>(inner, codecOf(spec.name)) });
    }
  } catch (error) {
    // Stores already opened release their directories (they are never used).
    void closeTaskStores({ declared, byName: new Map() }).catch(() => undefined);
    throw error;
  }
  return { declared, byName: new Map(declared.map(({ spec, store }) => [spec.name, store])) };
}

/** Closes a task's stores (those on disk release their directories). */
export async function closeTaskStores(stores: TaskStores): Promise<void> {
  for (const { store } of stores.declared) await store.close();
}

/** The stores as a processor sees them. */
export function storeSet(stores: TaskStores): ReadonlyMap<string, KeyValueStore<unknown>> {
  return stores.byName;
}

export interface SettledBatch {
  /** Sink records the transport encodes and writes. */
  readonly outputs: readonly SinkRecord[];
  /** Changelog records of the task's stores (including table sinks written through them). */
  readonly changelog: readonly ChangelogWrite[];
}

/**
 * What a processed batch writes: its outputs, except those to a table sink (a topic that is a
 * store's changelog restored whole: results), which go through that store and come out as the
 * store's changelog, only where they change what the topic holds. `encodeTable` gives a table
 * value the form its topic holds. A write to a topic the processor does not declare is refused.
 */
export async function settleBatch(
  processor: ProcessorName,
  result: ProcessResult,
  stores: TaskStores,
  partition: number,
  encodeTable: (result: MetricResult) => Buffer | Promise<Buffer>,
): Promise<SettledBatch> {
  const declared = sinkRoles(processor);
  const undeclared = result.outputs.find((output) => !declared.has(output.topic));
  if (undeclared !== undefined) {
    throw new InvariantError({
      problem: `${processor} writes ${undeclared.topic}, which src/stream/topology.ts does not declare as its sink`,
    });
  }
  let outputs = result.outputs;
  for (const { spec, store } of stores.declared) {
    if (spec.restore !== "topic") continue;
    const table = outputs.filter((output) => output.topic === spec.changelog);
    if (table.length === 0) continue;
    outputs = outputs.filter((output) => output.topic !== spec.changelog);
    // The one table sink today is the results topic (topology.ts): a store of encoded results.
    await writeChanged(
      store as ChangeLoggingKeyValueStore<Buffer>,
      table.map((output) => [output.key, output.value as MetricResult | null] as const),
      encodeTable,
    );
  }
  const changelog: ChangelogWrite[] = [];
  for (const { spec, store } of stores.declared) {
    for (const [key, value] of store.drain())
      changelog.push({ topic: spec.changelog, key, value, ...(spec.restore === "partition" ? { partition } : {}) });
  }
  return { outputs, changelog };
}

/** Counts a dead letter for /metrics and the replay summary, the same on every transport. */
export function countDeadLetter(metrics: Metrics, letter: DeadLetter): void {
  const reason = letter.kind === "conflict" ? letter.conflict.reason : letter.rejection.reason;
  metrics.count("agentops_dead_letters_total", "Records sent to the dead-letter topic, by reason", { reason });
  if (letter.kind !== "record") return;
  if (letter.recordRejected)
    metrics.count("agentops_records_rejected_total", "Records rejected (not processed further), by reason", { reason });
  else if (reason === "INVALID_MEASURE")
    metrics.count(
      "agentops_invalid_measures_total",
      "Invalid measure fields of accepted facts (read as unavailable), by field",
      { field: letter.rejection.field },
    );
}
