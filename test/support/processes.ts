import { execFile, spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Kafka, Producer } from "kafkajs";
import { expect } from "vitest";
import { canonicalJson } from "../../src/contract/canonical-json.ts";
import { parseFactJson } from "../../src/contract/parse-fact.ts";
import { AvroTopicSerde } from "../../src/kafka/serde/avro-serde.ts";
import { createFactPublisher } from "../../src/ingest/fact-publisher.ts";
import type { MetricResult } from "../../src/contract/result-record.ts";
import { resultKey } from "../../src/metrics/scope.ts";
import type { DeadLetterRecord } from "../../src/contract/dead-letter.ts";
import { readTopicToEnd } from "../../src/kafka/read-topic.ts";
import { compareResults, readLatestResults, type ResultComparison } from "../../src/stream/audit/topic-results.ts";
import type { TopicNames } from "../../src/stream/topic-names.ts";
import { freePort } from "./free-port.ts";
import { serviceEndpoints, testRegistry } from "./kafka.ts";

/**
 * Real `agentops` processes for the stream tests: spawn `agentops run` instances (stdout and
 * stderr to files in a temp dir), wait for their /healthz, read their /metrics, kill them; run
 * the other CLI commands to completion; and the stream-level helpers built on those (the
 * embedded replay as the expected answer, polling the results topic until it is quiescent).
 */

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const NODE = join(REPO_ROOT, "node_modules/.bin/node");
const AGENTOPS = join(REPO_ROOT, "bin/agentops");
/** For every agentops child, as bin/agentops sets them. */
export const NODE_FLAGS = ["--disable-warning=ExperimentalWarning"];

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A fresh directory for one test's files and process logs. */
export function testDir(prefix = "agentops-stream-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Polls `probe` until it returns something other than undefined, or fails after `timeoutMs`
 * naming what it waited for. Never a fixed sleep standing in for an assertion.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const intervalMs = options.intervalMs ?? 250;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError === undefined ? "" : ` (last error: ${String(lastError)})`}`,
      );
    await sleep(intervalMs);
  }
}

/** An `agentops otlp` receiver started by startOtlpReceiver. */
export interface OtlpReceiver {
  readonly url: string;
  readonly child: ChildProcess;
  readonly stdout: () => string;
}

/**
 * Starts `agentops otlp` on a free port, writing to the topics under `prefix` on the shared
 * broker; resolves once it says it is listening. The caller stops the child.
 */
export async function startOtlpReceiver(prefix: string, extraArgs: readonly string[] = []): Promise<OtlpReceiver> {
  const port = await freePort();
  const { brokers, registryUrl } = serviceEndpoints();
  const child = spawn(
    NODE,
    [
      ...NODE_FLAGS,
      join(REPO_ROOT, "bin/agentops"),
      "otlp",
      "--port",
      String(port),
      "--topic-prefix",
      prefix,
      "--brokers",
      brokers.join(","),
      "--schema-registry",
      registryUrl,
      ...extraArgs,
    ],
    { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  let stdout = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  await waitFor("the OTLP receiver", () => (/otlp receiver listening/.test(stdout) ? true : undefined), {
    timeoutMs: 120_000,
  });
  return { url: `http://127.0.0.1:${String(port)}`, child, stdout: () => stdout };
}

// ---------------------------------------------------------------------------------------------
// Processor instances

export interface ProcessorInstance {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly stdoutPath: string;
  readonly stderrPath: string;
  /** Settles with the exit code (or signal name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** Known once the instance logged "processor instance running". */
  metricsPort: number | undefined;
}

export interface StartOptions {
  readonly topicPrefix: string;
  readonly name: string;
  readonly dir: string;
  readonly roles?: readonly ("ingest" | "engine" | "run-monitor")[];
  readonly extraArgs?: readonly string[];
  /** Node flags before the script (e.g. `--import` of a test preload). */
  readonly nodeFlags?: readonly string[];
  /** Extra environment for the child. */
  readonly env?: Readonly<Record<string, string>>;
}

const running = new Set<ProcessorInstance>();

