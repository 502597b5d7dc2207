/**
 * Embedded state stores for the engine (`npm run bench:stores`, issue #13): lmdb, classic-level
 * (LevelDB) and @nxtedition/rocksdb, each behind the same bounded write-back record cache, on the
 * engine's state shapes driven by the generated workload (bench/state-stores/engine-shaped-state.ts).
 * Per size and store, in alternating order within each round: state throughput (facts/s), reads
 * that reached the store (gets/s) and writes (puts/s inside commits), commit cost, size on disk,
 * peak and anonymous RSS, random point reads of fact records, and reopen time (a new process opens
 * the store and reads its checkpoint record). Stores live under bench/out/state-stores/<pid>/ and
 * are deleted after each run. Writes the section "Engine state stores" of bench/RESULTS.md.
 *
 *   node bench/state-stores.bench.ts [--sizes 1000000,5000000] [--stores lmdb,classic-level,rocksdb]
 *        [--runs 3] [--cache-mb 64] [--commit-every 20000] [--no-write]
 *   node bench/state-stores.bench.ts --from-runs bench/out/state-stores-runs.ndjson [--no-write]
 * Each finished run is appended to bench/out/state-stores-runs.ndjson; --from-runs renders the
 * section from such a file (the runs of an interrupted sitting) instead of measuring.
 */
