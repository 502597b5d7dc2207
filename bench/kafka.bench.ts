/**
 * Kafka benchmark (`npm run bench:kafka`) on the local broker and registry:
 *   0. a generated workload (`agentops generate --facts N`, reused from bench/out/ when present);
 *   1. produced once with `agentops produce` to a fresh 3-partition facts topic: produce rate;
 *   2. raw consumption: one kafkajs consumer reading the facts topic with registry decode only;
 *   3. the full processor: `agentops run --roles ingest,run-monitor` and `agentops run --roles engine`
 *      (or, with --one-process, one `agentops run` with every role) from start until quiescent
 *      (every record processed, engine lag 0, results no longer changing, per their /metrics): facts/s, peak RSS (VmHWM), then the end-to-end latency of single new facts
 *      (produce → its result on the results topic) once idle;
 *   4. the engine process stopped (SIGTERM) and started again over its state directory: time to live.
 * Writes the section "Kafka (local broker)" of bench/RESULTS.md.
 *
 *   node_modules/.bin/node bench/kafka.bench.ts [--facts 1000000] [--no-write] [--keep-topics] [--one-process]
 *
 * The processor is deployed as on a machine with two cores or more: the engine role in an
 * `agentops run --roles engine` process of its own beside one with the other roles (figures summed
 * over both: records, peak RSS). --one-process runs every role in one `agentops run` instead.
 */
import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import type { Kafka } from "kafkajs";
import { topicRecordCount } from "../src/kafka/read-topic.ts";
import { AvroTopicSerde } from "../src/kafka/serde/avro-serde.ts";
import { createKafka, orderedProducer } from "../src/kafka/client.ts";
import { resolveBrokers, resolveSchemaRegistryUrl } from "../src/kafka/connection-addresses.ts";
import { createSchemaRegistry } from "../src/kafka/registry.ts";
import { parseFactJson } from "../src/contract/parse-fact.ts";
import { ensureTopics } from "../src/kafka/ensure-topics.ts";
import { topicNames, type TopicNames } from "../src/stream/topic-names.ts";
import { DEFAULT_SEED } from "../src/workload/workload.ts";
import {
  benchLog,
  brokerPid,
  CLI_ENV,
  CLI_NODE_FLAGS,
  cpuSeconds,
  deletePrefixedTopics,
  ensureWorkload,
  median,
  metricsPortOf,
  metricValues,
  mib,
  NODE,
  OUT,
  procStatus,
  produce,
  rate,
  ROOT,
  sleep,
  stop,
  sum,
  waitUntil,
} from "./kafka-harness.ts";
import { writeResultsSection } from "./results-section.ts";
import { workloadLineCount } from "./workload-lines.ts";

const RESULTS = `${ROOT}bench/RESULTS.md`;
const HEADING = "## Kafka (local broker)";
const BROKERS = resolveBrokers(undefined).value;
const REGISTRY_URL = resolveSchemaRegistryUrl(undefined).value;
const PROCESSOR_TIMEOUT_MS = 20 * 60_000;
const PROBES = 5;

const argv = process.argv.slice(2);
const FACTS = Number(argv.includes("--facts") ? argv[argv.indexOf("--facts") + 1] : 1_000_000);
const writeResults = !argv.includes("--no-write");
const keepTopics = argv.includes("--keep-topics");
const engineProcess = !argv.includes("--one-process");

const log = benchLog("bench:kafka");

