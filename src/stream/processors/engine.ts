import { join } from "node:path";
import type { CatalogSummary } from "../../catalog/metric-definitions.ts";
import type { EngineConfig } from "../../metrics/engine-config.ts";
import type { Conflict, LedgerOutcome } from "../../metrics/fact-ledger.ts";
import { byUtf8 } from "../../contract/code-point-order.ts";
import { MetricEngine } from "../../metrics/metric-engine.ts";
import type { EngineObserver } from "../../lineage/engine-directory.ts";
import { decodeUnitRecord, encodeUnitRecord } from "../../state/codecs/contributions.ts";
import { engineTables } from "../../state/engine-tables.ts";
import {
  checkpointWrite,
  openLocalState,
  openStoreDirectory,
  stateIdentity,
  type LocalState,
} from "../../state/local-state.ts";
import type { ResultChange } from "../../contract/result-record.ts";
import { OnDiskKeyValueStore } from "../stores/on-disk-key-value-store.ts";
import { TaskCheckpoints } from "./checkpoints.ts";
import {
  originOf,
  type EngineFact,
  type Metrics,
  type Processor,
  type SinkRecord,
  type SourceRecord,
  type Task,
  type UnreadableRecord,
} from "../processor.ts";

/** Backlog (records behind the source's head) above which a batch's flush may be deferred. */
export const FLUSH_BACKLOG_THRESHOLD = 20_000;
/**
 * Deferred flushes still happen at least this often, so results keep moving during catch-up and the
 * state can be checkpointed (only a flushed state is). Larger flushes cost memory and were no faster (bench/RESULTS.md).
 */
export const FLUSH_EVERY_FACTS = 5_000;

/** The store that holds what the results topic holds (topology.ts); the engine reads its keys. */
export const PUBLISHED_RESULTS = "published-results";

/**
 * Where the engine keeps its state on a Kafka member: an LMDB store per source partition under
 * `directory`, with a record cache of `cacheBytes` in front. Without it (file replay) the state is
 * in memory.
 */
export interface EngineStateOptions {
  readonly directory: (partition: number) => string;
  readonly cacheBytes: number;
}

/**
 * The metric engine as a processor; its source (accepted facts, compacted by fact version) is its
 * own changelog. With local state it resumes from its checkpoint, else loads its contributions log,
 * else rebuilds from offset 0 (docs/engine-state.md §3). Nothing is published while restoring; going
 * live writes its result table through the published-results store, so the results topic receives
 * only the difference. Conflicts and unreadable records become dead letters only live, so each is
 * reported once.
 */
