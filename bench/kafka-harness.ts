/**
 * What the Kafka benchmarks share (bench/kafka.bench.ts, bench/peer.bench.ts): the generated
 * workload, `agentops` children run as users run them, produce timing, topic counts, /metrics
 * parsing and peak RSS.
 */
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Kafka } from "kafkajs";
import { topicRecordCount } from "../src/kafka/read-topic.ts";
import { readProcStatus } from "../src/stream/runtime/proc-status.ts";
import type { TopicNames } from "../src/stream/topic-names.ts";
import { DEFAULT_SEED } from "../src/workload/workload.ts";
import { CLI_ENV, CLI_NODE_FLAGS } from "./cli-launch.ts";

export const ROOT = fileURLToPath(new URL("../", import.meta.url));
export const OUT = `${ROOT}bench/out/`;
export const NODE = `${ROOT}node_modules/.bin/node`;

export { CLI_ENV, CLI_NODE_FLAGS };

export type Log = (message: string) => void;

export const benchLog =
  (name: string): Log =>
  (message) =>
    process.stderr.write(`[${name} ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

export const rate = (count: number, seconds: number): string =>
  `${Math.round(count / seconds).toLocaleString("en-US")}/s`;
export const mib = (bytes: number): string => `${(bytes / 1_048_576).toFixed(0)} MiB`;
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
export const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** `agentops <args>` with the CLI's node flags; stdio "ignore", "inherit" or a file descriptor for stdout and stderr. */
export function agentops(
  args: readonly string[],
  output: "inherit" | "ignore" | number = "ignore",
  extraNodeFlags: readonly string[] = [],
): ChildProcess {
  const stdio: StdioOptions = ["ignore", output, output];
  return spawn(NODE, [...CLI_NODE_FLAGS, ...extraNodeFlags, `${ROOT}bin/agentops`, ...args], {
    cwd: ROOT,
    env: CLI_ENV,
    stdio,
  });
}

export function exited(child: ChildProcess): Promise<number> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code ?? 1)));
}

/** SIGTERM, then SIGKILL after a minute; resolves with the exit code. */
export async function stop(child: ChildProcess): Promise<number> {
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const code = await exited(child);
  clearTimeout(timer);
  return code;
}

/** The generated workload of N facts (seed 42), reused from bench/out/ when present. */
export async function ensureWorkload(facts: number, log: Log): Promise<string> {
  const path = `${OUT}facts-${facts}-seed${DEFAULT_SEED}.ndjson`;
  if (existsSync(path)) {
    log(`reusing ${path}`);
    return path;
  }
  log(`generating ${facts.toLocaleString("en-US")} lines → ${path}`);
  const code = await exited(
    agentops(["generate", "--facts", String(facts), "--seed", String(DEFAULT_SEED), "--out", path], "inherit"),
  );
  if (code !== 0) throw new Error(`agentops generate exited ${code}`);
  return path;
}

export interface ProduceRun {
  readonly seconds: number;
  readonly facts: number;
  readonly agentEvents: number;
}

/** `agentops produce` of the workload to the prefix's facts and agent-events topics, timed. */
export async function produce(
  kafka: Kafka,
  topics: TopicNames,
  prefix: string,
  input: string,
  log: Log,
): Promise<ProduceRun> {
  log(`produce: agentops produce --input ${input} --topic-prefix ${prefix} --batch 2000`);
  const started = performance.now();
  const child = agentops(["produce", "--input", input, "--topic-prefix", prefix, "--batch", "2000"]);
  const done = exited(child);
  let finished = false;
  void done.then(() => (finished = true));
  while (!finished) {
    await Promise.race([done, sleep(10_000)]);
    if (!finished) {
      const count = (await topicRecordCount(kafka, topics.facts)) + (await topicRecordCount(kafka, topics.agentEvents));
      log(
        `produce: ${count.toLocaleString("en-US")} records on the topics after ${((performance.now() - started) / 1000).toFixed(0)} s (${rate(count, (performance.now() - started) / 1000)})`,
      );
    }
  }
  const code = await done;
  if (code !== 0) throw new Error(`agentops produce exited ${code}`);
  const seconds = (performance.now() - started) / 1000;
  const facts = await topicRecordCount(kafka, topics.facts);
  const agentEvents = await topicRecordCount(kafka, topics.agentEvents);
  log(
    `produce: ${(facts + agentEvents).toLocaleString("en-US")} records (${facts.toLocaleString("en-US")} facts, ${agentEvents.toLocaleString("en-US")} agent events) in ${seconds.toFixed(1)} s = ${rate(facts + agentEvents, seconds)}`,
  );
  return { seconds, facts, agentEvents };
}

/** The values of one Prometheus metric in /metrics text whose labels include these. */
export function metricValues(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number[] {
  const values: number[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))) continue;
    values.push(Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return values;
}

/**
 * Peak (VmHWM) or current (VmRSS) resident set of a live process, or its anonymous part (RssAnon:
 * RSS less mapped files such as LMDB's data files, which are page cache), in bytes; 0 once it is gone.
 */
export function procStatus(pid: number, field: "VmHWM" | "VmRSS" | "RssAnon"): number {
  return readProcStatus(pid)?.(field) ?? 0;
}

/**
 * The local broker's process (ops/services.sh writes its pid under AGENTOPS_SERVICES_DIR, .services/
 * by default), to measure its CPU; undefined with Docker or your own cluster.
 */
export function brokerPid(): number | undefined {
  const path = `${process.env.AGENTOPS_SERVICES_DIR ?? `${ROOT}.services`}/kafka/kafka.pid`;
  return existsSync(path) ? Number(readFileSync(path, "utf8").trim()) : undefined;
}

/** utime + stime of a live process, in seconds (undefined once it is gone). */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

export async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await condition()) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** The /metrics port an `agentops run` child logs at start-up (it runs with --metrics-port 0). */
export async function metricsPortOf(child: ChildProcess, logPath: string): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`processor exited ${child.exitCode}; see ${logPath}`);
    const match = /"metricsPort":(\d+)/.exec(readFileSync(logPath, "utf8"));
    if (match !== null) return Number(match[1]);
    await sleep(100);
  }
}

/** Deletes every topic of a bench's prefix; a failure is logged, not thrown (the figures are kept). */
export async function deletePrefixedTopics(kafka: Kafka, prefix: string, log: Log): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  const names = (await admin.listTopics()).filter((name) => name.startsWith(`${prefix}.`));
  await admin
    .deleteTopics({ topics: names })
    .catch((error: unknown) => log(`could not delete the bench topics: ${String(error)}`));
  await admin.disconnect();
  return names.length;
}
