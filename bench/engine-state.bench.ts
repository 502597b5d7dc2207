/**
 * The metric engine with its state on disk (`npm run bench:engine-state`, issue #13's memory and
 * restart targets): LMDB behind the bounded record cache (src/state/), driven by the
 * generated workload streamed line by line. Per size and run, each in a fresh child process
 * (bench/engine-state-run.ts):
 *   1. load: every metric fact ingested, flush + one LMDB commit with a checkpoint every
 *      --commit-every facts; throughput (input vs engine, wall and CPU), memory (peak RSS, and
 *      sampled every 500 ms: anonymous RSS, file-backed RSS i.e. LMDB's mapped pages, V8 heap),
 *      commit times, cache counters, the store's size on disk;
 *   2. restart: a new process opens the store, builds the engine, reads the checkpoint, seeks the
 *      input there and ingests the next 1,000 metric facts and flushes (time to live);
 *   3. at the sizes of --memory-at (1M by default) only: the same load with the state in memory,
 *      for comparison (it holds every fact: 1.7–2 GiB at 1M, so not at larger sizes).
 * --memory-limit-mb N runs each load inside a memory cgroup of its own whose hard limit, N MiB, counts
 * the page cache as a container's does (bench/memory-cgroup.ts): whether the engine completes there or
 * is OOM-killed is the memory target counted the way an operator's container counts it.
 * The load stops 1 MiB before the end of the file, so the restart has input after the checkpoint.
 * Stores live under bench/out/engine-state/<pid>/ and are deleted after each run; free disk is
 * checked before each size (a 20M-line store takes tens of GB) and a load stops at a commit when
 * --max-minutes pass or free disk falls below --min-free-gib, reporting how far it got.
 * Writes the section "Engine state on disk" of bench/RESULTS.md; every finished run is appended to
 * bench/out/engine-state-runs-<pid>.ndjson, and --from-runs renders the section from such files
 * (comma-separated: sittings of different sizes, e.g. 20M alone after 1M and 5M).
 *
 *   node bench/engine-state.bench.ts [--sizes 1000000,5000000,20000000] [--runs 1] [--cache-mb 32 (agentops run's default)]
 *        [--commit-every 20000] [--memory-at 1000000] [--max-minutes 40] [--min-free-gib 8] [--heap-mb N]
 *        [--memory-limit-mb N] [--no-write]
 *   node bench/engine-state.bench.ts --from-runs bench/out/engine-state-runs-<pid>.ndjson[,…] [--no-write]
 */
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statfsSync, statSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { DEFAULT_STATE_CACHE_MB } from "../src/stream/runtime/stream-config.ts";
import { DEFAULT_SEED } from "../src/workload/workload.ts";
import type { LoadReport, MemorySample, RestartReport } from "./engine-state-run.ts";
import { CLI_ENV, CLI_NODE_FLAGS, SHIPPED_HEAP_FLAG } from "./cli-launch.ts";
import { type MemoryCgroup, type MemoryCgroupUsage, openMemoryCgroup } from "./memory-cgroup.ts";
import { publishResultsSection } from "./results-section.ts";
import { BENCH_OUT, ensureWorkload } from "./workload-file.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const NODE = `${ROOT}node_modules/.bin/node`;
const RUNNER = `${ROOT}bench/engine-state-run.ts`;
/** This sitting's stores (by process id: two sittings at once must not delete each other's). */
const STORES_DIR = `${BENCH_OUT}engine-state/${process.pid}/`;
/** This sitting's finished runs, one JSON line each: an interrupted sitting still yields its figures (--from-runs). */
const RUNS_LOG = `${BENCH_OUT}engine-state-runs-${process.pid}.ndjson`;
const HEADING = "## Engine state on disk (issue #13: memory and restart targets)";
/** Input left after the load's last checkpoint, for the restart to go live on (≈ 2,500 lines, ≈ 2,000 facts). */
const HOLD_BACK_BYTES = 1 << 20;
const LIVE_FACTS = 1000;
const MIB = 1024 ** 2;
const GIB = 1024 ** 3;
const TARGETS = { peakRssBytes: 512 * MIB, liveMillis: 5000, liveAtLines: 5_000_000 };
/** Before any store was measured: bytes on disk per line of input (a 100k-line trial took 2.9 KB). */
const DEFAULT_STORE_BYTES_PER_LINE = 4000;
/** Bytes per line of a generated workload (≈ 405 at 1M). */
const WORKLOAD_BYTES_PER_LINE = 420;

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string =>
  argv.includes(name) ? (argv[argv.indexOf(name) + 1] ?? fallback) : fallback;