/** Spawns `agentops run` without waiting for it: see `startProcessor` for the usual case. */
export function spawnProcessor(options: StartOptions): ProcessorInstance {
  const { brokers, registryUrl } = serviceEndpoints();
  const stamp = `${options.name}-${Date.now().toString(36)}`;
  const stdoutPath = join(options.dir, `${stamp}.out.log`);
  const stderrPath = join(options.dir, `${stamp}.err.log`);
  const out = openSync(stdoutPath, "a");
  const err = openSync(stderrPath, "a");
  const args = [
    ...NODE_FLAGS,
    ...(options.nodeFlags ?? []),
    AGENTOPS,
    "run",
    "--topic-prefix",
    options.topicPrefix,
    "--instance-id",
    options.name,
    "--state-dir",
    join(options.dir, "state", options.name),
    "--metrics-port",
    "0",
    "--brokers",
    brokers.join(","),
    "--schema-registry",
    registryUrl,
    ...(options.roles === undefined ? [] : ["--roles", options.roles.join(",")]),
    ...(options.extraArgs ?? []),
  ];
  const child = spawn(NODE, args, {
    cwd: REPO_ROOT,
    stdio: ["ignore", out, err],
    env: { ...process.env, ...options.env },
  });
  closeSync(out);
  closeSync(err);
  if (child.pid === undefined) throw new Error(`could not spawn agentops run for ${options.name}`);
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
  );
  const instance: ProcessorInstance = {
    name: options.name,
    child,
    pid: child.pid,
    stdoutPath,
    stderrPath,
    exited,
    metricsPort: undefined,
  };
  running.add(instance);
  void exited.then(() => running.delete(instance));
  return instance;
}

/** Spawns `agentops run` and waits until it serves /healthz with 200 (all roles started). */
export async function startProcessor(options: StartOptions, timeoutMs = 90_000): Promise<ProcessorInstance> {
  const instance = spawnProcessor(options);
  await waitForHealthy(instance, timeoutMs);
  return instance;
}

export function isAlive(instance: ProcessorInstance): boolean {
  return instance.child.exitCode === null && instance.child.signalCode === null;
}

/** The JSON log lines (pino) an instance wrote so far. */
export function logLines(instance: ProcessorInstance): Array<Record<string, unknown>> {
  if (!existsSync(instance.stdoutPath)) return [];
  const lines: Array<Record<string, unknown>> = [];
  for (const line of readFileSync(instance.stdoutPath, "utf8").split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut by a kill -9
    }
  }
  return lines;
}

export function countLogs(instance: ProcessorInstance, message: string): number {
  return logLines(instance).filter((line) => line["msg"] === message).length;
}

/** The last lines of an instance's logs, for failure messages. */
export function logTail(instance: ProcessorInstance, lines = 15): string {
  const tail = (path: string): string =>
    existsSync(path) ? readFileSync(path, "utf8").split("\n").slice(-lines).join("\n") : "";
  return `--- ${instance.name} stdout (${instance.stdoutPath})\n${tail(instance.stdoutPath)}\n--- ${instance.name} stderr\n${tail(instance.stderrPath)}`;
}

/**
 * Where an instance's start-up stands, from its "start-up stage" log lines: the stages begun and not done, with how long
 * ago they began, and the last retry of each. A start-up that times out in a test says which stage
 * it was waiting for.
 */
export function startupProgress(instance: ProcessorInstance, now = Date.now()): string {
  const pending = new Map<string, Record<string, unknown>>();
  const retries = new Map<string, Record<string, unknown>>();
  let done = 0;
  for (const line of logLines(instance)) {
    const key = `${String(line["instance"])}: ${String(line["stage"])}`;
    if (line["msg"] === "start-up stage begun") pending.set(key, line);
    else if (line["msg"] === "start-up stage done" || line["msg"] === "start-up stage failed") {
      pending.delete(key);
      done += 1;
    } else if (line["msg"] === "start-up stage retrying") retries.set(key, line);
  }
  if (pending.size === 0)
    return `start-up: ${done} stage(s) finished, none pending (no stage logs at all means it stopped before the first)`;
  const lines = [...pending].map(([key, line]) => {
    const retry = retries.get(key);
    return `  ${key}, begun ${((now - Number(line["time"])) / 1000).toFixed(1)} s ago${retry === undefined ? "" : `; last retry after attempt ${String(retry["attempt"])}: ${String(retry["error"])}`}`;
  });
  return [`start-up: ${done} stage(s) finished; still pending:`, ...lines].join("\n");
}

export async function waitForHealthy(instance: ProcessorInstance, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (instance.metricsPort === undefined) {
    if (!isAlive(instance))
      throw new Error(
        `${instance.name} exited (${String(instance.child.exitCode ?? instance.child.signalCode)}) before it was running\n${startupProgress(instance)}\n${logTail(instance, 40)}`,
      );
    const runningLine = logLines(instance).find((line) => line["msg"] === "processor instance running");
    if (typeof runningLine?.["metricsPort"] === "number") instance.metricsPort = runningLine["metricsPort"];
    else if (Date.now() > deadline)
      throw new Error(
        `${instance.name} not running after ${timeoutMs} ms\n${startupProgress(instance)}\n${logTail(instance, 40)}`,
      );
    else await sleep(200);
  }
  await waitFor(
    `${instance.name} /healthz 200`,
    async () => ((await httpGet(instance, "/healthz")).status === 200 ? true : undefined),
    { timeoutMs: Math.max(5_000, deadline - Date.now()) },
  );
}

