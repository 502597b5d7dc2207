/**
 * Tripwires benchmark on Kafka (`npm run bench:tripwires`, issue #6): produce-to-alert latency of
 * destructive actions under a steady background load, then the in-process detector figures
 * (bench/tripwires-core.ts, as a child process) so every figure comes from one run.
 *
 *   1. starts one `agentops run --roles run-monitor` instance as a child process on a fresh
 *      topic prefix and waits for its /healthz (topics created, consumer group joined);
 *   2. produces benign agent events (Avro, keyed by run_id) at a steady rate over many runs, and
 *      every `--probe-ms` a destructive sandbox_event at a known run/seq, timing just before `send`;
 *   3. a consumer on the alerts topic timestamps each alert on receipt and matches it to its probe
 *      by run_id + evidence.seq_from; latency = receive − send (one clock, this process);
 *   4. after the warm-up and the measured period: percentiles, achieved rate, missing alerts,
 *      the processor's peak RSS (VmHWM) and CPU; SIGTERM, delete the prefixed topics and groups.
 * Writes the section "Tripwires (Kafka, produce-to-alert)" of bench/RESULTS.md.
 *
 *   node_modules/.bin/node --expose-gc bench/tripwires.bench.ts [--rate 2000] [--seconds 60]
 *     [--warmup 10] [--runs 200] [--probe-ms 100] [--no-core] [--no-write] [--trace-gc] [--keep-logs]
 *   BENCH_CPU_PROFILE_DIR=<dir> also writes a CPU profile of the processor (summarise it with
 *   bench/engine-profile-summary.ts).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { freePort } from "../test/support/free-port.ts";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Consumer, Message, Producer } from "kafkajs";
import { AvroTopicSerde } from "../src/kafka/serde/avro-serde.ts";
import { createKafka } from "../src/kafka/client.ts";
import { resolveBrokers, resolveSchemaRegistryUrl } from "../src/kafka/connection-addresses.ts";
import { createSchemaRegistry } from "../src/kafka/registry.ts";
import { readProcStatus } from "../src/stream/runtime/proc-status.ts";
import { topicNames } from "../src/stream/topic-names.ts";
import { cpuSeconds } from "./kafka-harness.ts";
import { AgentEventLoad, distribution, type Distribution } from "./tripwires-kafka-load.ts";
import { writeResultsSection } from "./results-section.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const NODE = `${ROOT}node_modules/.bin/node`;
const HEADING = "## Tripwires (Kafka, produce-to-alert)";
const BROKERS = resolveBrokers(undefined).value;
const REGISTRY_URL = resolveSchemaRegistryUrl(undefined).value;
const TARGET_P99_MS = 100;

const argv = process.argv.slice(2);
function option(name: string, fallback: number): number {
  const at = argv.indexOf(`--${name}`);
  const value = at === -1 ? undefined : Number(argv[at + 1]);
  if (value !== undefined && !(Number.isFinite(value) && value > 0))
    throw new Error(`--${name} needs a positive number`);
  return value ?? fallback;
}
const RATE = option("rate", 2_000);
const MEASURE_S = option("seconds", 60);
const WARMUP_S = option("warmup", 10);
const CONCURRENT_RUNS = option("runs", 200);
const PROBE_MS = option("probe-ms", 100);
const EVENTS_PER_RUN = 250;
const DRAIN_TIMEOUT_MS = 30_000;
const runCore = !argv.includes("--no-core");
const writeResults = !argv.includes("--no-write");
/** Runs the processor with --trace-gc and reports its collections (for profiling a latency tail). */
const traceGc = argv.includes("--trace-gc");
/** Keeps the processor's log (its temp dir) instead of deleting it. */
const keepLogs = argv.includes("--keep-logs");

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(1) : "n/a");
const int = (value: number): string => Math.round(value).toLocaleString("en-US");

/** /proc/<pid>/status field in kB (VmHWM = peak RSS, VmRSS = current). */
function procStatusKb(pid: number, field: "VmHWM" | "VmRSS"): number | undefined {
  const bytes = readProcStatus(pid)?.(field);
  return bytes === undefined ? undefined : bytes / 1024;
}

async function scrape(port: number): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  try {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2_000) });
    for (const line of (await response.text()).split("\n")) {
      const match = /^([a-z_]+(?:\{[^}]*\})?) ([0-9.eE+-]+)$/.exec(line);
      if (match?.[1] !== undefined) values.set(match[1], Number(match[2]));
    }
  } catch {
    // a missed scrape only loses one lag sample
  }
  return values;
}

