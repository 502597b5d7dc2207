/**
 * What an instance costs while no record, or only a trickle, arrives (`npm run bench:idle`, issue
 * #33: the `p` of the stages' cost model in docs/architecture.md, and what a deployment pays
 * between and during agent runs, whose events come a few a second, not as a backlog).
 * For each engine (`--engine single`, `--engine stages`), one `agentops run` with every role on
 * fresh, empty topics, R times alternating:
 *   - the CPU seconds from spawn until /healthz answers 200 (start-up: modules, topics, groups);
 *   - then, for S seconds of idling, CPU seconds per minute and the main thread's voluntary context
 *     switches per second (how often its event loop wakes);
 *   - then, for S seconds, the generated workload's first records sent one at a time at N a second
 *     (`agentops produce`'s publisher: Avro through the registry), and the instance's CPU per record.
 * Needs the broker and registry (ops/services.sh, or KAFKA_BROKERS and SCHEMA_REGISTRY_URL).
 * Writes the section "Idle cost per instance" of bench/RESULTS.md.
 *
 *   node_modules/.bin/node bench/idle.bench.ts [--seconds 60] [--runs 2] [--rate 20] [--no-write]
 */
import { execFileSync } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { parseFactJson } from "../src/contract/parse-fact.ts";
import type { Fact } from "../src/contract/facts.ts";
import { createFactPublisher } from "../src/ingest/fact-publisher.ts";
import { createKafka, orderedProducer } from "../src/kafka/client.ts";
import { resolveBrokers, resolveSchemaRegistryUrl } from "../src/kafka/connection-addresses.ts";
import { createSchemaRegistry } from "../src/kafka/registry.ts";
import { AvroTopicSerde } from "../src/kafka/serde/avro-serde.ts";
import { topicNames } from "../src/stream/topic-names.ts";
import {
  agentops,
  benchLog,
  cpuSeconds,
  deletePrefixedTopics,
  ensureWorkload,
  median,
  metricsPortOf,
  OUT,
  ROOT,
  sleep,
  stop,
  waitUntil,
} from "./kafka-harness.ts";
import { wholeNumberOption } from "./bench-args.ts";
import { publishResultsSection } from "./results-section.ts";
import { linesFrom } from "./workload-lines.ts";

const HEADING = "## Idle cost per instance";
const ENGINES = ["single", "stages"] as const;
type Engine = (typeof ENGINES)[number];

const argv = process.argv.slice(2);
const option = (name: string, fallback: number): number => wholeNumberOption(argv, name, fallback);
const SECONDS = option("--seconds", 60);
const RUNS = option("--runs", 2);
const RATE = option("--rate", 20);
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
  /** CPU microseconds per record sent while records trickle in at RATE a second. */
  readonly trickleMicrosPerRecord: number;
  readonly trickleCoreShare: number;
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
    // BENCH_NODE_FLAGS adds node flags to the instance (e.g. --cpu-prof --cpu-prof-dir=<dir>).
    (process.env.BENCH_NODE_FLAGS ?? "").split(/\s+/).filter((word) => word !== ""),
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
    const trickleStart = cpuSeconds(pid) ?? Number.NaN;
    const trickleStarted = performance.now();
    const sent = await trickle(prefix);
    const trickleCpu = (cpuSeconds(pid) ?? Number.NaN) - trickleStart;
    return {
      engine,
      startCpuSeconds,
      healthySeconds,
      idleCpuPerMinute: (idleCpu * 60) / SECONDS,
      wakeupsPerSecond: switches / SECONDS,
      trickleMicrosPerRecord: (trickleCpu * 1e6) / sent,
      trickleCoreShare: trickleCpu / ((performance.now() - trickleStarted) / 1000),
    };
  } finally {
    const code = await stop(child);
    if (code !== 0) log(`${engine}: agentops run exited ${String(code)}; see ${logPath}`);
    rmSync(stateDir, { recursive: true, force: true });
    await deletePrefixedTopics(kafka, prefix, log);
  }
}

/** Sends the workload's first records one at a time, RATE a second for SECONDS; returns how many were sent. */
async function trickle(prefix: string): Promise<number> {
  const producer = orderedProducer(kafka);
  await producer.connect();
  try {
    const publisher = createFactPublisher(producer, serde, topicNames(prefix), 1);
    const started = performance.now();
    let sent = 0;
    for (const fact of trickleFacts) {
      const due = started + (sent * 1000) / RATE;
      if (due - started >= SECONDS * 1000) break;
      await sleep(Math.max(0, due - performance.now()));
      await publisher.add(fact);
      sent += 1;
    }
    // The last records through the pipeline before the CPU is read.
    await sleep(2_000);
    return sent;
  } finally {
    await producer.disconnect();
  }
}

const kafka = createKafka({ brokers: BROKERS, clientId: "bench-idle" });
const serde = new AvroTopicSerde(createSchemaRegistry(REGISTRY_URL));
const trickleFacts: Fact[] = [];
for (const { text } of linesFrom(await ensureWorkload(200_000, log), 0)) {
  if (trickleFacts.length >= RATE * SECONDS) break;
  const parsed = parseFactJson(text);
  if (parsed.ok) trickleFacts.push(parsed.fact);
}
const runs: IdleRun[] = [];
for (let index = 0; index < RUNS; index++) {
  for (const engine of ENGINES) {
    const run = await idleRun(engine, index);
    runs.push(run);
    log(
      `${engine} run ${String(index + 1)}: healthy after ${run.healthySeconds.toFixed(1)} s (CPU ${run.startCpuSeconds.toFixed(2)} s); idle ${run.idleCpuPerMinute.toFixed(2)} CPU s per minute, ${run.wakeupsPerSecond.toFixed(0)} wakeups/s; at ${String(RATE)} records/s ${run.trickleMicrosPerRecord.toFixed(0)} µs of CPU per record (${run.trickleCoreShare.toFixed(3)} of a core)`,
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
  )} | ${range(
    of.map((run) => run.trickleMicrosPerRecord),
    0,
  )} | ${range(
    of.map((run) => run.trickleCoreShare),
    3,
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
    `- Command: \`npm run bench:idle -- --seconds ${String(SECONDS)} --runs ${String(RUNS)} --rate ${String(RATE)}\`. One \`agentops run\` with every role on fresh, empty topics per run, the engines alternating; the idle spell starts 5 s after /healthz answers 200; then the workload's first ${String(RATE * SECONDS)} records (metric facts and agent events as generated) are sent one at a time, ${String(RATE)} a second, and the instance's CPU is read 2 s after the last.`,
    "- Each cell: the median (range) of the runs. Wakeups: the main thread's voluntary context switches per second.",
    "",
    `| engine | start-up to healthy, CPU s | idle, CPU s per minute | idle, share of a core | idle wakeups/s | at ${String(RATE)} records/s, CPU µs per record | at ${String(RATE)} records/s, share of a core |`,
    "|---|---:|---:|---:|---:|---:|---:|",
    ...rows,
  ].join("\n"),
  writeResults,
  log,
);
