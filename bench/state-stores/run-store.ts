/**
 * One measured run of bench/state-stores.bench.ts, in a child process so that each starts with a
 * fresh heap and its peak RSS is its own. Prints one JSON line (RunReport or ReopenReport).
 *
 *   node bench/state-stores/run-store.ts load   <store> <dir> <workload.ndjson> <cacheMb> <commitEvery>
 *   node bench/state-stores/run-store.ts reopen <store> <dir>
 *
 * load: applies every metric fact of the workload to the engine-shaped state in front of the
 * store, committing (flush, then one atomic batch with the checkpoint record) every commitEvery
 * facts; then reads a sample of fact records straight from the store, in random order.
 * reopen: opens the existing store and reads its checkpoint record and one fact record.
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { parseFactJson } from "../../src/contract/parse-fact.ts";
import type { MetricFact } from "../../src/contract/facts.ts";
import { isBackendName, openBackend, type StateBackend } from "./backends.ts";
import { CHECKPOINT_KEY, EngineShapedState, factKey } from "./engine-shaped-state.ts";
import { RecordCache, type CacheCounters } from "./record-cache.ts";

const RANDOM_GETS = 200_000;
/** Facts parsed ahead and then applied under one clock reading (a clock read per fact would cost ~10%). */
const PARSED_BATCH = 1000;

export interface RunReport {
  readonly mode: "load";
  readonly facts: number;
  /** Wall time of state work only (apply + flush + commit); reading and parsing lines excluded. */
  readonly stateSeconds: number;
  /** Process CPU (all threads: the store's own included) over the same spans. */
  readonly stateCpuSeconds: number;
  readonly flushSeconds: number;
  readonly cache: Omit<CacheCounters, "commitMillis">;
  /** Time inside the store's batch writes, all commits together. */
  readonly commitSeconds: number;
  readonly commitMillis: {
    readonly median: number;
    readonly p95: number;
    readonly max: number;
    readonly writesPerCommit: number;
  };
  readonly unitRecomputes: number;
  readonly contributionsApplied: number;
  readonly resultsPublished: number;
  readonly randomGetsPerSecond: number;
  /** Sampled fact records the store returned (all of them, unless a write was lost). */
  readonly randomGetsFound: number;
  readonly peakRssBytes: number;
  /** Greatest V8 heap in use seen right after a commit (the cache and the engine's objects). */
  readonly peakHeapUsedBytes: number;
  readonly anonRssBytes: number;
}

export interface ReopenReport {
  readonly mode: "reopen";
  readonly openMillis: number;
  readonly checkpoint: unknown;
}

/** Lines of a file, read in 4 MiB chunks (readline is several times slower on 400-byte lines). */
function* lines(path: string): Generator<string> {
  const fd = openSync(path, "r");
  const chunk = Buffer.allocUnsafe(4 << 20);
  let carry = "";
  try {
    for (let read = readSync(fd, chunk); read > 0; read = readSync(fd, chunk)) {
      const text = carry + chunk.toString("utf8", 0, read);
      let start = 0;
      for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
        yield text.slice(start, end);
        start = end + 1;
      }
      carry = text.slice(start);
    }
    if (carry.length > 0) yield carry;
  } finally {
    closeSync(fd);
  }
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);
}

function anonRss(): number {
  const match = /RssAnon:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
  return match === null ? 0 : Number(match[1]) * 1024;
}