function sum(values: Map<string, number>, name: string): number {
  let total = 0;
  for (const [key, value] of values) if (key === name || key.startsWith(`${name}{`)) total += value;
  return total;
}

interface GcSummary {
  readonly scavenges: number;
  readonly markCompacts: number;
  readonly totalPauseMs: number;
  readonly maxPauseMs: number;
  readonly over20Ms: number;
}

/** The processor's --trace-gc lines (whole life, warm-up included): main-thread pauses. */
function summariseGc(log: string): GcSummary {
  let scavenges = 0;
  let markCompacts = 0;
  let totalPauseMs = 0;
  let maxPauseMs = 0;
  let over20Ms = 0;
  for (const match of log.matchAll(
    /ms: (Scavenge|Mark-Compact|Mark-Sweep|Minor Mark-Sweep)\b[^\n]*?, ([\d.]+) \/ [\d.]+ ms/g,
  )) {
    const pause = Number(match[2]);
    if (match[1] === "Scavenge" || match[1] === "Minor Mark-Sweep") scavenges += 1;
    else markCompacts += 1;
    totalPauseMs += pause;
    maxPauseMs = Math.max(maxPauseMs, pause);
    if (pause > 20) over20Ms += 1;
  }
  return { scavenges, markCompacts, totalPauseMs, maxPauseMs, over20Ms };
}

/**
 * Bytes each topic's log segments hold, read from the local broker's data directory (the one
 * `npm run services:up` runs); empty when that directory is not here (another cluster).
 */
function topicBytes(topics: readonly string[]): Map<string, number> {
  const data = `${ROOT}.services/kafka/data/`;
  const bytes = new Map<string, number>();
  if (!existsSync(data)) return bytes;
  for (const entry of readdirSync(data)) {
    const topic = topics.find((name) => entry.startsWith(`${name}-`) && /^\d+$/.test(entry.slice(name.length + 1)));
    if (topic === undefined) continue;
    for (const file of readdirSync(`${data}${entry}`))
      if (file.endsWith(".log")) bytes.set(topic, (bytes.get(topic) ?? 0) + statSync(`${data}${entry}/${file}`).size);
  }
  return bytes;
}

interface Processor {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly logPath: string;
  readonly exited: Promise<string>;
}

/** The processor child, so a crash of this script never leaves it running. */
let liveChild: ChildProcess | undefined;
for (const event of ["uncaughtException", "unhandledRejection"] as const) {
  process.on(event, (error: unknown) => {
    log(`${event}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    liveChild?.kill("SIGTERM");
    process.exit(1);
  });
}

async function startProcessor(prefix: string, dir: string): Promise<Processor> {
  const port = await freePort();
  const logPath = join(dir, "processor.log");
  const out = openSync(logPath, "w");
  // BENCH_CPU_PROFILE_DIR=<dir> writes a V8 CPU profile of the processor there when it stops (as bench/kafka.bench.ts).
  const profileFlags =
    process.env.BENCH_CPU_PROFILE_DIR === undefined
      ? []
      : ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE_DIR}`];
  const args = [
    ...(traceGc ? ["--trace-gc"] : []),
    ...profileFlags,
    "--disable-warning=ExperimentalWarning",
    "bin/agentops",
    "run",
    "--roles",
    "run-monitor",
    "--topic-prefix",
    prefix,
    "--instance-id",
    `${prefix}-monitor`,
    "--metrics-port",
    String(port),
    "--log-level",
    "warn",
    "--brokers",
    BROKERS.join(","),
    "--schema-registry",
    REGISTRY_URL,
  ];
  const child = spawn(NODE, args, { cwd: ROOT, stdio: ["ignore", out, out] });
  closeSync(out);
  if (child.pid === undefined) throw new Error("could not start the processor");
  liveChild = child;
  const exited = new Promise<string>((resolve) =>
    child.once("exit", (code, signal) => resolve(signal ?? String(code))),
  );
  let gone: string | undefined;
  void exited.then((how) => (gone = how));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (gone !== undefined)
      throw new Error(
        `processor exited (${gone}) before it was healthy:\n${readFileSync(logPath, "utf8").slice(-3_000)}`,
      );
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`processor not healthy after 120 s:\n${readFileSync(logPath, "utf8").slice(-3_000)}`);
    }
    await sleep(200);
  }
  return { child, pid: child.pid, port, logPath, exited };
}

