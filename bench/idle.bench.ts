/**
 * What an instance costs while no record arrives (`npm run bench:idle`, issue #33: the `p` of the
 * stages' cost model in docs/architecture.md, and what a deployment pays between agent runs).
 * For each engine (`--engine single`, `--engine stages`), one `agentops run` with every role on
 * fresh, empty topics, R times alternating:
 *   - the CPU seconds from spawn until /healthz answers 200 (start-up: modules, topics, groups);
 *   - then, for S seconds of idling, CPU seconds per minute and the main thread's voluntary context
 *     switches per second (how often its event loop wakes).
 * Needs the broker and registry (ops/services.sh, or KAFKA_BROKERS and SCHEMA_REGISTRY_URL).
 * Writes the section "Idle cost per instance" of bench/RESULTS.md.
 *
 *   node_modules/.bin/node bench/idle.bench.ts [--seconds 60] [--runs 2] [--no-write]
 */
import { execFileSync } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { createKafka } from "../src/kafka/client.ts";
import { resolveBrokers, resolveSchemaRegistryUrl } from "../src/kafka/connection-addresses.ts";
import {
  agentops,
  benchLog,
  cpuSeconds,
  deletePrefixedTopics,
  median,
  metricsPortOf,
  OUT,
  ROOT,
  sleep,
  stop,
  waitUntil,
} from "./kafka-harness.ts";
import { publishResultsSection } from "./results-section.ts";

const HEADING = "## Idle cost per instance";
const ENGINES = ["single", "stages"] as const;
type Engine = (typeof ENGINES)[number];

const argv = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  if (!argv.includes(name)) return fallback;
  const value = Number(argv[argv.indexOf(name) + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a whole number of at least 1`);
  return value;
};
const SECONDS = option("--seconds", 60);
const RUNS = option("--runs", 2);
const writeResults = !argv.includes("--no-write");
const log = benchLog("bench:idle");
const BROKERS = resolveBrokers(undefined).value;
const REGISTRY_URL = resolveSchemaRegistryUrl(undefined).value;

interface IdleRun {
  readonly engine: Engine;
  readonly startCpuSeconds: number;
  readonly healthySeconds: number;
  readonly idleCpuPerMinute: number;
  readonly wakeupsPerSecond: number;
}

/** The main thread's voluntary context switches (each a wait that ended: a wake of its event loop). */
function voluntarySwitches(pid: number): number {
  const match = /voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? Number.NaN);
}

async function idleRun(engine: Engine, index: number): Promise<IdleRun> {
  const prefix = `bench-idle-${String(process.pid)}-${engine}-${String(index)}`;
  const logPath = `${OUT}idle-bench-${engine}.log`;
  const stateDir = `${OUT}idle-bench-state-${engine}`;
  rmSync(stateDir, { recursive: true, force: true });
  const out = openSync(logPath, "w");
  const started = performance.now();
  const child = agentops(
    [
      "run",
      "--engine",
      engine,
      "--topic-prefix",
      prefix,
      "--group",
      prefix,
      "--metrics-port",
      "0",
      "--state-dir",
      stateDir,
      "--brokers",
      BROKERS.join(","),
      "--schema-registry",
      REGISTRY_URL,
    ],
    out,
  );
  closeSync(out);
  const pid = child.pid ?? 0;
  try {
    const port = await metricsPortOf(child, logPath);
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${String(port)}/healthz`)).status === 200, 180_000);
    const healthySeconds = (performance.now() - started) / 1000;
    const startCpuSeconds = cpuSeconds(pid) ?? Number.NaN;
    // Groups settle (joins, first fetches) a few seconds after /healthz; the idle spell starts after.
    await sleep(5_000);
    const cpuBefore = cpuSeconds(pid) ?? Number.NaN;
    const switchesBefore = voluntarySwitches(pid);
    await sleep(SECONDS * 1000);
    const idleCpu = (cpuSeconds(pid) ?? Number.NaN) - cpuBefore;
    const switches = voluntarySwitches(pid) - switchesBefore;
    return {
      engine,
      startCpuSeconds,
      healthySeconds,
      idleCpuPerMinute: (idleCpu * 60) / SECONDS,
      wakeupsPerSecond: switches / SECONDS,
    };
  } finally {
    const code = await stop(child);
    if (code !== 0) log(`${engine}: agentops run exited ${String(code)}; see ${logPath}`);
    rmSync(stateDir, { recursive: true, force: true });
    await deletePrefixedTopics(kafka, prefix, log);
  }
}

const kafka = createKafka({ brokers: BROKERS, clientId: "bench-idle" });
const runs: IdleRun[] = [];
for (let index = 0; index < RUNS; index++) {
  for (const engine of ENGINES) {
    const run = await idleRun(engine, index);
    runs.push(run);
    log(
      `${engine} run ${String(index + 1)}: healthy after ${run.healthySeconds.toFixed(1)} s (CPU ${run.startCpuSeconds.toFixed(2)} s); idle ${run.idleCpuPerMinute.toFixed(2)} CPU s per minute, ${run.wakeupsPerSecond.toFixed(0)} wakeups/s`,
    );
  }
}

const range = (values: readonly number[], digits: number): string => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${median(sorted).toFixed(digits)} (${(sorted[0] ?? Number.NaN).toFixed(digits)}–${(sorted.at(-1) ?? Number.NaN).toFixed(digits)})`;
};
const rows = ENGINES.map((engine) => {
  const of = runs.filter((run) => run.engine === engine);
  const perMinute = of.map((run) => run.idleCpuPerMinute);
  return `| ${engine} | ${range(
    of.map((run) => run.startCpuSeconds),
    2,
  )} | ${range(perMinute, 2)} | ${(median(perMinute) / 60).toFixed(3)} | ${range(
    of.map((run) => run.wakeupsPerSecond),
    0,
  )} |`;
});
const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
publishResultsSection(
  HEADING,
  [
    HEADING,
    "",
    `- Date: ${new Date().toISOString()} (commit ${commit}). Machine: ${String(cpus().length)} cores (${cpus()[0]?.model.trim() ?? "?"}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB, Node ${process.version}; load average ${loadavg()
      .map((value) => value.toFixed(1))
      .join(" / ")} at the end.`,
    `- Command: \`npm run bench:idle -- --seconds ${String(SECONDS)} --runs ${String(RUNS)}\`. One \`agentops run\` with every role on fresh, empty topics per run, the engines alternating; the idle spell starts 5 s after /healthz answers 200.`,
    "- Each cell: the median (range) of the runs. Wakeups: the main thread's voluntary context switches per second.",
    "",
    "| engine | start-up to healthy, CPU s | idle, CPU s per minute | idle, share of a core | idle wakeups/s |",
    "|---|---:|---:|---:|---:|",
    ...rows,
  ].join("\n"),
  writeResults,
  log,
);
