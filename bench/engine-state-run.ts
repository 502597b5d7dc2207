/**
 * Child process of bench/engine-state.bench.ts: one measurement of the metric engine with its state
 * on disk (LMDB behind the bounded record cache) or in memory, in a fresh process so that its peak
 * RSS is its own. Prints one JSON line on stdout (LoadReport or RestartReport) and a progress line
 * per commit on stderr (the parent keeps the last one if the run is cut short).
 *
 *   node bench/engine-state-run.ts load    --workload <ndjson> --dir <lmdb dir> --cache-mb 64 --commit-every 20000
 *        --hold-back-bytes 1048576 [--max-seconds S] [--min-free-bytes B]
 *   node bench/engine-state-run.ts memory  --workload <ndjson> --commit-every 20000 --hold-back-bytes 1048576
 *   node bench/engine-state-run.ts restart --workload <ndjson> --dir <lmdb dir> --cache-mb 64 --live-facts 1000
 *
 * load: streams the file line by line (only a batch of parsed facts is held, so memory reflects the
 * engine and not the input), ingests every metric fact, and every commitEvery facts flushes and
 * commits the dirty state with a checkpoint (line number and byte offset of the last line consumed)
 * in one LMDB transaction. It stops holdBackBytes before the end of the file, after a last flush and
 * commit, so that the restart has input beyond the checkpoint to go live on. It also stops early, at a
 * commit, after --max-seconds or when the disk's free space falls below --min-free-bytes (a 20M-line
 * store takes tens of GB): the report then says why and how far it got.
 * Run with node --expose-gc, the load also forces a full collection after the first commit past
 * each quarter of the input and reports the heap still used (liveHeap): what the engine holds.
 * memory: the same loop over the in-memory state (commit is a no-op there), for comparison.
 * restart: opens the store, builds the engine over it, reads the checkpoint, seeks the file to the
 * checkpoint's byte offset (as a consumer seeks to its committed offset), ingests the next liveFacts
 * metric facts and flushes: the time to "live".
 */
import { statfsSync, statSync } from "node:fs";
import { shippedCatalog } from "../src/catalog/metric-definitions.ts";
import { isAgentEvent, type MetricFact } from "../src/contract/facts.ts";
import { parseFactJson } from "../src/contract/parse-fact.ts";
import { DEFAULT_ENGINE_CONFIG } from "../src/metrics/engine-config.ts";
import { MetricEngine } from "../src/metrics/metric-engine.ts";
import { openLmdbBackend } from "../src/state/state-backend.ts";
import { encodeUnitRecord } from "../src/state/codecs/contributions.ts";
import { engineTables } from "../src/state/engine-tables.ts";
import { boundEngineHeapGrowth } from "../src/state/heap-growth.ts";
import { stateIdentity } from "../src/state/local-state.ts";
import { StateStore, type StateStoreStats } from "../src/state/state-store.ts";
import { readProcStatus } from "../src/stream/runtime/proc-status.ts";
import { linesFrom } from "./workload-lines.ts";

/** Outside every table's prefix (they start with a letter), so it never collides with state. */
export const CHECKPOINT_KEY = "\u0000checkpoint";
/** Parsed facts held at once: enough to time input and engine in spans, not per line. */
const BATCH_FACTS = 1000;
/** How often memory is sampled, as the brief of issue #13's memory target asks. */
const SAMPLE_EVERY_MS = 500;

export interface Checkpoint {
  /** Last line consumed (1-based). */
  readonly line: number;
  /** Byte offset just past that line: where the input resumes. */
  readonly byte: number;
  readonly facts: number;
}

export interface MemorySample {
  readonly facts: number;
  readonly rssAnonBytes: number;
  readonly rssFileBytes: number;
  readonly heapUsedBytes: number;
  /** V8 heap reserved (used + free space V8 keeps): with heapUsed, where anonymous RSS goes. */
  readonly heapTotalBytes: number;
  /** Memory outside the V8 heap held by JS objects (Buffers). */
  readonly externalBytes: number;
  /** The record cache's own estimate of what it holds, dirty entries included. */
  readonly cachedBytes: number;
}