async function stopProcessor(processor: Processor): Promise<string> {
  processor.child.kill("SIGTERM");
  const timer = setTimeout(() => processor.child.kill("SIGKILL"), 30_000);
  const how = await processor.exited;
  clearTimeout(timer);
  return how;
}

interface Probe {
  readonly phase: "warmup" | "measure";
  readonly sentAt: number; // performance.now() just before send
  readonly sentWall: number; // Date.now() just before send
  readonly command: string;
  receivedAt?: number;
  alertCreated?: number; // the alert record's Kafka timestamp (set by the processor's producer)
  sendAckMs?: number;
  sendError?: string;
}

interface KafkaRun {
  readonly prefix: string;
  readonly latency: Distribution;
  readonly upstream: Distribution; // send → alert record created by the processor
  readonly downstream: Distribution; // alert record created → received here
  readonly probeAck: Distribution; // send → broker ack of the probe
  readonly injected: number;
  readonly received: number;
  readonly missing: readonly string[];
  readonly backgroundSent: number;
  readonly achievedRate: number;
  readonly backgroundAck: Distribution;
  readonly runsStarted: number;
  readonly otherAlerts: number;
  readonly peakRssKb: number | undefined;
  readonly processorCpu: number | undefined; // cores used during the measured period
  readonly maxLag: number;
  readonly lagSamples: number;
  readonly rssAtStartKb: number | undefined;
  readonly bytesWritten: Map<string, number>;
  readonly records: Map<string, number>;
  /** The slowest 1% of probes (at least 3), each component averaged: where the tail's time goes. */
  readonly tail: {
    readonly count: number;
    readonly total: number;
    readonly probeAck: number;
    readonly processor: number;
    readonly delivery: number;
  };
  readonly loadSeconds: number;
  readonly gc: GcSummary | undefined;
  readonly processed: number;
  readonly exit: string;
  readonly loadBefore: readonly number[];
  readonly loadAfter: readonly number[];
}