export function engineProcessor(
  config: EngineConfig,
  catalog: CatalogSummary,
  stateOptions?: EngineStateOptions,
  paging: EnginePaging = {},
  observer?: EngineObserver,
): Processor<EngineFact | UnreadableRecord> {
  const { goLivePage = GO_LIVE_PAGE, loadFlushGroups = LOAD_FLUSH_GROUPS } = paging;
  const identity = stateIdentity(config, catalog);
  return {
    name: "engine",
    // With local state the published results are on disk too: they grow with result keys, so with time.
    ...(stateOptions === undefined
      ? {}
      : {
          openStore: (store: string, partition: number) =>
            store === PUBLISHED_RESULTS
              ? new OnDiskKeyValueStore(
                  store,
                  openStoreDirectory(
                    join(stateOptions.directory(partition), PUBLISHED_RESULTS),
                    publishedCacheBytes(stateOptions.cacheBytes),
                  ),
                )
              : undefined,
        }),
    open: (partition, stores, metrics) => {
      const local = stateOptions === undefined ? undefined : openLocalState(stateOptions, partition, identity);
      const engine = new MetricEngine(config, catalog, local === undefined ? undefined : engineTables(local.state));
      const lineage = engine.lineage();
      observer?.opened(partition, lineage);
      const published = stores.get(PUBLISHED_RESULTS);
      /** Facts ingested since the last flush (see process). */
      let unflushed = 0;
      /** Source records before this offset are loaded (their units came from the contributions changelog). */
      let loadUntil = BigInt(local?.checkpoint?.loadUntil ?? "0");
      /** No contributions changelog record is written before the source reaches this offset, so a replay never moves the log's marker back. */
      let changelogFrom = 0n;
      /** Changelog records loaded, and units restored from them, for the log. */
      let loadedUnits = 0;
      /** Flushes the log load made to render the groups it restored (see ChangelogLoad), for the log. */
      let loadFlushes = 0;
      /** The source offset after the last record processed (what a flush's changelog marker names). */
      let nextOffset = 0n;
      /** Resumed from the local checkpoint: the result keys the silent replay changed, which are all going live compares. */
      let changedSinceCheckpoint: Set<string> | undefined;

      /**
       * The changelog records of the units changed since the last call, and the marker. None behind the
       * last marker written: a marker moved back makes the next member evaluate every fact again.
       */
      const changelog = (nextOffset: bigint): SinkRecord[] => {
        if (local === undefined || nextOffset < changelogFrom) return [];
        changelogFrom = nextOffset;
        const records: SinkRecord[] = engine.unitChanges().map(([unit, contributions]) => ({
          topic: "engineContributions",
          key: unit,
          value: contributions.length === 0 ? null : encodeUnitRecord(identity, contributions),
        }));
        records.push({
          topic: "engineContributions",
          key: SETTLED_MARKER,
          value: Buffer.from(JSON.stringify({ offset: nextOffset.toString(), identity }), "utf8"),
        });
        return records;
      };
      const flushed = (nextOffset: bigint): SinkRecord[] => {
        unflushed = 0;
        const results = resultRecords(engine.flush());
        return [...results, ...changelog(nextOffset)];
      };
      /** Commits the state with its checkpoint; only a flushed state may be checkpointed. */
      const checkpoint = async (store: LocalState, offset: string): Promise<boolean> => {
        if (!engine.settled) return false;
        await store.state.commit([checkpointWrite({ offset, identity, loadUntil: loadUntil.toString() })]);
        reportState();
        return true;
      };
      const checkpoints = new TaskCheckpoints(local, checkpoint);
      /** The state cache holds more than its budget: flush, so that the checkpoint that follows can evict. */
      const overBudget = (): boolean => local?.state.overBudget === true;
      const reportState = (): void => {
        if (local === undefined) return;
        const stats = local.state.stats();
        metrics.gauge(
          "agentops_engine_state_cache_bytes",
          "Estimated heap bytes of the engine state's record cache",
          { partition: String(partition) },
          stats.cachedBytes,
        );
        metrics.gauge(
          "agentops_engine_state_commits",
          "Engine state commits (checkpoints) since the partition was opened",
          { partition: String(partition) },
          stats.commits,
        );
      };
      const resumeFrom = (store: LocalState, sourceEnd: string): string => {
        // Restoring until going live: nothing is published meanwhile, so commits need not overlap work.
        store.state.commitsOnThisThread = true;
        changelogFrom = BigInt(sourceEnd);
        const checkpoint = store.checkpoint;
        if (checkpoint !== undefined && BigInt(checkpoint.offset) <= BigInt(sourceEnd)) {
          // Resuming from offset 0 is a rebuild to the runtime (it loads the contributions log
          // first): only a checkpoint past 0 lets going live compare less than everything.
          if (BigInt(checkpoint.offset) > 0n) changedSinceCheckpoint = new Set();
          return checkpoint.offset;
        }
        // No checkpoint (a store left half-written is wiped too), or one past the topic's end (the
        // topic was recreated): restore from the changelog, or rebuild.
        store.state.clear();
        loadUntil = 0n;
        // The log's marker, if any, moves this. Past it the changelog is written as the rebuild goes:
        // held back to going live, it was written all at once (bench/RESULTS.md).
        changelogFrom = 0n;
        return "0";
      };
      const loadChangelog = async (store: LocalState, key: string, value: Buffer | null): Promise<void> => {
        if (key === SETTLED_MARKER) {
          const marker =
            value === null ? undefined : (JSON.parse(value.toString("utf8")) as { offset?: string; identity?: string });
          // A marker of another identity (window, threshold, catalog, layout) restores nothing.
          loadUntil = marker?.identity === identity && marker.offset !== undefined ? BigInt(marker.offset) : 0n;
          changelogFrom = loadUntil;
          return;
        }
        const contributions = value === null ? [] : decodeUnitRecord(value, identity);
        if (contributions === undefined) return;
        engine.restoreUnit(key, contributions);
        loadedUnits += 1;
        // Every group a restored unit reaches is rendered as the load goes, not once after it,
        // which held every result in one commit (bench/RESULTS.md).
        if (engine.dirtyGroupCount >= loadFlushGroups) {
          engine.flush();
          loadFlushes += 1;
        }
        // Not yet checkpointed (the state was cleared): commits need no checkpoint here.
        if (store.state.overBudget) await store.state.commit();
      };
      /** An observer reads the state before the task lets it go (an explanation over a replay). */
      const close = (): Promise<void> => {
        observer?.closing(partition, lineage);
        return checkpoints.close();
      };
      /** The capabilities of a task that keeps its state on disk. */
      const onDisk = (store: LocalState): Pick<Task<unknown>, "localState" | "changelogLoad"> => ({
        localState: {
          resumeFrom: (sourceEnd) => resumeFrom(store, sourceEnd),
          committed: (next) => checkpoints.committed(next),
          close,
        },
        changelogLoad: {
          load: (key, value) => loadChangelog(store, key, value),
          loaded: () => ({ units: loadedUnits, loadUntil: loadUntil.toString(), renderFlushes: loadFlushes }),
        },
      });
      /** In memory there is nothing to resume from or checkpoint; an observer still sees the close. */
      const observedInMemory: Pick<Task<unknown>, "localState"> = observer === undefined
        ? {}
        : { localState: { resumeFrom: () => "0", committed: () => Promise.resolve(), close } };
      return {
        ...(local === undefined ? observedInMemory : onDisk(local)),
        sourceRestore: {
          restore: (records) => {
            checkpoints.processed();
            // What this replay recomputes may differ from what the changelog received from an earlier
            // life of this member after its checkpoint: every unit it recomputes is written again.
            engine.replaying = true;
            for (const record of records) {
              const { value, position } = record;
              if ("unreadable" in value) continue;
              if (BigInt((position as { offset?: string }).offset ?? "0") < loadUntil)
                engine.load(value.fact, originOf(value.source));
              else {
                engine.ingest(value.fact, originOf(value.source));
                unflushed += 1;
              }
            }
            // Restoring, nothing is published: flushing loses nothing (going live publishes the table),
            // and a flushed state can be checkpointed and its changelog written.
            const last = records.at(-1);
            if (last === undefined || (unflushed < FLUSH_EVERY_FACTS && !overBudget())) return { outputs: [] };
            for (const change of engine.flush()) changedSinceCheckpoint?.add(change.key);
            unflushed = 0;
            return { outputs: changelog(nextOffsetAfter(last)) };
          },
          *goLive() {
            unflushed = 0;
            let keys: string[];
            const stale: string[] = [];
            const sinceCheckpoint =
              changedSinceCheckpoint === undefined ? undefined : published?.takeKeysSinceCheckpoint?.();
            if (changedSinceCheckpoint !== undefined && sinceCheckpoint !== undefined) {
              // Both resumed from their checkpoints: only keys changed since either can differ, so a
              // restart's cost does not grow with the result table.
              for (const change of engine.flush()) changedSinceCheckpoint.add(change.key);
              keys = [...new Set([...changedSinceCheckpoint, ...sinceCheckpoint])].sort(byUtf8);
            } else {
              // A state rebuilt or loaded, or a store restored whole: the whole table is compared with what
              // the topic holds, which also repairs a recreated or drifted results topic.
              keys = engine.resultKeys();
              for (const key of published?.keys() ?? []) if (!engine.hasResult(key)) stale.push(key);
            }
            changedSinceCheckpoint = undefined;
            // A page of results at a time: each one rendered, settled and written before the next; then
            // the tombstones, a page at a time too (a changed window makes every earlier key stale).
            for (let start = 0; start < keys.length; start += goLivePage) {
              yield {
                outputs: keys
                  .slice(start, start + goLivePage)
                  .map((key): SinkRecord => ({ topic: "results", key, value: engine.result(key) })),
              };
            }
            let outputs: SinkRecord[] = [];
            for (let start = 0; start < stale.length; start += goLivePage) {
              if (outputs.length > 0) yield { outputs };
              outputs = stale.slice(start, start + goLivePage).map((key) => ({ topic: "results", key, value: null }));
            }
            // The last page also carries the changelog marker: the state is written once it is live.
            const acknowledged = checkpoints.acknowledged;
            if (acknowledged !== undefined) outputs.push(...changelog(BigInt(acknowledged)));
            // Live from here: only units whose contributions change are written (the replay's, flushed
            // above, are taken whether they changed or not).
            engine.replaying = false;
            if (local !== undefined) local.state.commitsOnThisThread = false;
            yield { outputs };
          },
        },
        process: (batch) => {
          checkpoints.processed();
          const outputs: SinkRecord[] = [];
          for (const record of batch.records) ingestLive(engine, record, outputs, metrics);
          // Catching up, results the next batches change again are not worth publishing. A cache over
          // budget flushes anyway: only a flushed state is checkpointed, and only a checkpoint evicts.
          unflushed += batch.records.length;
          const last = batch.records.at(-1);
          if (last !== undefined) nextOffset = nextOffsetAfter(last);
          if (batch.backlog > FLUSH_BACKLOG_THRESHOLD && unflushed < FLUSH_EVERY_FACTS && !overBudget())
            return { outputs };
          return { outputs: [...outputs, ...flushed(nextOffset)] };
        },
      };
    },
  };
}