export interface LoadReport {
  readonly mode: "load" | "memory";
  readonly lines: number;
  readonly facts: number;
  readonly agentEvents: number;
  readonly rejected: number;
  readonly outcomes: Readonly<Record<string, number>>;
  readonly wallSeconds: number;
  /** Reading the file and parsing lines (wall and process CPU). */
  readonly inputSeconds: number;
  readonly inputCpuSeconds: number;
  /** ingest + flush + commit (wall and process CPU: GC and LMDB included, both are the engine's cost). */
  readonly engineSeconds: number;
  readonly engineCpuSeconds: number;
  readonly flushSeconds: number;
  readonly commitSeconds: number;
  readonly processCpuSeconds: number;
  readonly commitMillis: { readonly median: number; readonly p95: number; readonly max: number };
  readonly writesPerCommit: number;
  readonly peakRssBytes: number;
  readonly peakRssAnonBytes: number;
  readonly peakRssFileBytes: number;
  readonly peakHeapUsedBytes: number;
  readonly peakHeapTotalBytes: number;
  /** Peak of the record cache's estimate (reached just before a commit: the dirty entries wait for it). */
  readonly peakCachedBytes: number;
  /** One sample just before each commit (after its flush): the dirty state at its largest. */
  readonly beforeCommits: readonly MemorySample[];
  /** One sample right after each commit, to show whether memory grows with the facts. */
  readonly afterCommits: readonly MemorySample[];
  /**
   * With node --expose-gc only: the V8 heap still used after a forced full collection, at the first
   * commit past each quarter of the input (what the engine holds, apart from the garbage V8 has not
   * yet collected, which heapUsed in the other samples includes).
   */
  readonly liveHeap: readonly { readonly facts: number; readonly bytes: number }[];
  readonly cache: StateStoreStats;
  readonly checkpoint: Checkpoint;
  /** Why the load stopped before the hold-back point, if it did. */
  readonly stoppedBy: "time" | "disk" | null;
}

export interface LoadOptions {
  readonly commitEvery: number;
  readonly holdBackBytes: number;
  readonly maxSeconds: number;
  readonly minFreeBytes: number;
}

export interface RestartReport {
  readonly mode: "restart";
  readonly openMillis: number;
  readonly engineMillis: number;
  readonly checkpointMillis: number;
  /** From the seek to the end of the flush: reading, parsing, ingesting liveFacts facts, flushing. */
  readonly catchUpMillis: number;
  /** open + engine + checkpoint + catch-up: the time to live. */
  readonly liveMillis: number;
  readonly facts: number;
  readonly lines: number;
  readonly changes: number;
  readonly misses: number;
  readonly checkpoint: Checkpoint;
  readonly peakRssBytes: number;
}

/** Peaks of anonymous RSS (the heap, native allocations), file RSS (LMDB's mapped pages) and V8 heap. */
class MemoryPeaks {
  rssAnon = 0;
  rssFile = 0;
  heapUsed = 0;
  heapTotal = 0;
  cached = 0;
  private last = 0;
  private readonly state: StateStore;

  constructor(state: StateStore) {
    this.state = state;
  }

  sample(facts: number): MemorySample {
    this.last = performance.now();
    const status = readProcStatus("self");
    const usage = process.memoryUsage();
    const sample = {
      facts,
      rssAnonBytes: status?.("RssAnon") ?? 0,
      rssFileBytes: status?.("RssFile") ?? 0,
      heapUsedBytes: usage.heapUsed,
      heapTotalBytes: usage.heapTotal,
      externalBytes: usage.external,
      cachedBytes: this.state.cachedBytes,
    };
    this.rssAnon = Math.max(this.rssAnon, sample.rssAnonBytes);
    this.rssFile = Math.max(this.rssFile, sample.rssFileBytes);
    this.heapUsed = Math.max(this.heapUsed, sample.heapUsedBytes);
    this.heapTotal = Math.max(this.heapTotal, sample.heapTotalBytes);
    this.cached = Math.max(this.cached, sample.cachedBytes);
    return sample;
  }

  /** Samples when SAMPLE_EVERY_MS have passed (the loop is synchronous, so a timer would never fire). */
  maybeSample(facts: number): void {
    if (performance.now() - this.last >= SAMPLE_EVERY_MS) this.sample(facts);
  }
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);
}

const cpuSeconds = (usage: NodeJS.CpuUsage): number => (usage.user + usage.system) / 1e6;

interface Parsed {
  readonly fact: MetricFact;
  readonly line: number;
  readonly end: number;
}

function freeBytes(directory: string): number {
  const fs = statfsSync(directory);
  return fs.bavail * fs.bsize;
}