async function kafkaBenchmark(): Promise<KafkaRun> {
  const prefix = `bench-tw-${Date.now().toString(36)}-${process.pid}`;
  const topics = topicNames(prefix);
  const dir = mkdtempSync(join(tmpdir(), "agentops-bench-tripwires-"));
  const kafka = createKafka({ brokers: BROKERS, clientId: `${prefix}-bench` });
  const serde = new AvroTopicSerde(createSchemaRegistry(REGISTRY_URL));
  const loadBefore = loadavg();
  log(`topic prefix ${prefix}; starting agentops run --roles run-monitor…`);
  const started = performance.now();
  const processor = await startProcessor(prefix, dir);
  log(
    `processor pid ${processor.pid} healthy on :${processor.port} after ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  const background: Producer = kafka.producer({ allowAutoTopicCreation: false });
  const prober: Producer = kafka.producer({ allowAutoTopicCreation: false });
  const alerts: Consumer = kafka.consumer({ groupId: `${prefix}.bench-alerts`, maxWaitTimeInMs: 100 });
  const probes = new Map<string, Probe>();
  let otherAlerts = 0;
  let cleanedUp = false;
  let gc: GcSummary | undefined;
  let bytesWritten = new Map<string, number>();
  const records = new Map<string, number>();
  const rssAtStartKb = procStatusKb(processor.pid, "VmRSS");
  const cleanup = async (): Promise<string> => {
    if (cleanedUp) return "";
    cleanedUp = true;
    const how = await stopProcessor(processor);
    if (traceGc) gc = summariseGc(readFileSync(processor.logPath, "utf8"));
    bytesWritten = topicBytes(Object.values(topics));
    await Promise.allSettled([background.disconnect(), prober.disconnect(), alerts.disconnect()]);
    const admin = kafka.admin();
    try {
      await admin.connect();
      const existing = new Set(await admin.listTopics());
      for (const topic of Object.values(topics)) {
        if (!existing.has(topic)) continue;
        const offsets = await admin.fetchTopicOffsets(topic);
        records.set(
          topic,
          offsets.reduce((total, partition) => total + Number(partition.high) - Number(partition.low), 0),
        );
      }
      await admin.deleteTopics({ topics: Object.values(topics).filter((topic) => existing.has(topic)) });
      await admin.deleteGroups([`${prefix}.agentops.run-monitor`, `${prefix}.bench-alerts`]).catch(() => undefined);
    } catch (error) {
      log(`cleanup: ${String(error)}`);
    } finally {
      await admin.disconnect();
    }
    if (keepLogs) log(`processor log kept: ${processor.logPath}`);
    else rmSync(dir, { recursive: true, force: true });
    return how;
  };

  try {
    await Promise.all([background.connect(), prober.connect(), alerts.connect()]);
    await alerts.subscribe({ topic: topics.alerts, fromBeginning: true });
    await alerts.run({
      eachBatchAutoResolve: true,
      eachBatch: async ({ batch }) => {
        const receivedAt = performance.now();
        for (const message of batch.messages) {
          if (message.value === null) continue;
          const alert = (await serde.decodeAlert(message.value)) as {
            run_id: string;
            kind: string;
            evidence: { seq_from: number };
          };
          const probe =
            alert.kind === "DESTRUCTIVE" ? probes.get(`${alert.run_id}#${alert.evidence.seq_from}`) : undefined;
          if (probe === undefined) {
            otherAlerts += 1;
            continue;
          }
          if (probe.receivedAt !== undefined) continue; // a second rule on the same record, or a repeat
          probe.receivedAt = receivedAt;
          probe.alertCreated = Number(message.timestamp);
        }
      },
    });

    const load = new AgentEventLoad({
      concurrentRuns: CONCURRENT_RUNS,
      eventsPerRun: EVENTS_PER_RUN,
      seed: 42,
      runPrefix: prefix,
    });
    // Warm the registry ids so the first send is not a registry round trip.
    await serde.encodeFact(load.next(Date.now()));
    await serde.encodeFact(load.destructive(Date.now(), 0));

    const loadStart = performance.now();
    const measureStart = loadStart + WARMUP_S * 1000;
    const loadEnd = measureStart + MEASURE_S * 1000;
    let sent = 0;
    let sentInWindow = 0;
    let lastSendEnd = measureStart;
    const backgroundAcks: number[] = [];
    let cpuAtStart: number | undefined;
    let cpuAtEnd: number | undefined;
    let maxLag = 0;
    let lagSamples = 0;

    const backgroundLoop = async (): Promise<void> => {
      for (;;) {
        const now = performance.now();
        if (now >= loadEnd) return;
        const due = Math.min(Math.floor(((now - loadStart) / 1000) * RATE) - sent, 1_000);
        if (due <= 0) {
          await sleep(2);
          continue;
        }
        const wall = Date.now();
        const messages: Message[] = [];
        for (let index = 0; index < due; index++) {
          const event = load.next(wall);
          messages.push({ key: event.run_id, value: await serde.encodeFact(event) });
        }
        const before = performance.now();
        await background.send({ topic: topics.agentEvents, messages });
        if (before >= measureStart) {
          backgroundAcks.push(performance.now() - before);
          sentInWindow += due;
          lastSendEnd = performance.now();
        }
        sent += due;
      }
    };

    const probeLoop = async (): Promise<void> => {
      for (let index = 0; ; index++) {
        const at = loadStart + index * PROBE_MS;
        if (at >= loadEnd) return;
        await sleep(at - performance.now());
        const event = load.destructive(Date.now(), index);
        const value = await serde.encodeFact(event);
        const sentWall = Date.now();
        const sentAt = performance.now();
        const probe: Probe = {
          phase: sentAt >= measureStart ? "measure" : "warmup",
          sentAt,
          sentWall,
          command: event.command ?? "",
        };
        probes.set(`${event.run_id}#${event.seq}`, probe);
        prober.send({ topic: topics.agentEvents, messages: [{ key: event.run_id, value }] }).then(
          () => (probe.sendAckMs = performance.now() - sentAt),
          (error: unknown) => (probe.sendError = String(error)),
        );
      }
    };

    const monitorLoop = async (): Promise<void> => {
      while (performance.now() < measureStart) await sleep(50);
      cpuAtStart = cpuSeconds(processor.pid);
      while (performance.now() < loadEnd) {
        await sleep(1_000);
        const metrics = await scrape(processor.port);
        if (metrics.size > 0) {
          lagSamples += 1;
          maxLag = Math.max(maxLag, sum(metrics, "agentops_consumer_lag"));
        }
      }
      cpuAtEnd = cpuSeconds(processor.pid);
    };

    log(
      `load: ${int(RATE)} events/s over ${CONCURRENT_RUNS} concurrent runs, a destructive probe every ${PROBE_MS} ms; warm-up ${WARMUP_S} s, measured ${MEASURE_S} s`,
    );
    const progress = setInterval(() => {
      const measured = [...probes.values()].filter((probe) => probe.phase === "measure");
      log(
        `  sent ${int(sent)} background events; probes ${probes.size} (${measured.filter((probe) => probe.receivedAt !== undefined).length}/${measured.length} measured alerts in)`,
      );
    }, 10_000);
    await Promise.all([backgroundLoop(), probeLoop(), monitorLoop()]);
    clearInterval(progress);
    const backgroundSeconds = (lastSendEnd - measureStart) / 1000;

    const measured = [...probes.entries()].filter(([, probe]) => probe.phase === "measure");
    const drainDeadline = performance.now() + DRAIN_TIMEOUT_MS;
    while (measured.some(([, probe]) => probe.receivedAt === undefined) && performance.now() < drainDeadline)
      await sleep(100);

    const peakRssKb = procStatusKb(processor.pid, "VmHWM");
    const processed = sum(await scrape(processor.port), "agentops_records_processed_total");
    const exit = await cleanup();
    const done = measured
      .map(([, probe]) => probe)
      .filter(
        (probe): probe is Probe & { receivedAt: number; alertCreated: number } =>
          probe.receivedAt !== undefined && probe.alertCreated !== undefined,
      );
    const slowest = [...done]
      .sort((left, right) => right.receivedAt - right.sentAt - (left.receivedAt - left.sentAt))
      .slice(0, Math.max(3, Math.ceil(done.length / 100)));
    const mean = (values: readonly number[]): number =>
      values.reduce((total, value) => total + value, 0) / Math.max(1, values.length);
    const tail = {
      count: slowest.length,
      total: mean(slowest.map((probe) => probe.receivedAt - probe.sentAt)),
      probeAck: mean(slowest.map((probe) => probe.sendAckMs ?? Number.NaN)),
      processor: mean(slowest.map((probe) => probe.alertCreated - probe.sentWall - (probe.sendAckMs ?? Number.NaN))),
      delivery: mean(slowest.map((probe) => probe.receivedAt - probe.sentAt - (probe.alertCreated - probe.sentWall))),
    };
    return {
      prefix,
      latency: distribution(done.map((probe) => probe.receivedAt - probe.sentAt)),
      upstream: distribution(done.map((probe) => probe.alertCreated - probe.sentWall)),
      downstream: distribution(
        done.map((probe) => probe.receivedAt - probe.sentAt - (probe.alertCreated - probe.sentWall)),
      ),
      probeAck: distribution(measured.flatMap(([, probe]) => (probe.sendAckMs === undefined ? [] : [probe.sendAckMs]))),
      injected: measured.length,
      received: done.length,
      missing: measured
        .filter(([, probe]) => probe.receivedAt === undefined)
        .map(
          ([key, probe]) =>
            `${key} (${probe.command}${probe.sendError === undefined ? "" : `; send failed: ${probe.sendError}`})`,
        ),
      backgroundSent: sentInWindow,
      achievedRate: sentInWindow / backgroundSeconds,
      backgroundAck: distribution(backgroundAcks),
      runsStarted: load.runs,
      otherAlerts,
      peakRssKb,
      processorCpu:
        cpuAtStart === undefined || cpuAtEnd === undefined ? undefined : (cpuAtEnd - cpuAtStart) / MEASURE_S,
      maxLag,
      lagSamples,
      rssAtStartKb,
      bytesWritten,
      records,
      tail,
      loadSeconds: WARMUP_S + MEASURE_S,
      gc,
      processed,
      exit,
      loadBefore,
      loadAfter: loadavg(),
    };
  } finally {
    await cleanup().catch((error: unknown) => log(`cleanup failed: ${String(error)}`));
  }
}