/** How much going live and a log load do at a time (tests pass less, to cross the bounds with few facts). */
export interface EnginePaging {
  /** Results per page going live (SourceRestore.goLive). */
  readonly goLivePage?: number;
  /** Groups left to render that make a contributions log load flush. */
  readonly loadFlushGroups?: number;
}

/** Groups left to render that make a contributions log load flush (see ChangelogLoad). */
export const LOAD_FLUSH_GROUPS = 5_000;

/** Results written per page going live (SourceRestore.goLive): about 2 MB of results rendered at a time (tests pass fewer). */
export const GO_LIVE_PAGE = 2_000;

/** The published-results store's share of the state cache: a quarter of the engine's (it is read where a result is written, and scanned once going live). */
function publishedCacheBytes(engineCacheBytes: number): number {
  return Math.floor(engineCacheBytes / 4);
}

/** The contributions changelog's marker key: no unit key starts with a 0 byte. */
const SETTLED_MARKER = "\u0000settled";

/** The source offset after a record (a file position counts as offset 0: files have no changelog). */
function nextOffsetAfter(record: SourceRecord<unknown>): bigint {
  const position = record.position as { offset?: string };
  return position.offset === undefined ? 0n : BigInt(position.offset) + 1n;
}

function ingestLive(
  engine: MetricEngine,
  record: SourceRecord<EngineFact | UnreadableRecord>,
  outputs: SinkRecord[],
  metrics: Metrics,
): void {
  if ("unreadable" in record.value) {
    const rejection = {
      reason: "UNDECODABLE_BYTES",
      field: "",
      detail: `engine-facts record: ${record.value.unreadable}`,
    } as const;
    outputs.push({
      topic: "deadLetters",
      key: originKey(record.position),
      value: {
        kind: "record",
        rejection,
        recordRejected: true,
        position: record.position,
        factId: null,
        original: record.original,
      },
    });
    return;
  }
  const { fact, source } = record.value;
  const outcome = engine.ingest(fact, originOf(source));
  countOutcome(metrics, outcome);
  const later = outcome.kind === "quarantined" ? undefined : engine.laterTerminalConflict(fact);
  const conflicts: readonly Conflict[] =
    outcome.kind === "quarantined" ? outcome.conflicts : later === undefined ? [] : [later];
  for (const conflict of conflicts)
    outputs.push({
      topic: "deadLetters",
      key: conflict.identity,
      value: { kind: "conflict", conflict, position: source, factId: fact.fact_id },
    });
}

function countOutcome(metrics: Metrics, outcome: LedgerOutcome): void {
  metrics.count(
    "agentops_engine_facts_total",
    "Metric facts the engine read live, by ledger outcome (accepted, redelivery, re-report, quarantined)",
    { outcome: outcome.kind },
  );
}

function resultRecords(changes: readonly ResultChange[]): SinkRecord[] {
  return changes.map((change) => ({ topic: "results", key: change.key, value: change.result }));
}

function originKey(position: SourceRecord<unknown>["position"]): string {
  return String(originOf(position));
}