async function load(
  mode: "load" | "memory",
  workload: string,
  state: StateStore,
  options: LoadOptions,
  directory: string | undefined,
): Promise<LoadReport> {
  const { commitEvery, holdBackBytes, maxSeconds, minFreeBytes } = options;
  const started = performance.now();
  const stopAt = Math.max(0, statSync(workload).size - holdBackBytes);
  let stoppedBy: "time" | "disk" | null = null;
  const catalog = shippedCatalog();
  const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, catalog, engineTables(state));
  const identity = stateIdentity(DEFAULT_ENGINE_CONFIG, catalog);
  const peaks = new MemoryPeaks(state);
  const afterCommits: MemorySample[] = [];
  const beforeCommits: MemorySample[] = [];
  const liveHeap: { facts: number; bytes: number }[] = [];
  const forceGc = (globalThis as { gc?: () => void }).gc;
  let nextQuarter = 1;
  const commitMillis: number[] = [];
  const outcomes: Record<string, number> = {};
  let writes = 0;
  let lines = 0;
  let facts = 0;
  let agentEvents = 0;
  let rejected = 0;
  let sinceCommit = 0;
  let inputMillis = 0;
  let inputCpu = 0;
  let engineMillis = 0;
  let engineCpu = 0;
  let flushMillis = 0;
  let lastEnd = 0;
  let committed: Checkpoint = { line: 0, byte: 0, facts: 0 };

  const commit = async (line: number, end: number): Promise<void> => {
    const flushStarted = performance.now();
    engine.flush();
    // As the processor after each flush (src/stream/processors/engine.ts): the changed units'
    // contributions changelog records, encoded (the processor sends them; here they are dropped).
    // On disk this also empties the changed-units table, as the processor's flushes do.
    if (state.persistent)
      for (const [, contributions] of engine.unitChanges())
        if (contributions.length > 0) encodeUnitRecord(identity, contributions);
    const commitStarted = performance.now();
    flushMillis += commitStarted - flushStarted;
    if (!engine.settled) throw new Error("engine not settled after flush: a checkpoint now would claim unflushed work");
    // The peak of the dirty state is just before the commit writes it and evicts the cache.
    beforeCommits.push(peaks.sample(facts));
    committed = { line, byte: end, facts };
    // The write runs on LMDB's writer thread; this waits only for the previous commit to land.
    await state.commit([[CHECKPOINT_KEY, Buffer.from(JSON.stringify(committed))]]);
    commitMillis.push(performance.now() - commitStarted);
    writes += state.lastCommitWrites;
    sinceCommit = 0;
    afterCommits.push(peaks.sample(facts));
    if (forceGc !== undefined && end >= (stopAt * nextQuarter) / 4) {
      nextQuarter = Math.floor((4 * end) / Math.max(1, stopAt)) + 1;
      forceGc();
      liveHeap.push({ facts, bytes: process.memoryUsage().heapUsed });
    }
    if ((performance.now() - started) / 1000 >= maxSeconds) stoppedBy = "time";
    else if (directory !== undefined && freeBytes(directory) < minFreeBytes) stoppedBy = "disk";
    process.stderr.write(
      `${JSON.stringify({ progress: { facts, lines, seconds: (performance.now() - started) / 1000, rssAnonBytes: peaks.rssAnon, rssFileBytes: peaks.rssFile } })}\n`,
    );
  };

  const ingest = async (batch: readonly Parsed[]): Promise<void> => {
    const wall = performance.now();
    const cpu = process.cpuUsage();
    for (const [index, { fact, line, end }] of batch.entries()) {
      const outcome = engine.ingest(fact, line);
      outcomes[outcome.kind] = (outcomes[outcome.kind] ?? 0) + 1;
      facts += 1;
      sinceCommit += 1;
      // As the processor's checkpoints (TaskCheckpoints): also at the end of a batch that left the cache over its budget.
      const overBudget = index === batch.length - 1 && state.overBudget;
      if (sinceCommit >= commitEvery || overBudget) {
        await commit(line, end);
        // Stop at this commit: the rest of the batch is never ingested (the checkpoint says where to resume).
        if (stoppedBy !== null) break;
      }
    }
    engineCpu += cpuSeconds(process.cpuUsage(cpu));
    engineMillis += performance.now() - wall;
  };

  let batch: Parsed[] = [];
  let inputWall = performance.now();
  let inputCpuStart = process.cpuUsage();
  const closeInputSpan = (): void => {
    inputCpu += cpuSeconds(process.cpuUsage(inputCpuStart));
    inputMillis += performance.now() - inputWall;
  };
  for (const { text, end } of linesFrom(workload, 0)) {
    if (end > stopAt || stoppedBy !== null) break;
    lines += 1;
    lastEnd = end;
    const parsed = parseFactJson(text);
    if (!parsed.ok) rejected += 1;
    else if (isAgentEvent(parsed.fact)) agentEvents += 1;
    else batch.push({ fact: parsed.fact, line: lines, end });
    if (batch.length >= BATCH_FACTS) {
      closeInputSpan();
      await ingest(batch);
      batch = [];
      peaks.maybeSample(facts);
      inputWall = performance.now();
      inputCpuStart = process.cpuUsage();
    } else if ((lines & 255) === 0) peaks.maybeSample(facts);
  }
  closeInputSpan();
  if (stoppedBy === null) await ingest(batch);
  // The checkpoint is the last line consumed, fact or not: the restart resumes after it.
  if (stoppedBy === null) {
    const wall = performance.now();
    const cpu = process.cpuUsage();
    await commit(lines, lastEnd);
    await state.landed();
    engineCpu += cpuSeconds(process.cpuUsage(cpu));
    engineMillis += performance.now() - wall;
  }

  const sortedCommits = [...commitMillis].sort((a, b) => a - b);
  return {
    mode,
    lines,
    facts,
    agentEvents,
    rejected,
    outcomes,
    wallSeconds: (performance.now() - started) / 1000,
    inputSeconds: inputMillis / 1000,
    inputCpuSeconds: inputCpu,
    engineSeconds: engineMillis / 1000,
    engineCpuSeconds: engineCpu,
    flushSeconds: flushMillis / 1000,
    commitSeconds: commitMillis.reduce((sum, millis) => sum + millis, 0) / 1000,
    processCpuSeconds: cpuSeconds(process.cpuUsage()),
    commitMillis: {
      median: quantile(sortedCommits, 0.5),
      p95: quantile(sortedCommits, 0.95),
      max: sortedCommits.at(-1) ?? 0,
    },
    writesPerCommit: writes / Math.max(1, commitMillis.length),
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    peakRssAnonBytes: peaks.rssAnon,
    peakRssFileBytes: peaks.rssFile,
    peakHeapUsedBytes: peaks.heapUsed,
    peakHeapTotalBytes: peaks.heapTotal,
    peakCachedBytes: peaks.cached,
    beforeCommits,
    afterCommits,
    liveHeap,
    cache: state.stats(),
    checkpoint: committed,
    stoppedBy,
  };
}