interface CoreRun {
  readonly lines: readonly string[];
  readonly warm: string | undefined;
  readonly cold: string | undefined;
  readonly memory: readonly string[];
}

/** bench/tripwires-core.ts as a child (fresh heap, --expose-gc); its report lines. */
function coreBenchmark(): CoreRun {
  log("in-process detector (bench/tripwires-core.ts)…");
  const stdout = execFileSync(NODE, ["--expose-gc", "bench/tripwires-core.ts"], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 15 * 60_000,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = stdout.trim().split("\n");
  for (const line of lines) log(`  ${line}`);
  return {
    lines,
    warm: lines.find((line) => line.startsWith("warm mix")),
    cold: lines.find((line) => line.startsWith("cold parsing")),
    memory: lines.filter((line) => line.startsWith("memory:")),
  };
}

function renderSection(run: KafkaRun, core: CoreRun | undefined, date: string): string {
  const machine = `${cpus().length} cores (\`nproc\` = ${execFileSync("nproc", { encoding: "utf8" }).trim()}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, node ${process.version}`;
  const load = (values: readonly number[]): string => values.map((value) => value.toFixed(1)).join(" / ");
  const verdict = run.latency.p99 <= TARGET_P99_MS && run.missing.length === 0 ? "meets" : "misses";
  const rows = [
    `| produce-to-alert latency, ${run.received} destructive probes (send → alert received) | p50 **${ms(run.latency.p50)} ms**, p90 ${ms(run.latency.p90)} ms, p99 **${ms(run.latency.p99)} ms**, max ${ms(run.latency.max)} ms (mean ${ms(run.latency.mean)}); target p99 ≤ ${TARGET_P99_MS} ms: **${verdict}** |`,
    `| of which: send → alert record created by the processor (ms clock, includes the probe's produce ack) | p50 ${ms(run.upstream.p50)}, p90 ${ms(run.upstream.p90)}, p99 ${ms(run.upstream.p99)}, max ${ms(run.upstream.max)} ms |`,
    `| of which: alert record created → received by the bench's consumer | p50 ${ms(run.downstream.p50)}, p90 ${ms(run.downstream.p90)}, p99 ${ms(run.downstream.p99)}, max ${ms(run.downstream.max)} ms |`,
    `| the slowest ${run.tail.count} probes (1%), mean per component | total ${ms(run.tail.total)} ms = probe produce ack ${ms(run.tail.probeAck)} ms + ack → alert record created (processor fetch, decode, detect, serialise) ${ms(run.tail.processor)} ms + alert produce and delivery ${ms(run.tail.delivery)} ms |`,
    `| probe produce ack (send → broker ack, acks=all) | p50 ${ms(run.probeAck.p50)}, p99 ${ms(run.probeAck.p99)}, max ${ms(run.probeAck.max)} ms |`,
    `| probes injected / alerts received (measured period) | ${run.injected} / ${run.received}${run.missing.length === 0 ? " (none missing)" : `; **missing ${run.missing.length}**: ${run.missing.slice(0, 5).join(", ")}${run.missing.length > 5 ? ", …" : ""}`} |`,
    `| background load achieved | **${int(run.achievedRate)} events/s** (${int(run.backgroundSent)} events in ${MEASURE_S} s; target ${int(RATE)}); batch send ack p50 ${ms(run.backgroundAck.p50)} ms, p99 ${ms(run.backgroundAck.p99)} ms |`,
    `| runs | ${CONCURRENT_RUNS} concurrent, each replaced after ${EVENTS_PER_RUN} events: ${int(run.runsStarted)} runs over the whole load |`,
    `| other alerts (loops, redundancy in the benign mix) | ${int(run.otherAlerts)} |`,
    `| processor: peak RSS (VmHWM) | **${run.peakRssKb === undefined ? "n/a" : `${(run.peakRssKb / 1024).toFixed(0)} MiB`}** (RSS when it became healthy: ${run.rssAtStartKb === undefined ? "n/a" : `${(run.rssAtStartKb / 1024).toFixed(0)} MiB`}) |`,
    ...(run.gc === undefined
      ? []
      : [
          `| processor: GC (--trace-gc, whole life incl. warm-up) | ${run.gc.scavenges} young + ${run.gc.markCompacts} full collections, ${ms(run.gc.totalPauseMs)} ms paused in all, longest ${ms(run.gc.maxPauseMs)} ms, ${run.gc.over20Ms} pauses > 20 ms |`,
        ]),
    `| records and bytes written per topic over the whole load (${run.loadSeconds} s; bytes = the broker's log segments at the end; the compacted run-state and changelog topics are cleaned while the bench runs, so theirs are less than what was written) | ${Object.values(
      topicNames(run.prefix),
    )
      .filter((topic) => (run.records.get(topic) ?? 0) > 0)
      .map(
        (topic) =>
          `${topic.slice(run.prefix.length + 1)}: ${int(run.records.get(topic) ?? 0)} records${run.bytesWritten.has(topic) ? `, ${((run.bytesWritten.get(topic) ?? 0) / 1024 ** 2).toFixed(1)} MiB (${((run.bytesWritten.get(topic) ?? 0) / 1024 / run.loadSeconds).toFixed(0)} KiB/s, ${int((run.bytesWritten.get(topic) ?? 0) / Math.max(1, run.records.get(topic) ?? 0))} B/record)` : ""}`,
      )
      .join("; ")} |`,
    `| processor: CPU during the measured period | ${run.processorCpu === undefined ? "n/a" : `${(run.processorCpu * 100).toFixed(0)}% of one core`}; max consumer lag ${int(run.maxLag)} records (${run.lagSamples} samples of /metrics, 1/s); ${int(run.processed)} records processed |`,
  ];
  if (core !== undefined) {
    rows.push(`| in-process detector, warm (bench/tripwires-core.ts, same run) | ${core.warm ?? "n/a"} |`);
    rows.push(`| in-process detector, cold parsing | ${core.cold ?? "n/a"} |`);
    for (const line of core.memory) rows.push(`| memory per active run | ${line.replace(/^memory: /, "")} |`);
  }
  const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "bin"], { cwd: ROOT, encoding: "utf8" })
    .trimEnd()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.slice(3));
  return [
    HEADING,
    "",
    `- Date: ${date} (\`date -u\`)`,
    `- Machine: ${machine}; shared with other engineers' jobs (load average 1/5/15 min: ${load(run.loadBefore)} before, ${load(run.loadAfter)} after). Kafka 4.4.0 (one KRaft node) and Apicurio on the same two cores.`,
    `- Code: commit ${head}${dirty.length === 0 ? "" : ` plus uncommitted changes in the shared working tree at measurement time (${dirty.join(", ")})`}`,
    `- Command: \`npm run bench:tripwires${argv.length === 0 ? "" : ` -- ${argv.join(" ")}`}\` (= \`node --expose-gc bench/tripwires.bench.ts\`; settings --rate ${RATE} --seconds ${MEASURE_S} --warmup ${WARMUP_S} --runs ${CONCURRENT_RUNS} --probe-ms ${PROBE_MS})`,
    "- Set-up: one `agentops run --roles run-monitor --log-level warn` child process on a fresh topic prefix; the bench produces Avro (`AvroTopicSerde.encodeFact`) `agent_step` + `sandbox_event` records to `<prefix>.agentops.agent-events.v1` keyed by run_id (mix of bench/tripwires-core.ts, benign commands only), and every probe interval a destructive `sandbox_event` (`rm -rf /`, `git push --force origin main`, `DROP TABLE`, …) at a known run/seq from a second producer; a consumer on `<prefix>.agentops.alerts.v1` matches alerts by run_id + evidence.seq_from. Latency = receive − send on one clock (`performance.now()`, taken just before `send`).",
    "",
    "| measurement | result |",
    "|---|---|",
    ...rows,
    "",
  ].join("\n");
}