import { execFile, execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { isBackendName, type BackendName } from "./state-stores/backends.ts";
import type { ReopenReport, RunReport } from "./state-stores/run-store.ts";
import { publishResultsSection } from "./results-section.ts";
import { BENCH_OUT, ensureWorkload } from "./workload-file.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const NODE = `${ROOT}node_modules/.bin/node`;
const RUNNER = `${ROOT}bench/state-stores/run-store.ts`;
/** This sitting's stores (by process id: two sittings at once must not delete each other's). */
const STORES_DIR = `${BENCH_OUT}state-stores/${process.pid}/`;
const HEADING = "## Engine state stores (issue #13: lmdb, classic-level, rocksdb)";
const RUN_TIMEOUT_MS = 30 * 60_000;
/** Every finished run, one JSON line each, so that an interrupted sitting still yields its figures (--from-runs). */
const RUNS_LOG = `${BENCH_OUT}state-stores-runs.ndjson`;

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string =>
  argv.includes(name) ? (argv[argv.indexOf(name) + 1] ?? fallback) : fallback;
const SIZES = option("--sizes", "1000000,5000000").split(",").map(Number);
const STORES = option("--stores", "lmdb,classic-level,rocksdb").split(",");
const RUNS = Number(option("--runs", "3"));
const CACHE_MB = Number(option("--cache-mb", "64"));
const COMMIT_EVERY = Number(option("--commit-every", "20000"));
const writeResults = !argv.includes("--no-write");
const FROM_RUNS = argv.includes("--from-runs") ? option("--from-runs", RUNS_LOG) : undefined;

function log(message: string): void {
  process.stderr.write(`[bench:stores ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

const run = promisify(execFile);

async function child<T>(args: readonly string[]): Promise<T> {
  const { stdout } = await run(NODE, [RUNNER, ...args], { timeout: RUN_TIMEOUT_MS, maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as T;
}

interface Measured {
  readonly load: RunReport;
  readonly reopen: ReopenReport;
  readonly diskBytes: number;
  readonly load1: number;
}

async function measure(store: BackendName, workload: string, size: number, round: number): Promise<Measured> {
  const directory = `${STORES_DIR}${store}-${size}-${round}`;
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  try {
    const load1 = loadavg()[0] ?? 0;
    const load = await child<RunReport>(["load", store, directory, workload, String(CACHE_MB), String(COMMIT_EVERY)]);
    const diskBytes = Number(execFileSync("du", ["-sb", directory], { encoding: "utf8" }).split("\t")[0]);
    const reopen = await child<ReopenReport>(["reopen", store, directory]);
    return { load, reopen, diskBytes, load1 };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const MIB = 1024 ** 2;
const thousands = (value: number): string => Math.round(value).toLocaleString("en-US");

interface Row {
  readonly size: number;
  readonly store: BackendName;
  readonly runs: readonly Measured[];
}

interface LoggedRun {
  readonly size: number;
  readonly store: BackendName;
  readonly started: string;
  readonly measured: Measured;
}

/** Rows from a runs log: the runs of each (size, store), in the order first seen. */
function rowsFromLog(path: string): { rows: Row[]; started: Date } {
  const logged = readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as LoggedRun);
  const rows: Row[] = [];
  for (const run of logged) {
    const row = rows.find((candidate) => candidate.size === run.size && candidate.store === run.store);
    if (row === undefined) rows.push({ size: run.size, store: run.store, runs: [run.measured] });
    else (row.runs as Measured[]).push(run.measured);
  }
  return { rows: rows.sort((a, b) => a.size - b.size), started: new Date(logged[0]?.started ?? Date.now()) };
}

function rowCells({ size, store, runs }: Row): string[] {
  const pick = (read: (measured: Measured) => number): number => median(runs.map(read));
  return [
    size.toLocaleString("en-US"),
    store,
    String(runs.length),
    thousands(pick((m) => m.load.facts)),
    thousands(pick((m) => m.load.facts / m.load.stateSeconds)),
    thousands(pick((m) => m.load.facts / m.load.stateCpuSeconds)),
    thousands(pick((m) => m.load.cache.storeGets / (m.load.cache.storeGetMillis / 1000))),
    `${(pick((m) => m.load.cache.hits / (m.load.cache.hits + m.load.cache.misses)) * 100).toFixed(1)}%`,
    thousands(pick((m) => m.load.cache.storeWrites / m.load.commitSeconds)),
    `${pick((m) => m.load.commitMillis.median).toFixed(0)} / ${pick((m) => m.load.commitMillis.max).toFixed(0)}`,
    thousands(pick((m) => m.load.commitMillis.writesPerCommit)),
    (pick((m) => m.diskBytes) / MIB).toFixed(0),
    (pick((m) => m.load.peakRssBytes) / MIB).toFixed(0),
    (pick((m) => m.load.anonRssBytes) / MIB).toFixed(0),
    (pick((m) => m.load.peakHeapUsedBytes) / MIB).toFixed(0),
    thousands(pick((m) => m.load.randomGetsPerSecond)),
    pick((m) => m.reopen.openMillis).toFixed(1),
    runs.map((m) => m.load1.toFixed(2)).join(", "),
  ];
}

function section(rows: readonly Row[], started: Date): string {
  const runs = Math.max(...rows.map((row) => row.runs.length));
  const sizes = [...new Set(rows.map((row) => row.size))];
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB, Node ${process.version}`;
  const header = [
    "lines",
    "store",
    "runs",
    "metric facts",
    "facts/s (state work, wall)",
    "facts per CPU-second",
    "store gets/s (cache misses)",
    "cache hit rate",
    "store puts/s (in commits)",
    "commit ms median / max",
    "writes per commit",
    "disk MiB",
    "peak RSS MiB",
    "anon RSS MiB at end",
    "peak V8 heap MiB",
    "random fact gets/s",
    "reopen ms",
    "load (1 min) per run",
  ];
  const lines = [
    HEADING,
    "",
    `Measured ${started.toISOString().slice(0, 10)} on ${machine}, up to ${runs} runs per row in one sitting (stores alternating within each round), medians.`,
    `Command: \`npm run bench:stores -- --sizes ${sizes.join(",")} --runs ${runs} --cache-mb ${CACHE_MB} --commit-every ${COMMIT_EVERY}\`.`,
    "The engine's state as keyed records (docs/engine-state.md) on the generated workload: ledger by identity, entity documents, task index, unit contributions, group sums and as-of counts by result key, published results; " +
      `a ${CACHE_MB} MiB write-back record cache in front; every ${COMMIT_EVERY.toLocaleString("en-US")} facts the touched units are recomputed and the dirty records are written in one atomic batch with the checkpoint record. ` +
      "facts/s is state work only (parsing excluded), in wall time and per second of process CPU (all threads, the store's own included: the figure to compare while the machine is shared). Reopen: a new process opens the store and reads the checkpoint. Random gets: 200k fact records by key in random order, straight from the store.",
    "",
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${rowCells(row).join(" | ")} |`),
  ];
  return `${lines.join("\n")}\n`;
}

function publish(rows: readonly Row[], started: Date): void {
  const text = section(rows, started);
  publishResultsSection(HEADING, text, writeResults, log);
}

async function main(): Promise<void> {
  if (FROM_RUNS !== undefined) {
    const { rows, started } = rowsFromLog(FROM_RUNS);
    publish(rows, started);
    return;
  }
  const stores = STORES.filter(isBackendName);
  if (stores.length !== STORES.length) throw new Error(`unknown store in ${STORES.join(",")}`);
  const started = new Date();
  const rows: Row[] = [];
  for (const size of SIZES) {
    const workload = await ensureWorkload(size, log);
    const results = new Map<BackendName, Measured[]>(stores.map((store) => [store, []]));
    for (let round = 0; round < RUNS; round += 1) {
      // Rotate the order each round so that no store always runs first (or after the heaviest).
      const order = stores.map((_, at) => stores[(at + round) % stores.length] as BackendName);
      for (const store of order) {
        log(
          `${size.toLocaleString("en-US")} lines · ${store} · round ${round + 1}/${RUNS} (load ${loadavg()[0]?.toFixed(2)})`,
        );
        const measured = await measure(store, workload, size, round);
        if (measured.load.randomGetsFound !== 1)
          throw new Error(`${store}: only ${measured.load.randomGetsFound} of the sampled fact records were read back`);
        log(
          `  ${thousands(measured.load.facts / measured.load.stateSeconds)} facts/s (${thousands(measured.load.facts / measured.load.stateCpuSeconds)} per CPU-s), commit median ${measured.load.commitMillis.median.toFixed(0)} ms, disk ${(measured.diskBytes / MIB).toFixed(0)} MiB, peak RSS ${(measured.load.peakRssBytes / MIB).toFixed(0)} MiB, reopen ${measured.reopen.openMillis.toFixed(1)} ms`,
        );
        results.get(store)?.push(measured);
        appendFileSync(
          RUNS_LOG,
          `${JSON.stringify({ size, store, started: started.toISOString(), measured } satisfies LoggedRun)}\n`,
        );
      }
    }
    for (const store of stores) rows.push({ size, store, runs: results.get(store) ?? [] });
  }
  rmSync(STORES_DIR, { recursive: true, force: true });
  publish(rows, started);
}

await main();