/** One kafkajs consumer, as the processor has, decoding every record through the registry. */
async function rawConsume(
  kafka: Kafka,
  topic: string,
  expected: number,
): Promise<{ seconds: number; joinSeconds: number }> {
  const registry = createSchemaRegistry(REGISTRY_URL);
  const consumer = kafka.consumer({ groupId: `bench-raw-${Date.now().toString(36)}`, maxWaitTimeInMs: 200 });
  const started = performance.now();
  let firstBatchAt = 0;
  let read = 0;
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const progress = setInterval(
    () =>
      log(
        `raw consume: ${read.toLocaleString("en-US")} / ${expected.toLocaleString("en-US")} (${rate(read, (performance.now() - started) / 1000)})`,
      ),
    5_000,
  );
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachBatch: async ({ batch, heartbeat }) => {
          if (firstBatchAt === 0) firstBatchAt = performance.now();
          for (const message of batch.messages) {
            if (message.value !== null) await registry.decode(message.value);
            read += 1;
          }
          await heartbeat();
          if (read >= expected) resolve();
        },
      })
      .catch(reject);
  });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(progress);
  await consumer.disconnect();
  log(
    `raw consume: ${read.toLocaleString("en-US")} facts decoded in ${seconds.toFixed(1)} s = ${rate(read, seconds)} (group join ${((firstBatchAt - started) / 1000).toFixed(1)} s)`,
  );
  return { seconds, joinSeconds: (firstBatchAt - started) / 1000 };
}

interface ProcessorRun {
  readonly seconds: number;
  readonly startupSeconds: number;
  readonly peakRssBytes: number;
  /** Each process's peak RSS, by its roles ("all" for --one-process). */
  readonly peakRssByRoles: readonly { readonly roles: string; readonly bytes: number }[];
  /** Each process's peak anonymous RSS (RssAnon, sampled at every poll): what a container's limit must hold. */
  readonly peakAnonByRoles: readonly { readonly roles: string; readonly bytes: number }[];
  /**
   * CPU seconds (user + system) from start to quiescent, of each process by its roles and of the
   * local broker (undefined with Docker or your own cluster): on a shared machine, the work a fact
   * costs is steadier than the time it takes.
   */
  readonly cpuByRoles: readonly { readonly roles: string; readonly seconds: number }[];
  readonly brokerCpuSeconds: number | undefined;
  readonly resultsPublished: number;
  readonly probeLatenciesMs: number[];
  readonly engineFacts: number;
  readonly maxLag: number;
  /** The engine process stopped (SIGTERM) and started again with its state directory: until it is live. */
  readonly restart: EngineRestart | undefined;
}

interface EngineRestart {
  /** From spawning the process to its "live" log line (node start and imports included). */
  readonly liveSeconds: number;
  /** The engine-facts records read after the local checkpoint (the resume's offset to the end). */
  readonly sourceRecords: string;
  /** The published-results store's changelog read: records and seconds, and the keys it held. */
  readonly resultsRead: number;
  readonly resultsSeconds: number;
  readonly resultsHeld: number;
}

/**
 * The processor processes of a run: the engine in a process of its own (`--roles engine`) beside
 * one with the other roles, which gives the engine a core by configuration (what the engine
 * thread did before, docs/architecture.md), or, with --one-process, one `agentops run`.
 */
const PROCESS_ROLES: readonly (string | undefined)[] = engineProcess ? ["ingest,run-monitor", "engine"] : [undefined];