const date = execFileSync("date", ["-u"], { encoding: "utf8" }).trim();
const run = await kafkaBenchmark();
log(
  `latency p50 ${ms(run.latency.p50)} / p90 ${ms(run.latency.p90)} / p99 ${ms(run.latency.p99)} / max ${ms(run.latency.max)} ms; upstream p50 ${ms(run.upstream.p50)} p99 ${ms(run.upstream.p99)}; downstream p50 ${ms(run.downstream.p50)} p99 ${ms(run.downstream.p99)}`,
);
log(
  `probes ${run.injected} injected, ${run.received} received, ${run.missing.length} missing; background ${int(run.achievedRate)} events/s; other alerts ${run.otherAlerts}; processor peak RSS ${run.peakRssKb === undefined ? "n/a" : `${(run.peakRssKb / 1024).toFixed(0)} MiB`}, CPU ${run.processorCpu === undefined ? "n/a" : `${(run.processorCpu * 100).toFixed(0)}%`}, max lag ${run.maxLag}; exit ${run.exit}`,
);
const core = runCore ? coreBenchmark() : undefined;
const section = renderSection(run, core, date);
if (writeResults) {
  writeResultsSection(HEADING, section);
  log(`wrote ${HEADING.slice(3)} to bench/RESULTS.md`);
} else process.stdout.write(`${section}\n`);