async function load(backend: StateBackend, workload: string, cacheMb: number, commitEvery: number): Promise<RunReport> {
  const cache = new RecordCache(backend, cacheMb * 1024 * 1024);
  const state = new EngineShapedState(cache);
  const sample: string[] = [];
  let stateMillis = 0;
  let stateCpuMicros = 0;
  let flushMillis = 0;
  let offset = 0;
  let sinceCommit = 0;
  let peakHeapUsed = 0;
  const commit = async (): Promise<void> => {
    const started = performance.now();
    state.flush();
    flushMillis += performance.now() - started;
    await cache.commit({ key: CHECKPOINT_KEY, value: Buffer.from(JSON.stringify({ "engine-facts/0": offset })) });
    sinceCommit = 0;
    peakHeapUsed = Math.max(peakHeapUsed, process.memoryUsage().heapUsed);
  };
  /** Applies parsed facts with the clock (wall and process CPU, background store threads included) running. */
  const timed = async (work: () => Promise<void>): Promise<void> => {
    const wall = performance.now();
    const cpu = process.cpuUsage();
    await work();
    const used = process.cpuUsage(cpu);
    stateCpuMicros += used.user + used.system;
    stateMillis += performance.now() - wall;
  };
  let batch: MetricFact[] = [];
  let recorded = 0;
  const applyBatch = async (): Promise<void> => {
    for (const fact of batch) {
      // Reservoir sample of the recorded facts' ids, for the random reads after the load.
      if (state.apply(fact)) {
        recorded += 1;
        if (sample.length < RANDOM_GETS) sample.push(fact.fact_id);
        else if (Math.random() * recorded < RANDOM_GETS) sample[Math.floor(Math.random() * RANDOM_GETS)] = fact.fact_id;
      }
      sinceCommit += 1;
      if (sinceCommit >= commitEvery) await commit();
    }
    batch = [];
  };
  for (const line of lines(workload)) {
    offset += 1;
    const parsed = parseFactJson(line);
    if (!parsed.ok || parsed.fact.type === "agent_step" || parsed.fact.type === "sandbox_event") continue;
    batch.push(parsed.fact);
    if (batch.length >= PARSED_BATCH) await timed(applyBatch);
  }
  await timed(async () => {
    await applyBatch();
    await commit();
  });

  for (let at = sample.length - 1; at > 0; at -= 1) {
    const other = Math.floor(Math.random() * (at + 1));
    [sample[at], sample[other]] = [sample[other] as string, sample[at] as string];
  }
  const started = performance.now();
  let found = 0;
  for (const factId of sample) if (backend.get(factKey(factId)) !== undefined) found += 1;
  const randomSeconds = (performance.now() - started) / 1000;
  if (found === 0) throw new Error("no sampled fact record was found in the store");

  const commits = [...cache.counters.commitMillis].sort((a, b) => a - b);
  const { commitMillis: _commitMillis, ...counters } = cache.counters;
  return {
    mode: "load",
    facts: state.counters.facts,
    stateSeconds: stateMillis / 1000,
    stateCpuSeconds: stateCpuMicros / 1e6,
    flushSeconds: flushMillis / 1000,
    cache: counters,
    commitSeconds: commits.reduce((sum, millis) => sum + millis, 0) / 1000,
    commitMillis: {
      median: quantile(commits, 0.5),
      p95: quantile(commits, 0.95),
      max: commits.at(-1) ?? 0,
      writesPerCommit: cache.counters.storeWrites / Math.max(1, cache.counters.commits),
    },
    unitRecomputes: state.counters.unitRecomputes,
    contributionsApplied: state.counters.contributionsApplied,
    resultsPublished: state.counters.resultsPublished,
    randomGetsPerSecond: sample.length / randomSeconds,
    randomGetsFound: found / sample.length,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    peakHeapUsedBytes: peakHeapUsed,
    anonRssBytes: anonRss(),
  };
}

async function main(): Promise<void> {
  const [mode, store, directory, workload, cacheMb, commitEvery] = process.argv.slice(2);
  if (store === undefined || !isBackendName(store) || directory === undefined)
    throw new Error("usage: run-store.ts load|reopen <store> <dir> [workload cacheMb commitEvery]");
  if (mode === "reopen") {
    const started = performance.now();
    const backend = await openBackend(store, directory);
    const checkpoint = backend.get(CHECKPOINT_KEY);
    const report: ReopenReport = {
      mode: "reopen",
      openMillis: performance.now() - started,
      checkpoint: checkpoint === undefined ? null : JSON.parse(checkpoint.toString("utf8", 0, checkpoint.length)),
    };
    await backend.close();
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return;
  }
  if (mode !== "load" || workload === undefined)
    throw new Error("usage: run-store.ts load <store> <dir> <workload> <cacheMb> <commitEvery>");
  const backend = await openBackend(store, directory);
  const report = await load(backend, workload, Number(cacheMb ?? 64), Number(commitEvery ?? 20_000));
  await backend.close();
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