export async function httpGet(instance: ProcessorInstance, path: string): Promise<{ status: number; body: string }> {
  if (instance.metricsPort === undefined) throw new Error(`${instance.name} has no metrics port yet`);
  const response = await fetch(`http://127.0.0.1:${instance.metricsPort}${path}`, {
    signal: AbortSignal.timeout(5_000),
  });
  return { status: response.status, body: await response.text() };
}

/** Sends a signal and waits for the process to end (SIGKILL after `graceMs` for a SIGTERM). */
export async function stopProcessor(
  instance: ProcessorInstance,
  signal: "SIGKILL" | "SIGTERM" = "SIGTERM",
  graceMs = 60_000,
): Promise<number | string> {
  if (!isAlive(instance)) return instance.exited;
  instance.child.kill(signal);
  if (signal === "SIGTERM") {
    const timer = setTimeout(() => instance.child.kill("SIGKILL"), graceMs);
    const result = await instance.exited;
    clearTimeout(timer);
    return result;
  }
  return instance.exited;
}

/** For afterEach/afterAll: kill -9 every instance these helpers started that still runs. */
export async function killAllProcessors(): Promise<void> {
  await Promise.all([...running].map((instance) => stopProcessor(instance, "SIGKILL")));
}

/** One sample of a Prometheus text exposition. */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1] as string] = (pair[2] as string).replace(/\\(.)/g, (_, char: string) =>
        char === "n" ? "\n" : char,
      );
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

export async function fetchMetrics(instance: ProcessorInstance): Promise<MetricSample[]> {
  const response = await httpGet(instance, "/metrics");
  if (response.status !== 200) throw new Error(`${instance.name} /metrics answered ${response.status}`);
  return parseMetrics(response.body);
}