async function runProcessor(
  kafka: Kafka,
  topics: TopicNames,
  prefix: string,
  facts: number,
  agentEvents: number,
): Promise<ProcessorRun> {
  const started = performance.now();
  // BENCH_CPU_PROFILE_DIR=<dir> writes a V8 CPU profile of the processor there when it stops (summarise with bench/engine-profile-summary.ts).
  const profileFlags =
    process.env.BENCH_CPU_PROFILE_DIR === undefined
      ? []
      : ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE_DIR}`];
  // BENCH_PROCESSOR_ARGS adds `agentops run` flags (with --no-write: the table is for the default).
  const extraArgs = (process.env.BENCH_PROCESSOR_ARGS ?? "").split(/\s+/).filter((word) => word !== "");
  // BENCH_ENGINE_NODE_FLAGS adds node flags to the process running the engine (e.g. --max-old-space-size=384).
  const engineNodeFlags = (process.env.BENCH_ENGINE_NODE_FLAGS ?? "").split(/\s+/).filter((word) => word !== "");
  /** One `agentops run` process; a restart (`suffix`) keeps the state directory and instance id, with a log of its own. */
  const spawnProcessor = (
    roles: string | undefined,
    index: number,
    suffix = "",
  ): { child: ReturnType<typeof spawn>; logPath: string; stateDir: string } => {
    const logPath = `${OUT}kafka-bench-processor${index === 0 ? "" : `-${index}`}${suffix}.log`;
    const out = openSync(logPath, "w");
    const roleArgs = roles === undefined ? [] : ["--roles", roles];
    // The engine's state on disk, in the bench's ignored folder, removed after the run.
    const stateDir = `${OUT}kafka-bench-state-${index}`;
    if (suffix === "") rmSync(stateDir, { recursive: true, force: true });
    const nodeFlags = roles === undefined || roles.includes("engine") ? engineNodeFlags : [];
    const child = spawn(
      NODE,
      [
        ...CLI_NODE_FLAGS,
        ...nodeFlags,
        ...profileFlags,
        `${ROOT}bin/agentops`,
        "run",
        "--topic-prefix",
        prefix,
        "--metrics-port",
        "0",
        "--instance-id",
        `bench-${index}`,
        "--state-dir",
        stateDir,
        "--log-level",
        "info",
        "--brokers",
        BROKERS.join(","),
        "--schema-registry",
        REGISTRY_URL,
        ...roleArgs,
        ...extraArgs,
      ],
      { cwd: ROOT, env: CLI_ENV, stdio: ["ignore", out, out] },
    );
    closeSync(out);
    log(
      `processor: agentops run --topic-prefix ${prefix} ${roleArgs.join(" ")} (pid ${child.pid ?? 0}), log ${logPath}`,
    );
    return { child, logPath, stateDir };
  };
  const broker = brokerPid();
  const brokerCpuBefore = broker === undefined ? undefined : cpuSeconds(broker);
  const children = PROCESS_ROLES.map((roles, index) => {
    const { child, logPath, stateDir } = spawnProcessor(roles, index);
    return {
      child,
      pid: child.pid ?? 0,
      logPath,
      stateDir,
      roles: roles ?? "all",
      peak: 0,
      anonPeak: 0,
      heapPeak: 0,
      externalPeak: 0,
      port: undefined as number | undefined,
    };
  });
  const exitedEarly = (): void => {
    for (const { child, logPath } of children)
      if (child.exitCode !== null) throw new Error(`processor exited ${child.exitCode}; see ${logPath}`);
  };
  /** Each process's peaks, remembered while it lives (a stopped process reads 0); at every poll. */
  const samplePeaks = (): void => {
    for (const entry of children) {
      entry.peak = Math.max(entry.peak, procStatus(entry.pid, "VmHWM"));
      entry.anonPeak = Math.max(entry.anonPeak, procStatus(entry.pid, "RssAnon"));
    }
  };
  const rss = (field: "VmHWM" | "VmRSS"): number => {
    samplePeaks();
    return children.reduce((total, { pid }) => total + procStatus(pid, field), 0);
  };
  try {
    let startupSeconds = 0;
    for (const entry of children) entry.port = await metricsPortOf(entry.child, entry.logPath);
    // Every process's series, as one text (the label sets of different roles do not overlap); each
    // process's V8 heap and external memory peaks are kept on the way (where its anonymous RSS goes).
    const metrics = async (): Promise<string> => {
      const texts = await Promise.all(
        children.map(async ({ port }) =>
          (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) })).text(),
        ),
      );
      texts.forEach((text, index) => {
        const entry = children[index];
        if (entry === undefined) return;
        entry.heapPeak = Math.max(entry.heapPeak, sum(metricValues(text, "agentops_process_heap_used_bytes")));
        entry.externalPeak = Math.max(entry.externalPeak, sum(metricValues(text, "agentops_process_external_bytes")));
      });
      return texts.join("\n");
    };
    for (const { port } of children)
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200, 120_000);
    startupSeconds = (performance.now() - started) / 1000;
    log(`processor: healthy after ${startupSeconds.toFixed(1)} s on :${children.map(({ port }) => port).join(", :")}`);

    let lastPublished = -1;
    let lastProgress = 0;
    let maxLag = 0;
    let seconds = 0;
    let engineFacts = 0;
    let cpuAtQuiescence: { roles: string; seconds: number }[] = [];
    let brokerCpuSeconds: number | undefined;
    for (;;) {
      exitedEarly();
      samplePeaks();
      if (performance.now() - started > PROCESSOR_TIMEOUT_MS)
        throw new Error(`processor not quiescent after ${PROCESSOR_TIMEOUT_MS / 60_000} min; see ${OUT}`);
      const text = await metrics();
      const ingest = sum(metricValues(text, "agentops_records_processed_total", { processor: "ingest" }));
      const engine = sum(metricValues(text, "agentops_records_processed_total", { processor: "engine" }));
      const monitor = sum(metricValues(text, "agentops_records_processed_total", { processor: "run-monitor" }));
      const lags = metricValues(text, "agentops_consumer_lag");
      const engineLag = sum(metricValues(text, "agentops_consumer_lag", { processor: "engine" }));
      const published = sum(metricValues(text, "agentops_results_published_total"));
      maxLag = Math.max(maxLag, sum(lags));
      engineFacts = await topicRecordCount(kafka, topics.engineFacts);
      const elapsed = (performance.now() - started) / 1000;
      if (elapsed - lastProgress >= 5) {
        lastProgress = elapsed;
        log(
          `processor: ${elapsed.toFixed(0)} s: ingest ${ingest.toLocaleString("en-US")}/${facts.toLocaleString("en-US")}, engine ${engine.toLocaleString("en-US")}/${engineFacts.toLocaleString("en-US")} (lag ${engineLag}), run monitor ${monitor.toLocaleString("en-US")}/${agentEvents.toLocaleString("en-US")}, results published ${published.toLocaleString("en-US")}, RSS ${mib(rss("VmRSS"))}`,
        );
      }
      // The engine's input is compacted (exact redeliveries collapse), so its processed count can end
      // below the topic's offset count: caught up means lag 0 after having read something.
      const caughtUp =
        ingest >= facts && monitor >= agentEvents && engine > 0 && engineLag === 0 && lags.every((lag) => lag === 0);
      if (caughtUp && published === lastPublished) break;
      // The time of the first poll at which everything was processed; confirmed by one more poll.
      if (caughtUp) {
        seconds = (performance.now() - started) / 1000;
        cpuAtQuiescence = children.map(({ roles, pid }) => ({ roles, seconds: cpuSeconds(pid) ?? Number.NaN }));
        brokerCpuSeconds =
          broker === undefined || brokerCpuBefore === undefined
            ? undefined
            : (cpuSeconds(broker) ?? Number.NaN) - brokerCpuBefore;
      }
      lastPublished = caughtUp ? published : -1;
      await sleep(caughtUp ? 2_000 : 500);
    }
    const peakRssBytes = rss("VmHWM");
    const resultsPublished = sum(metricValues(await metrics(), "agentops_results_published_total"));
    log(
      `processor: quiescent after ${seconds.toFixed(1)} s: ${rate(facts, seconds)} facts (${rate(facts + agentEvents, seconds)} records), peak RSS ${mib(peakRssBytes)}, ${resultsPublished.toLocaleString("en-US")} result upserts`,
    );
    for (const { roles, anonPeak, heapPeak, externalPeak } of children)
      log(
        `processor ${roles}: peak anonymous RSS ${mib(anonPeak)}, peak V8 heap used ${mib(heapPeak)}, peak external ${mib(externalPeak)}`,
      );
    log(
      `processor CPU start → quiescent: ${cpuAtQuiescence.map(({ roles, seconds: cpu }) => `${roles} ${cpu.toFixed(1)} s`).join(", ")}${brokerCpuSeconds === undefined ? "" : `, broker ${brokerCpuSeconds.toFixed(1)} s`}`,
    );
    const probeLatenciesMs = await probeLatency(kafka, topics);
    const peakRssBytesAfterProbes = Math.max(peakRssBytes, rss("VmHWM"));
    const engineIndex = PROCESS_ROLES.findIndex((roles) => roles === "engine");
    const engineEntry = children[engineIndex];
    const restart =
      engineEntry === undefined
        ? undefined
        : await restartEngine(engineEntry, () => spawnProcessor("engine", engineIndex, "-restart"));
    return {
      seconds,
      startupSeconds,
      peakRssBytes: peakRssBytesAfterProbes,
      peakRssByRoles: children.map(({ roles, peak }) => ({ roles, bytes: peak })),
      peakAnonByRoles: children.map(({ roles, anonPeak }) => ({ roles, bytes: anonPeak })),
      cpuByRoles: cpuAtQuiescence,
      brokerCpuSeconds,
      resultsPublished,
      probeLatenciesMs,
      engineFacts,
      maxLag,
      restart,
    };
  } finally {
    await Promise.all(children.map(({ child }) => stop(child)));
    for (const { stateDir } of children) rmSync(stateDir, { recursive: true, force: true });
  }
}

/**
 * The engine process stopped cleanly and started again over its state directory, as a rolling
 * upgrade does: the time until it is live, and what it read (the engine-facts records after its
 * checkpoint; the results topic records its published-results store read).
 */
async function restartEngine(
  entry: { child: ReturnType<typeof spawn>; logPath: string },
  spawnAgain: () => { child: ReturnType<typeof spawn>; logPath: string },
): Promise<EngineRestart> {
  await stop(entry.child);
  const started = performance.now();
  const again = spawnAgain();
  try {
    const lines = (): Record<string, unknown>[] =>
      readFileSync(again.logPath, "utf8")
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    let liveSeconds = 0;
    await waitUntil(async () => {
      if (again.child.exitCode !== null)
        throw new Error(`restarted engine exited ${again.child.exitCode}; see ${again.logPath}`);
      if (!lines().some((line) => line["stage"] === "live")) return false;
      liveSeconds = (performance.now() - started) / 1000;
      return true;
    }, 300_000);
    const logged = lines();
    const store = logged.find((line) => line["msg"] === "store restored" && line["store"] === "published-results");
    const resumed = logged.find((line) => line["stage"] === "resume");
    const sourceRecords =
      resumed === undefined
        ? "no local checkpoint"
        : (BigInt(String(resumed["end"])) - BigInt(String(resumed["offset"]))).toString();
    const restart = {
      liveSeconds,
      sourceRecords,
      resultsRead: Number(store?.["records"] ?? Number.NaN),
      resultsSeconds: Number(store?.["seconds"] ?? Number.NaN),
      resultsHeld: Number(store?.["held"] ?? Number.NaN),
    };
    log(
      `engine restart: live ${liveSeconds.toFixed(2)} s after spawn; engine-facts records after the checkpoint ${restart.sourceRecords}; results topic records read ${restart.resultsRead} in ${restart.resultsSeconds} s (${restart.resultsHeld} keys held)`,
    );
    return restart;
  } finally {
    await stop(again.child);
  }
}

/**
 * End-to-end latency once idle: a new terminal Delivery in a window no other fact touches, timed
 * from `send` to the arrival of that window's delivery-terminal-outcome-rate result.
 */
async function probeLatency(kafka: Kafka, topics: TopicNames): Promise<number[]> {
  const serde = new AvroTopicSerde(createSchemaRegistry(REGISTRY_URL));
  const arrived = new Map<string, number>();
  const consumer = kafka.consumer({ groupId: `bench-probe-${Date.now().toString(36)}`, maxWaitTimeInMs: 50 });
  await consumer.connect();
  await consumer.subscribe({ topic: topics.results, fromBeginning: false });
  let joined = false;
  consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
  await consumer.run({
    eachMessage: async ({ message }) => {
      const key = message.key?.toString("utf8") ?? "";
      if (key.includes("delivery-terminal-outcome-rate") && key.includes('"start":"2031-')) {
        const start = /"start":"(2031-[^"]+)"/.exec(key)?.[1];
        if (start !== undefined && !arrived.has(start)) arrived.set(start, performance.now());
      }
    },
  });
  await waitUntil(async () => joined, 60_000);
  await sleep(2_000); // the new group's fetch position is set before the first probe
  const producer = orderedProducer(kafka);
  await producer.connect();
  const latencies: number[] = [];
  try {
    for (let index = 1; index <= PROBES; index += 1) {
      const day = `2031-01-${String(index).padStart(2, "0")}`;
      const parsed = parseFactJson(
        JSON.stringify({
          contract: "agentops.observation@1.0.0",
          type: "delivery_summary",
          fact_id: `bench-probe-${Date.now()}-${index}`,
          event_time: `${day}T12:00:00.000Z`,
          provenance: { basis: "DIRECT_HOST", source: "bench" },
          delivery_id: `bench-probe-${index}`,
          status: "TERMINAL",
          outcome: "SUCCEEDED",
          requirement_changed: false,
        }),
      );
      if (!parsed.ok) throw new Error(parsed.rejection.detail);
      const value = await serde.encodeFact(parsed.fact);
      const sent = performance.now();
      await producer.send({ topic: topics.facts, messages: [{ key: parsed.fact.fact_id, value }] });
      const windowStart = `${day}T00:00:00.000Z`;
      await waitUntil(async () => arrived.has(windowStart), 60_000);
      latencies.push((arrived.get(windowStart) ?? sent) - sent);
      log(`probe ${index}: ${latencies.at(-1)?.toFixed(0)} ms from send to its result on ${topics.results}`);
      await sleep(500);
    }
  } finally {
    await producer.disconnect();
    await consumer.disconnect();
  }
  return latencies;
}

mkdirSync(OUT, { recursive: true });
const date = execFileSync("date", ["-u"], { encoding: "utf8" }).trim();
const loadBefore = loadavg();
const nodeVersion = execFileSync(NODE, ["--version"], { encoding: "utf8" }).trim();
const input = await ensureWorkload(FACTS, log);
const kafka = createKafka({ brokers: BROKERS, clientId: "bench-kafka" });
const prefix = `bench.${Date.now().toString(36)}`;
const topics = topicNames(prefix);
const admin = kafka.admin();
await admin.connect();
log(`created ${(await ensureTopics(admin, prefix)).length} topics under ${prefix}`);
await admin.disconnect();

try {
  const produced = await produce(kafka, topics, prefix, input, log);
  const raw = await rawConsume(kafka, topics.facts, produced.facts);
  const processor = await runProcessor(kafka, topics, prefix, produced.facts, produced.agentEvents);
  const loadAfter = loadavg();
  const rawRate = produced.facts / raw.seconds;
  const processorRate = produced.facts / processor.seconds;
  const ratio = processorRate / rawRate;
  const lines = workloadLineCount(input);
  const section = [
    HEADING,
    "",
    `- Date: ${date} (\`date -u\`)`,
    `- Machine: ${cpus().length} cores (\`nproc\` = ${execFileSync("nproc", { encoding: "utf8" }).trim()}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, node ${nodeVersion}; Kafka 4.4.0 (one KRaft node, ops/services.sh) and Apicurio 3.3.3 on the same cores, shared with other engineers' jobs (load average 1/5/15 min: ${loadBefore.map((value) => value.toFixed(1)).join(" / ")} before, ${loadAfter.map((value) => value.toFixed(1)).join(" / ")} after).`,
    `- Command: \`npm run bench:kafka${argv.length === 0 ? "" : ` -- ${argv.join(" ")}`}\` (= \`node bench/kafka.bench.ts\`)`,
    `- Workload: \`agentops generate --facts ${FACTS} --seed ${DEFAULT_SEED}\` (${lines.toLocaleString("en-US")} lines; invalid lines are not sent by \`produce\`): ${produced.facts.toLocaleString("en-US")} metric facts on the 3-partition facts topic, ${produced.agentEvents.toLocaleString("en-US")} agent events on the agent-events topic.`,
    "",
    "| measurement | result |",
    "|---|---|",
    `| produce (\`agentops produce --batch 2000\`, one idempotent producer, Avro via the registry) | ${(produced.facts + produced.agentEvents).toLocaleString("en-US")} records in ${produced.seconds.toFixed(1)} s = **${rate(produced.facts + produced.agentEvents, produced.seconds)}** |`,
    `| raw consumption: one kafkajs consumer, registry decode only, facts topic | ${produced.facts.toLocaleString("en-US")} facts in ${raw.seconds.toFixed(1)} s (incl. ${raw.joinSeconds.toFixed(1)} s group join) = **${rate(produced.facts, raw.seconds)}** |`,
    `| full processor: ${engineProcess ? "two `agentops run` processes (`--roles ingest,run-monitor` and `--roles engine`)" : "one `agentops run` (ingest + engine + run monitor)"}, start → quiescent | ${produced.facts.toLocaleString("en-US")} facts + ${produced.agentEvents.toLocaleString("en-US")} agent events in ${processor.seconds.toFixed(1)} s (healthy after ${processor.startupSeconds.toFixed(1)} s) = **${rate(produced.facts, processor.seconds)} facts** (${rate(produced.facts + produced.agentEvents, processor.seconds)} records) |`,
    `| processor / raw consumption | **${ratio.toFixed(2)}** (target ≥ 0.5: **${ratio >= 0.5 ? "met" : "missed"}**) |`,
    `| end-to-end lag of the backlog (last fact already produced when the processor starts) | ${processor.seconds.toFixed(1)} s; max summed consumer lag seen on /metrics ${processor.maxLag.toLocaleString("en-US")} records |`,
    `| end-to-end latency once idle (new fact: send → its result on the results topic), ${PROBES} probes | median **${median(processor.probeLatenciesMs).toFixed(0)} ms**, max ${Math.max(...processor.probeLatenciesMs).toFixed(0)} ms |`,
    `| processor peak RSS (/proc/<pid>/status VmHWM${engineProcess ? ", both processes summed" : ""}) | **${mib(processor.peakRssBytes)}** (${processor.peakRssByRoles.map(({ roles, bytes }) => `${roles}: ${mib(bytes)}`).join(", ")}${process.env.BENCH_ENGINE_NODE_FLAGS === undefined ? "" : `; engine process node flags \`${process.env.BENCH_ENGINE_NODE_FLAGS}\``}) |`,
    `| processor peak anonymous RSS (RssAnon, sampled every 0.5 s; the mapped state store's pages are not in it) | ${processor.peakAnonByRoles.map(({ roles, bytes }) => `${roles}: **${mib(bytes)}**`).join(", ")} |`,
    `| CPU from start to quiescent (user + system, /proc/<pid>/stat), and per metric fact | ${[...processor.cpuByRoles.map(({ roles, seconds }) => `${roles}: ${seconds.toFixed(1)} s (${((seconds / produced.facts) * 1e6).toFixed(0)} µs)`), ...(processor.brokerCpuSeconds === undefined ? [] : [`broker: ${processor.brokerCpuSeconds.toFixed(1)} s (${((processor.brokerCpuSeconds / produced.facts) * 1e6).toFixed(0)} µs)`])].join(", ")} |`,
    `| engine input (engine-facts topic) / result upserts written | ${processor.engineFacts.toLocaleString("en-US")} records / ${processor.resultsPublished.toLocaleString("en-US")} |`,
    ...(processor.restart === undefined
      ? []
      : [
          `| engine process restarted with its state directory (SIGTERM, then a new process): spawn → live | **${processor.restart.liveSeconds.toFixed(2)} s** (node start included); engine-facts records read after its checkpoint: ${processor.restart.sourceRecords}; results topic records read by the published-results store: ${processor.restart.resultsRead.toLocaleString("en-US")} in ${processor.restart.resultsSeconds} s (${processor.restart.resultsHeld.toLocaleString("en-US")} keys held) |`,
        ]),
    "",
    "Quiescent = every record of the facts and agent-events topics processed (`agentops_records_processed_total`), the engine's processed count at the engine-facts topic's end with lag 0, every lag gauge 0, and `agentops_results_published_total` unchanged over a further 2 s poll; the time is that of the first poll at which all held (polled every 0.5 s). Raw consumption and the processor each run alone (not concurrently), one after the other, on the topics produced once.",
    "",
  ].join("\n");
  process.stdout.write(`${section}\n`);
  if (writeResults) {
    writeResultsSection(HEADING, section);
    log(`wrote section to ${RESULTS}`);
  }
} finally {
  if (!keepTopics) {
    const deleted = await deletePrefixedTopics(kafka, prefix, log);
    log(`deleted ${deleted} bench topics`);
  }
}