const SIZES = option("--sizes", "1000000,5000000,20000000").split(",").map(Number);
const RUNS = Number(option("--runs", "1"));
const CACHE_MB = Number(option("--cache-mb", String(DEFAULT_STATE_CACHE_MB)));
/** --heap-mb N runs the engine-on-disk children with V8's heap bounded (--max-old-space-size=N), as an engine member would be. */
const HEAP_MB = argv.includes("--heap-mb") ? Number(option("--heap-mb", "0")) : undefined;
const COMMIT_EVERY = Number(option("--commit-every", "20000"));
/** --memory-limit-mb N: each load in a memory cgroup limited to N MiB, page cache included. */
const MEMORY_LIMIT_MB = argv.includes("--memory-limit-mb") ? Number(option("--memory-limit-mb", "0")) : undefined;
const MEMORY_AT = new Set(
  option("--memory-at", "1000000")
    .split(",")
    .filter((size) => size !== "")
    .map(Number),
);
const MAX_MINUTES = Number(option("--max-minutes", "40"));
/** Disk left to the others working on the machine when a large store runs out of room. */
const MIN_FREE_BYTES = Number(option("--min-free-gib", "8")) * GIB;
const writeResults = !argv.includes("--no-write");
const FROM_RUNS = argv.includes("--from-runs") ? option("--from-runs", "").split(",") : undefined;