function restart(workload: string, directory: string, cacheMb: number, liveFacts: number): Promise<RestartReport> {
  const started = performance.now();
  const backend = openLmdbBackend(directory);
  const opened = performance.now();
  const state = new StateStore(backend, cacheMb * 1024 * 1024);
  const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog(), engineTables(state));
  const built = performance.now();
  const stored = backend.get(CHECKPOINT_KEY);
  if (stored === undefined) throw new Error(`no checkpoint in ${directory}`);
  const checkpoint = JSON.parse(stored.toString("utf8")) as Checkpoint;
  const read = performance.now();
  let facts = 0;
  let lines = 0;
  for (const { text } of linesFrom(workload, checkpoint.byte)) {
    lines += 1;
    const parsed = parseFactJson(text);
    if (!parsed.ok || isAgentEvent(parsed.fact)) continue;
    engine.ingest(parsed.fact, checkpoint.line + lines);
    facts += 1;
    if (facts >= liveFacts) break;
  }
  const changes = engine.flush().length;
  const live = performance.now();
  const report: RestartReport = {
    mode: "restart",
    openMillis: opened - started,
    engineMillis: built - opened,
    checkpointMillis: read - built,
    catchUpMillis: live - read,
    liveMillis: live - started,
    facts,
    lines,
    changes,
    misses: state.misses,
    checkpoint,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
  return backend.close().then(() => report);
}

function options(args: readonly string[]): (name: string, fallback?: string) => string {
  return (name, fallback) => {
    const at = args.indexOf(`--${name}`);
    const value = at === -1 ? fallback : args[at + 1];
    if (value === undefined) throw new Error(`engine-state-run.ts: --${name} is required`);
    return value;
  };
}

async function main(): Promise<void> {
  const [mode, ...args] = process.argv.slice(2);
  const option = options(args);
  const workload = option("workload");
  const loadOptions = (): LoadOptions => ({
    commitEvery: Number(option("commit-every")),
    holdBackBytes: Number(option("hold-back-bytes")),
    maxSeconds: Number(option("max-seconds", "Infinity")),
    minFreeBytes: Number(option("min-free-bytes", "0")),
  });
  let report: LoadReport | RestartReport;
  // The engine over its on-disk state runs with the heap growth `agentops run` sets (the in-memory
  // comparison keeps V8's own, as a file replay does).
  if (mode === "load" || mode === "restart") boundEngineHeapGrowth();
  if (mode === "load") {
    const directory = option("dir");
    const backend = openLmdbBackend(directory);
    report = await load(
      "load",
      workload,
      new StateStore(backend, Number(option("cache-mb")) * 1024 * 1024),
      loadOptions(),
      directory,
    );
    await backend.close();
  } else if (mode === "memory") {
    report = await load("memory", workload, new StateStore(undefined), loadOptions(), undefined);
  } else if (mode === "restart") {
    report = await restart(workload, option("dir"), Number(option("cache-mb")), Number(option("live-facts")));
  } else
    throw new Error("usage: engine-state-run.ts load|memory|restart --workload <ndjson> … (see the header comment)");
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