/** Sum of the samples of `name` whose labels include `labels`. */
export function metricSum(
  samples: readonly MetricSample[],
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number {
  return samples
    .filter(
      (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

// ---------------------------------------------------------------------------------------------
// Other CLI commands, run to completion

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runAgentops(args: readonly string[], timeoutMs = 120_000): Promise<CliRun> {
  const { brokers, registryUrl } = serviceEndpoints();
  return new Promise((resolve) => {
    execFile(
      NODE,
      [...NODE_FLAGS, AGENTOPS, ...args],
      {
        cwd: REPO_ROOT,
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, KAFKA_BROKERS: brokers.join(","), SCHEMA_REGISTRY_URL: registryUrl },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export async function runAgentopsOk(args: readonly string[], timeoutMs = 120_000): Promise<CliRun> {
  const result = await runAgentops(args, timeoutMs);
  if (result.code !== 0)
    throw new Error(`agentops ${args.join(" ")} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Stream-level helpers

/** The result key of a result record, as the engine computes it. */
export function keyOf(result: MetricResult): string {
  return resultKey(result.metric_id, result.scope, result.cohort);
}

export function resultsByKey(results: Iterable<MetricResult>): Map<string, MetricResult> {
  return new Map([...results].map((result) => [keyOf(result), result] as const));
}

export interface EmbeddedReplay {
  readonly results: Map<string, MetricResult>;
  readonly alertIds: string[];
}

/** `agentops replay --input F` in process (no Kafka): the expected answer for a file. */
export async function embeddedReplay(input: string, dir: string): Promise<EmbeddedReplay> {
  const output = join(dir, "embedded-results.ndjson");
  const alerts = join(dir, "embedded-alerts.ndjson");
  await runAgentopsOk(["replay", "--input", input, "--output", output, "--alerts", alerts]);
  const parse = (path: string): unknown[] =>
    readFileSync(path, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as unknown);
  return {
    results: resultsByKey(parse(output) as MetricResult[]),
    alertIds: sortedUnique((parse(alerts) as { alert_id: string }[]).map((alert) => alert.alert_id)),
  };
}

export function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

export function topicSerde(): AvroTopicSerde {
  return new AvroTopicSerde(testRegistry());
}

/** A readable account of the differing keys: expected and actual canonical values side by side. */
export function describeDifferences(
  expected: ReadonlyMap<string, MetricResult>,
  actual: ReadonlyMap<string, MetricResult>,
  comparison: ResultComparison,
  limit = 5,
): string {
  if (comparison.differingKeys.length === 0) return "no differences";
  const lines = [
    `${comparison.differingCount} differing key(s) (expected ${expected.size} keys, results topic ${actual.size}); first ${Math.min(limit, comparison.differingKeys.length)}:`,
  ];
  for (const { key } of comparison.differingKeys.slice(0, limit)) {
    const left = expected.get(key);
    const right = actual.get(key);
    lines.push(
      `key ${key}`,
      `  expected ${left === undefined ? "(absent)" : canonicalJson(left)}`,
      `  actual   ${right === undefined ? "(absent)" : canonicalJson(right)}`,
    );
  }
  return lines.join("\n");
}

export interface Quiescence {
  readonly actual: Map<string, MetricResult>;
  readonly comparison: ResultComparison;
  readonly seconds: number;
  readonly polls: number;
}

/**
 * Waits until the results topic is quiet and asserts it holds exactly `expected` (the embedded
 * replay's results), byte for byte: no differing key, the same digest.
 */
export async function expectResultsTopic(
  kafka: Kafka,
  topic: string,
  expected: ReadonlyMap<string, MetricResult>,
  timeoutMs: number,
  serde = topicSerde(),
): Promise<void> {
  const quiet = await waitForResults(kafka, topic, expected, timeoutMs, serde);
  expect(quiet.comparison.differingKeys, describeDifferences(expected, quiet.actual, quiet.comparison)).toEqual([]);
  expect(quiet.comparison.actualDigest).toBe(quiet.comparison.expectedDigest);
}

/**
 * Polls the compacted results topic until its latest values equal `expected` or `timeoutMs`
 * passes; returns the last comparison either way so the test asserts (and prints) it.
 */
export async function waitForResults(
  kafka: Kafka,
  topic: string,
  expected: ReadonlyMap<string, MetricResult>,
  timeoutMs = 120_000,
  serde = topicSerde(),
): Promise<Quiescence> {
  const started = Date.now();
  let polls = 0;
  for (;;) {
    polls += 1;
    let actual = new Map<string, MetricResult>();
    try {
      actual = await readLatestResults(kafka, serde, topic);
    } catch {
      // broker restarting, topic not created yet: poll again
    }
    const comparison = compareResults(expected, actual);
    if (comparison.differingKeys.length === 0 || Date.now() - started > timeoutMs)
      return { actual, comparison, seconds: (Date.now() - started) / 1000, polls };
    await sleep(1_500);
  }
}

/** Every alert id on the alerts topic (sorted, without the repeats at-least-once may write). */
export async function readAlertIds(kafka: Kafka, topic: string, serde = topicSerde()): Promise<string[]> {
  const ids: string[] = [];
  await readTopicToEnd(kafka, topic, async (message) => {
    if (message.value !== null) ids.push(((await serde.decodeAlert(message.value)) as { alert_id: string }).alert_id);
  });
  return sortedUnique(ids);
}

export async function readDeadLetters(kafka: Kafka, topic: string, serde = topicSerde()): Promise<DeadLetterRecord[]> {
  const letters: DeadLetterRecord[] = [];
  await readTopicToEnd(kafka, topic, async (message) => {
    if (message.value !== null) letters.push(await serde.decodeDeadLetter(message.value));
  });
  return letters;
}

export function readLines(path: string): string[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "");
}

/**
 * Publishes NDJSON fact lines as `agentops produce` does (valid records only, Avro through the
 * registry; metric facts keyed by fact_id on the facts topic, agent events keyed by run_id on
 * the agent-events topic), in process, so a test can produce in chunks between other steps.
 */
export async function produceLines(
  producer: Producer,
  serde: AvroTopicSerde,
  topics: TopicNames,
  lines: readonly string[],
): Promise<number> {
  // The same publishing path as `agentops produce` (invalid measures travel as reported).
  const publisher = createFactPublisher(producer, serde, topics, Number.MAX_SAFE_INTEGER);
  let sent = 0;
  for (const line of lines) {
    const parsed = parseFactJson(line);
    if (!parsed.ok) continue;
    try {
      await publisher.add(parsed.fact);
    } catch {
      continue; // a fact Avro cannot carry at all is not sent, as `agentops produce` skips it
    }
    sent += 1;
  }
  await publisher.flush();
  return sent;
}

/** Splits `items` into `parts` consecutive chunks of near-equal size. */
export function chunks<T>(items: readonly T[], parts: number): T[][] {
  const size = Math.ceil(items.length / parts);
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}