function log(message: string): void {
  process.stderr.write(`[bench:engine-state ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

const load1 = (): number => loadavg()[0] ?? 0;

interface ChildResult<T> {
  readonly report: T | undefined;
  readonly wallMillis: number;
  /** Why there is no report (exit code and the last error line). */
  readonly failure: string | undefined;
}

/** Runs the child; its progress lines (stderr) are logged every `progressEvery`-th. */
function child<T>(
  args: readonly string[],
  timeoutMs: number,
  progressEvery = 25,
  cgroup?: MemoryCgroup,
): Promise<ChildResult<T>> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // The engine runs with the node flags `agentops run` has (bin/agentops: heap bound, young
    // generation), the heap bound replaced by --heap-mb's; the in-memory comparison keeps V8's
    // defaults. Under --memory-limit-mb this matters: without an explicit bound V8 sizes its heap
    // from the cgroup's limit, which the shipped command overrides.
    const heapFlags = args.includes("memory")
      ? []
      : HEAP_MB === undefined
        ? CLI_NODE_FLAGS
        : [...CLI_NODE_FLAGS.filter((flag) => flag !== SHIPPED_HEAP_FLAG), `--max-old-space-size=${String(HEAP_MB)}`];
    const command: [string, string[]] = [NODE, [...heapFlags, RUNNER, ...args]];
    const [file, fileArgs] = cgroup === undefined ? command : cgroup.wrap(...command);
    // The shipped command's environment too (MALLOC_ARENA_MAX), for the engine's memory to be the user's.
    const proc = spawn(file, fileArgs, { cwd: ROOT, env: CLI_ENV, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderrTail = "";
    let progressLines = 0;
    proc.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    proc.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      for (const line of chunk.split("\n")) {
        if (line.startsWith('{"progress"')) {
          progressLines += 1;
          if (progressLines % progressEvery === 0) {
            const { progress } = JSON.parse(line) as {
              progress: { facts: number; seconds: number; rssAnonBytes: number; rssFileBytes: number };
            };
            log(
              `    ${progress.facts.toLocaleString("en-US")} facts in ${progress.seconds.toFixed(0)} s, peak anon ${(progress.rssAnonBytes / MIB).toFixed(0)} MiB, file ${(progress.rssFileBytes / MIB).toFixed(0)} MiB, load ${load1().toFixed(2)}`,
            );
          }
        } else if (line.trim() !== "") stderrTail = `${stderrTail}\n${line}`.slice(-4000);
      }
    });
    const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
    proc.on("error", reject);
    proc.on("close", (code, signal) => {
      clearTimeout(timer);
      const wallMillis = performance.now() - started;
      const last = stdout.trim().split("\n").at(-1) ?? "";
      if (code === 0 && last.startsWith("{"))
        resolve({ report: JSON.parse(last) as T, wallMillis, failure: undefined });
      else
        resolve({
          report: undefined,
          wallMillis,
          failure: `exit ${String(code ?? signal)}: ${
            stderrTail
              .split("\n")
              .filter((line) => /Error|error/.test(line))
              .at(-1)
              ?.trim()
              .slice(0, 200) ?? ""
          }`,
        });
    });
  });
}

/** Bytes the directory's files take on disk (allocated blocks, not apparent size). */
function diskBytes(directory: string): number {
  return Number(execFileSync("du", ["-s", "--block-size=1", directory], { encoding: "utf8" }).split("\t")[0]);
}

function freeBytes(): number {
  const fs = statfsSync(BENCH_OUT);
  return fs.bavail * fs.bsize;
}

interface Measured {
  readonly size: number;
  readonly run: number;
  readonly started: string;
  readonly mode: "load" | "memory";
  readonly load: LoadReport;
  readonly diskBytes: number | null;
  readonly restart: RestartReport | null;
  readonly restartWallMillis: number | null;
  readonly loadAvg: { readonly start: number; readonly end: number };
  readonly note: string;
  /** The sitting's command line and settings, so a section rendered from runs logs states them. */
  readonly command: string;
  readonly cacheMb: number;
  readonly commitEvery: number;
  /** The load ran under this hard memory limit (page cache included), and how much of it it used. */
  readonly memoryLimit?: MemoryCgroupUsage;
}

const SETTINGS = {
  command: `npm run bench:engine-state --${argv.map((arg) => ` ${arg}`).join("")}`,
  cacheMb: CACHE_MB,
  commitEvery: COMMIT_EVERY,
};

const timeoutMs = (): number => (MAX_MINUTES + 15) * 60_000;

async function measureDisk(size: number, workload: string, run: number): Promise<Measured | string> {
  const directory = `${STORES_DIR}lmdb-${size}-${run}`;
  rmSync(directory, { recursive: true, force: true });
  const start = load1();
  const started = new Date().toISOString();
  try {
    const loadArgs = [
      "load",
      "--workload",
      workload,
      "--dir",
      directory,
      "--cache-mb",
      String(CACHE_MB),
      "--commit-every",
      String(COMMIT_EVERY),
      "--hold-back-bytes",
      String(HOLD_BACK_BYTES),
      "--max-seconds",
      String(MAX_MINUTES * 60),
      "--min-free-bytes",
      String(MIN_FREE_BYTES),
    ];
    const cgroup =
      MEMORY_LIMIT_MB === undefined
        ? undefined
        : openMemoryCgroup(
            `agentops-bench-${String(process.pid)}-${String(size)}-${String(run)}`,
            MEMORY_LIMIT_MB * MIB,
          );
    if (typeof cgroup === "string") return `no memory limit could be set: ${cgroup}`;
    const loaded = await child<LoadReport>(loadArgs, timeoutMs(), 25, cgroup);
    const memoryLimit = cgroup?.usage();
    cgroup?.close();
    if (loaded.report === undefined) {
      const killed =
        memoryLimit !== undefined && memoryLimit.oomKills > 0
          ? `killed by the kernel for memory under the ${String(MEMORY_LIMIT_MB)} MiB limit (cgroup peak ${mib(memoryLimit.peakBytes)} MiB), `
          : "";
      return `load failed after ${(loaded.wallMillis / 1000).toFixed(0)} s: ${killed}${loaded.failure ?? ""}`;
    }
    const bytes = diskBytes(directory);
    const restarted = await child<RestartReport>(
      [
        "restart",
        "--workload",
        workload,
        "--dir",
        directory,
        "--cache-mb",
        String(CACHE_MB),
        "--live-facts",
        String(LIVE_FACTS),
      ],
      10 * 60_000,
    );
    const note = [
      loaded.report.stoppedBy === null
        ? ""
        : `stopped at a commit (${loaded.report.stoppedBy === "time" ? `${MAX_MINUTES}-minute budget` : `free disk below ${(MIN_FREE_BYTES / GIB).toFixed(0)} GiB`})`,
      restarted.report === undefined ? `restart failed: ${restarted.failure ?? ""}` : "",
    ]
      .filter((part) => part !== "")
      .join("; ");
    return {
      size,
      run,
      started,
      mode: "load",
      load: loaded.report,
      diskBytes: bytes,
      restart: restarted.report ?? null,
      restartWallMillis: restarted.report === undefined ? null : restarted.wallMillis,
      loadAvg: { start, end: load1() },
      note,
      ...SETTINGS,
      ...(memoryLimit === undefined ? {} : { memoryLimit }),
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

async function measureMemory(size: number, workload: string, run: number): Promise<Measured | string> {
  const start = load1();
  const started = new Date().toISOString();
  const loaded = await child<LoadReport>(
    [
      "memory",
      "--workload",
      workload,
      "--commit-every",
      String(COMMIT_EVERY),
      "--hold-back-bytes",
      String(HOLD_BACK_BYTES),
    ],
    timeoutMs(),
  );
  if (loaded.report === undefined)
    return `in-memory load failed after ${(loaded.wallMillis / 1000).toFixed(0)} s (${loaded.failure ?? ""})`;
  return {
    size,
    run,
    started,
    mode: "memory",
    load: loaded.report,
    diskBytes: null,
    restart: null,
    restartWallMillis: null,
    loadAvg: { start, end: load1() },
    note: "",
    ...SETTINGS,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const thousands = (value: number): string => Math.round(value).toLocaleString("en-US");
const mib = (bytes: number): string => (bytes / MIB).toFixed(0);

/** The sample after the commit nearest to `fraction` of the run's facts. */
function sampleAt(samples: readonly MemorySample[], fraction: number): MemorySample | undefined {
  const last = samples.at(-1);
  if (last === undefined) return undefined;
  const want = last.facts * fraction;
  return samples.reduce((best, sample) =>
    Math.abs(sample.facts - want) < Math.abs(best.facts - want) ? sample : best,
  );
}

interface Row {
  readonly size: number;
  readonly mode: "load" | "memory";
  readonly runs: readonly Measured[];
}

function rowsOf(measured: readonly Measured[]): Row[] {
  const rows: Row[] = [];
  for (const run of measured) {
    const row = rows.find((candidate) => candidate.size === run.size && candidate.mode === run.mode);
    if (row === undefined) rows.push({ size: run.size, mode: run.mode, runs: [run] });
    else (row.runs as Measured[]).push(run);
  }
  return rows.sort((a, b) => a.size - b.size || a.mode.localeCompare(b.mode));
}

function section(
  measured: readonly Measured[],
  failures: readonly string[],
  started: string,
  loadAtStart: number,
  loadAtEnd: number,
): string {
  const rows = rowsOf(measured);
  const pick = (row: Row, read: (m: Measured) => number): number => median(row.runs.map(read));
  const label = (row: Row): string =>
    `${row.size.toLocaleString("en-US")} · ${row.mode === "load" ? "LMDB" : "memory"}`;
  const loads = (row: Row): string =>
    row.runs.map((m) => `${m.loadAvg.start.toFixed(2)} → ${m.loadAvg.end.toFixed(2)}`).join(", ");
  const machine = `nproc ${execFileSync("nproc", { encoding: "utf8" }).trim()} (${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, shared), ${(totalmem() / GIB).toFixed(0)} GiB RAM, Node ${process.version}`;
  const commands = [...new Set(measured.map((m) => m.command))];
  const { cacheMb, commitEvery } = measured[0] ?? SETTINGS;
  if (measured.some((m) => m.cacheMb !== cacheMb || m.commitEvery !== commitEvery))
    throw new Error("runs with different --cache-mb or --commit-every cannot share a table");
  const most = Math.max(...rows.map((row) => row.runs.length));
  const memoryAt = [...new Set(rows.filter((row) => row.mode === "memory").map((row) => row.size))];

  const throughput = [
    "| lines · state | runs | lines read | metric facts | wall s | read + parse s | engine s (ingest + flush + commit) | of which flush / commit s | engine facts/s (wall) | engine CPU-s | facts per engine CPU-s | commit ms median / p95 / max | writes per commit | LMDB dir MiB | load (1 min) start → end per run |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ...rows.map((row) => {
      const lmdb = row.mode === "load";
      return `| ${label(row)} | ${row.runs.length} | ${thousands(pick(row, (m) => m.load.lines))} | ${thousands(pick(row, (m) => m.load.facts))} | ${pick(row, (m) => m.load.wallSeconds).toFixed(1)} | ${pick(row, (m) => m.load.inputSeconds).toFixed(1)} | ${pick(row, (m) => m.load.engineSeconds).toFixed(1)} | ${pick(row, (m) => m.load.flushSeconds).toFixed(1)} / ${lmdb ? pick(row, (m) => m.load.commitSeconds).toFixed(1) : "—"} | ${thousands(pick(row, (m) => m.load.facts / m.load.engineSeconds))} | ${pick(row, (m) => m.load.engineCpuSeconds).toFixed(1)} | ${thousands(pick(row, (m) => m.load.facts / m.load.engineCpuSeconds))} | ${lmdb ? `${pick(row, (m) => m.load.commitMillis.median).toFixed(0)} / ${pick(row, (m) => m.load.commitMillis.p95).toFixed(0)} / ${pick(row, (m) => m.load.commitMillis.max).toFixed(0)}` : "—"} | ${lmdb ? thousands(pick(row, (m) => m.load.writesPerCommit)) : "—"} | ${lmdb ? mib(pick(row, (m) => m.diskBytes ?? 0)) : "—"} | ${loads(row)} |`;
    }),
  ];

  const anonAt = (m: Measured, fraction: number): number => sampleAt(m.load.afterCommits, fraction)?.rssAnonBytes ?? 0;
  const memory = [
    "| lines · state | peak RSS MiB (maxRSS: anon + file) | peak RssAnon MiB | peak RssFile MiB (mapped LMDB pages + node's binary) | peak V8 heapUsed / heapTotal MiB | RssAnon after the commits at ¼ / ½ / ¾ / all of the facts, MiB | cache budget / peak estimate (before a commit) / held at end MiB | cache misses | evictions | commits |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map((row) => {
      const lmdb = row.mode === "load";
      return `| ${label(row)} | ${mib(pick(row, (m) => m.load.peakRssBytes))} | ${mib(pick(row, (m) => m.load.peakRssAnonBytes))} | ${mib(pick(row, (m) => m.load.peakRssFileBytes))} | ${mib(pick(row, (m) => m.load.peakHeapUsedBytes))} / ${mib(pick(row, (m) => m.load.peakHeapTotalBytes))} | ${[0.25, 0.5, 0.75, 1].map((fraction) => mib(pick(row, (m) => anonAt(m, fraction)))).join(" / ")} | ${lmdb ? `${cacheMb} / ${mib(pick(row, (m) => m.load.peakCachedBytes))} / ${mib(pick(row, (m) => m.load.cache.cachedBytes))}` : "— (all state in memory)"} | ${lmdb ? thousands(pick(row, (m) => m.load.cache.misses)) : "—"} | ${lmdb ? thousands(pick(row, (m) => m.load.cache.evictions)) : "—"} | ${lmdb ? thousands(pick(row, (m) => m.load.cache.commits)) : "—"} |`;
    }),
  ];

  const disk = rows.filter((row) => row.mode === "load");
  const withRestart = (row: Row): Measured[] => row.runs.filter((m) => m.restart !== null);
  const restartPick = (row: Row, read: (restart: RestartReport, m: Measured) => number): number =>
    median(withRestart(row).map((m) => read(m.restart as RestartReport, m)));
  const restart = [
    `| lines | facts in the store (checkpoint) | open LMDB ms | build engine ms | read checkpoint ms | seek + ${LIVE_FACTS.toLocaleString("en-US")} facts + flush ms | **time to live ms** | restart process wall ms (node start + imports included) | cache misses while going live | restart peak RSS MiB |`,
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...disk
      .filter((row) => withRestart(row).length > 0)
      .map(
        (row) =>
          `| ${row.size.toLocaleString("en-US")} | ${thousands(restartPick(row, (r) => r.checkpoint.facts))} | ${restartPick(row, (r) => r.openMillis).toFixed(1)} | ${restartPick(row, (r) => r.engineMillis).toFixed(0)} | ${restartPick(row, (r) => r.checkpointMillis).toFixed(1)} | ${restartPick(row, (r) => r.catchUpMillis).toFixed(0)} | **${restartPick(row, (r) => r.liveMillis).toFixed(0)}** | ${restartPick(row, (_r, m) => m.restartWallMillis ?? 0).toFixed(0)} | ${thousands(restartPick(row, (r) => r.misses))} | ${mib(restartPick(row, (r) => r.peakRssBytes))} |`,
      ),
  ];

  const notes = measured
    .filter((m) => m.note !== "")
    .map((m) => `- ${m.size.toLocaleString("en-US")} lines, run ${m.run}: ${m.note}.`);
  const peakTotal = disk.map((row) => pick(row, (m) => m.load.peakRssBytes));
  const peakAnon = disk.map((row) => pick(row, (m) => m.load.peakRssAnonBytes));
  const verdict = (values: readonly number[]): string =>
    values.length > 0 && values.every((value) => value < TARGETS.peakRssBytes) ? "met" : "**missed**";
  const liveRow = disk.find((row) => row.size === TARGETS.liveAtLines && withRestart(row).length > 0);
  const live = liveRow === undefined ? undefined : restartPick(liveRow, (r) => r.liveMillis);
  const sizesText = disk.map((row) => row.size.toLocaleString("en-US")).join(" / ");
  const limited = measured.filter((m) => m.memoryLimit !== undefined);
  const limitLines = limited.map((m) => {
    const usage = m.memoryLimit as MemoryCgroupUsage;
    return `- ${m.size.toLocaleString("en-US")} lines, run ${String(m.run)}: completed under a hard limit of ${mib(usage.limitBytes)} MiB (a memory cgroup of its own, page cache included, as a container's): cgroup peak ${mib(usage.peakBytes)} MiB, OOM kills ${String(usage.oomKills)}, peak RSS ${mib(m.load.peakRssBytes)} MiB of which file ${mib(m.load.peakRssFileBytes)}`;
  });
  const killedUnderLimit = failures.filter((failure) => failure.includes("killed by the kernel for memory"));

  return [
    HEADING,
    "",
    `Measured ${started.slice(0, 10)} (UTC ${started.slice(11, 16)} start) on ${machine}; load average (1 min) ${loadAtStart.toFixed(2)} at the start of the first run, ${loadAtEnd.toFixed(2)} at the end of the last, per run in the first table. ${most > 1 ? `Medians of the runs of each row (up to ${most}).` : "One run per row."}`,
    "",
    `Command${commands.length > 1 ? "s (one sitting each; the section rendered from their runs logs with `--from-runs`)" : ""}: ${commands.map((command) => `\`nice -n 10 ${command}\``).join(", ")}.`,
    "",
    `The real engine (src/metrics/metric-engine.ts) over \`StateStore(openLmdbBackend(dir), ${cacheMb} MiB)\`, in a fresh process per measurement (bench/engine-state-run.ts). The workload (\`agentops generate --facts N --seed ${DEFAULT_SEED}\`, ≈ 79% metric facts) is streamed line by line, never held: memory is the engine's. Every ${commitEvery.toLocaleString("en-US")} metric facts, and at the end of a batch of 1,000 that left the record cache over its budget (as the processor's checkpoints: TaskCheckpoints): \`flush()\`, then \`state.commit([checkpoint])\` (one LMDB transaction: the dirty entries and the checkpoint, its line and byte offset; then the cache is evicted to its budget). The load stops ${(HOLD_BACK_BYTES / MIB).toFixed(0)} MiB before the end of the file so the restart has new input. "read + parse" and "engine" are the two spans of the loop, timed in batches of 1,000 facts (wall: performance.now; CPU: process.cpuUsage, the whole process, GC and LMDB included). Memory: peak RSS is the kernel's maxRSS; RssAnon (heap and native allocations) and RssFile (LMDB's memory-mapped pages, reclaimable by the kernel, plus about 50 MiB of node's own mapped binary, as the memory rows show) are sampled from /proc/self/status every 500 ms and around every commit. "memory" rows: the same loop with the state in memory (\`new StateStore(undefined)\`, the replay default), only at ${memoryAt.map((size) => size.toLocaleString("en-US")).join(", ") || "no size"}.`,
    "",
    ...throughput,
    "",
    ...memory,
    "",
    `Restart with local state: a new process opens the store, builds the engine over it (catalog included), reads the checkpoint, seeks the workload file to its byte offset (as a consumer seeks to its committed offset) and ingests the next ${LIVE_FACTS.toLocaleString("en-US")} metric facts, then flushes. The record cache starts empty, so every read goes to LMDB; the kernel's page cache is warm (the store was just written), as after a process restart, not after a reboot.`,
    "",
    ...restart,
    "",
    ...(notes.length > 0 ? ["Notes:", ...notes, ""] : []),
    ...(failures.length > 0 ? ["Not measured:", ...failures.map((failure) => `- ${failure}`), ""] : []),
    "Targets (issue #13):",
    `- engine peak RSS < 512 MiB at ${sizesText} lines, counting the mapped store (maxRSS): ${peakTotal.map(mib).join(" / ")} MiB → ${verdict(peakTotal)}`,
    `- the same counting anonymous RSS only (the engine's own memory): ${peakAnon.map(mib).join(" / ")} MiB → ${verdict(peakAnon)}`,
    ...(limited.length + killedUnderLimit.length > 0
      ? [
          `- the engine runs within a hard ${String(MEMORY_LIMIT_MB ?? mib(limited[0]?.memoryLimit?.limitBytes ?? 0))} MiB memory limit that counts its mapped store and page cache (a container's limit): ${killedUnderLimit.length === 0 ? "completed at every size → met" : "**missed** (OOM-killed)"}`,
          ...limitLines.map((line) => `  ${line}`),
        ]
      : []),
    `- live in < 5 s at ${TARGETS.liveAtLines.toLocaleString("en-US")} lines: ${live === undefined ? "not measured" : `${(live / 1000).toFixed(2)} s → ${live < TARGETS.liveMillis ? "met" : "**missed**"}`}`,
    "",
  ].join("\n");
}

function publish(
  measured: readonly Measured[],
  failures: readonly string[],
  started: string,
  loadAtStart: number,
  loadAtEnd: number,
): void {
  const text = section(measured, failures, started, loadAtStart, loadAtEnd);
  publishResultsSection(HEADING, text, writeResults, log);
}

/** Disk a size needs: its workload if not generated yet, and its store, estimated from the largest size measured. */
function diskNeeded(size: number, measured: readonly Measured[]): { workload: number; store: number } {
  const workload = `${BENCH_OUT}facts-${size}-seed${DEFAULT_SEED}.ndjson`;
  const largest = measured.filter((m) => m.diskBytes !== null).sort((a, b) => b.load.lines - a.load.lines)[0];
  const perLine = largest === undefined ? DEFAULT_STORE_BYTES_PER_LINE : (largest.diskBytes ?? 0) / largest.load.lines;
  return { workload: existsSync(workload) ? 0 : size * WORKLOAD_BYTES_PER_LINE, store: size * perLine * 1.15 };
}

async function main(): Promise<void> {
  if (FROM_RUNS !== undefined) {
    const logged = FROM_RUNS.flatMap((file) =>
      readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Measured),
    ).sort((a, b) => a.started.localeCompare(b.started));
    const first = logged[0];
    const last = logged.at(-1);
    publish(logged, [], first?.started ?? new Date().toISOString(), first?.loadAvg.start ?? 0, last?.loadAvg.end ?? 0);
    return;
  }
  mkdirSync(STORES_DIR, { recursive: true });
  const started = new Date().toISOString();
  const loadAtStart = load1();
  log(`load ${loadAtStart.toFixed(2)}, free disk ${(freeBytes() / GIB).toFixed(1)} GiB, runs log ${RUNS_LOG}`);
  const measured: Measured[] = [];
  const failures: string[] = [];
  const record = (size: number, result: Measured | string): void => {
    if (typeof result === "string") {
      failures.push(`${size.toLocaleString("en-US")} lines: ${result}`);
      log(`  ${result}`);
      return;
    }
    measured.push(result);
    appendFileSync(RUNS_LOG, `${JSON.stringify(result)}\n`);
    const { load, restart } = result;
    log(
      `  ${thousands(load.facts)} facts in ${load.wallSeconds.toFixed(0)} s: engine ${thousands(load.facts / load.engineSeconds)} facts/s, peak RSS ${mib(load.peakRssBytes)} MiB (anon ${mib(load.peakRssAnonBytes)}, file ${mib(load.peakRssFileBytes)}), heap ${mib(load.peakHeapUsedBytes)} MiB${result.diskBytes === null ? "" : `, store ${mib(result.diskBytes)} MiB`}${restart === null ? "" : `, live in ${restart.liveMillis.toFixed(0)} ms`}${result.note === "" ? "" : ` (${result.note})`}`,
    );
  };
  try {
    for (const size of SIZES) {
      const { workload: workloadBytes, store: storeBytes } = diskNeeded(size, measured);
      // Without room for the workload and a tenth of the store there is nothing worth measuring; with
      // less than the whole store, the load runs until the free-disk floor and reports how far it got.
      if (workloadBytes + storeBytes / 10 + MIN_FREE_BYTES > freeBytes()) {
        failures.push(
          `${size.toLocaleString("en-US")} lines: skipped, needs about ${((workloadBytes + storeBytes) / GIB).toFixed(0)} GiB of disk (workload + store, estimated from the largest store measured) and ${(freeBytes() / GIB).toFixed(0)} GiB are free`,
        );
        log(failures.at(-1) ?? "");
        continue;
      }
      if (workloadBytes + storeBytes + MIN_FREE_BYTES > freeBytes())
        log(
          `the store may not fit (about ${(storeBytes / GIB).toFixed(0)} GiB estimated, ${(freeBytes() / GIB).toFixed(0)} GiB free): the load stops when free disk falls below ${(MIN_FREE_BYTES / GIB).toFixed(0)} GiB`,
        );
      const workload = await ensureWorkload(size, log);
      log(
        `workload ${(statSync(workload).size / MIB).toFixed(0)} MiB, free disk ${(freeBytes() / GIB).toFixed(1)} GiB`,
      );
      for (let run = 1; run <= RUNS; run += 1) {
        log(`${size.toLocaleString("en-US")} lines · LMDB · run ${run}/${RUNS} (load ${load1().toFixed(2)})`);
        record(size, await measureDisk(size, workload, run));
        if (MEMORY_AT.has(size)) {
          log(`${size.toLocaleString("en-US")} lines · memory · run ${run}/${RUNS} (load ${load1().toFixed(2)})`);
          record(size, await measureMemory(size, workload, run));
        }
      }
    }
  } finally {
    rmSync(STORES_DIR, { recursive: true, force: true });
  }
  if (measured.length === 0) throw new Error(`nothing measured: ${failures.join("; ")}`);
  publish(measured, failures, started, loadAtStart, load1());
}

await main();
