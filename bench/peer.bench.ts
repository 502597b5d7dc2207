/**
 * Kafka Streams comparison of issue #13 (`npm run bench:peer`) on the local broker and registry:
 *   0. the workload of bench:kafka (`agentops generate --facts N --seed 42`, reused from bench/out/);
 *   1. produced with `agentops produce`, then `agentops run --roles ingest` until every fact is
 *      ingested, so the engine-facts topic holds the engine's input (binary layout, one partition);
 *   2. in one sitting, alternating, R times each over that same topic:
 *      - our engine stage alone (`agentops run --roles engine`, a fresh group and no local state,
 *        all 14 metrics): spawn → quiescent, with the restore path it took (a rebuild, or the
 *        contributions log the runs before it wrote, then the facts) and its phases from its log;
 *      - the Kafka Streams peer (bench/peer, built with Maven from Maven Central; a fresh
 *        application id and state directory; 2 metrics): spawn → its results for the whole topic
 *        forwarded;
 *      - with --baseline-jar, another build of the peer (an earlier bench/peer, for before/after
 *        rows in one sitting), timed the same way, its results not compared;
 *      records/s of the engine-facts topic, CPU seconds (utime + stime), peak RSS (VmHWM) and
 *      peak anonymous RSS (RssAnon, polled) of each process;
 *   3. the two metrics the peer keeps (operational-token-usage, direct-evidence-basis-rate),
 *      compared key by key: our results topic (Avro) against the peer's (JSON). Any key that
 *      differs or exists on one side only fails the bench (exit code 1, nothing written).
 * Writes the section "Kafka Streams peer (issue #13)" of bench/RESULTS.md.
 *
 *   node_modules/.bin/node bench/peer.bench.ts [--facts 200000] [--runs 3] [--baseline-jar <jar>] [--no-write] [--keep-topics]
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { isDeepStrictEqual } from "node:util";
import type { Kafka } from "kafkajs";
import { topicRecordCount } from "../src/kafka/read-topic.ts";
import { SUM_PAST_SAFE_INTEGER } from "../src/metrics/exact-sum.ts";
import { shippedCatalog } from "../src/catalog/metric-definitions.ts";
import { createKafka } from "../src/kafka/client.ts";
import { resolveBrokers, resolveSchemaRegistryUrl } from "../src/kafka/connection-addresses.ts";
import { ensureTopics } from "../src/kafka/ensure-topics.ts";
import { createSchemaRegistry } from "../src/kafka/registry.ts";
import { createTopicsWithLeaders } from "../src/kafka/topic-admin.ts";
import { AvroTopicSerde } from "../src/kafka/serde/avro-serde.ts";
import { DEFAULT_ENGINE_CONFIG } from "../src/metrics/engine-config.ts";
import { topicNames, type TopicNames } from "../src/stream/topic-names.ts";
import { DEFAULT_SEED } from "../src/workload/workload.ts";
import {
  agentops,
  benchLog,
  cpuSeconds,
  deletePrefixedTopics,
  ensureWorkload,
  median,
  metricsPortOf,
  metricValues,
  mib,
  OUT,
  procStatus,
  produce,
  rate,
  ROOT,
  sleep,
  stop,
  sum,
} from "./kafka-harness.ts";
import { publishResultsSection } from "./results-section.ts";

const HEADING = "## Kafka Streams peer (issue #13)";
const BROKERS = resolveBrokers(undefined).value;
const REGISTRY_URL = resolveSchemaRegistryUrl(undefined).value;
const PEER_DIR = `${ROOT}bench/peer/`;
const PEER_JAR = `${PEER_DIR}target/agentops-peer.jar`;
/**
 * The peer's heap is bounded as one would deploy it: its state is in RocksDB off the heap, and with
 * the JVM's default (a quarter of RAM) G1 lets garbage grow the heap to gigabytes before collecting.
 */
const PEER_JVM_FLAGS = (process.env.PEER_JAVA_OPTS ?? "-Xmx384m").split(/\s+/).filter((word) => word !== "");
const RUN_TIMEOUT_MS = 20 * 60_000;
/** The metrics the peer keeps; the comparison reads only these from our results. */
const PEER_METRICS: readonly string[] = ["operational-token-usage", "direct-evidence-basis-rate"];

const argv = process.argv.slice(2);
const option = (name: string, fallback: number): number =>
  argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback;
const FACTS = option("--facts", 200_000);
const RUNS = option("--runs", 3);
const writeResults = !argv.includes("--no-write");
const keepTopics = argv.includes("--keep-topics");
const BASELINE_JAR = argv.includes("--baseline-jar") ? argv[argv.indexOf("--baseline-jar") + 1] : undefined;
const log = benchLog("bench:peer");

/** How an engine run restored (every run is a new member without local state), from its log lines. */
interface EngineRestore {
  /** `rebuild`: no contributions log yet, every fact evaluated; `log`: the log loaded, then the facts before its marker. */
  readonly path: "rebuild" | "log";
  readonly logRecords: number;
  readonly logSeconds: number;
  /** Reading engine-facts from 0 to the end at assignment (loading or evaluating). */
  readonly replaySeconds: number;
  readonly peakRssAnonBytes: number;
}

interface StageRun {
  readonly seconds: number;
  /** From the first record to the last one processed (the peer says; our engine's is not separable). */
  readonly processingSeconds: number | undefined;
  readonly peakRssBytes: number;
  readonly peakRssAnonBytes: number;
  /** utime + stime of the process at the end of the run (all its threads; the JVM's GC and RocksDB's included). */
  readonly cpuSeconds: number;
}

/** A build of the Kafka Streams peer, with the compacted topic it writes its results to. */
interface Peer {
  readonly label: string;
  readonly jar: string;
  readonly results: string;
}

/** A child's /metrics text; undefined when a scrape fails (a reset under load), to be polled again. */
async function scrape(port: number): Promise<string | undefined> {
  try {
    return await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  } catch (error) {
    log(`scrape of :${port} failed (${String(error)}); polling again`);
    await sleep(500);
    return undefined;
  }
}

/** Builds the peer with Maven unless its jar is newer than every source and the pom. */
function buildPeer(): void {
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? sources(`${dir}${entry.name}/`) : [`${dir}${entry.name}`],
    );
  const newest = Math.max(
    ...[`${PEER_DIR}pom.xml`, ...sources(`${PEER_DIR}src/`)].map((path) => statSync(path).mtimeMs),
  );
  if (existsSync(PEER_JAR) && statSync(PEER_JAR).mtimeMs >= newest) {
    log(`peer: ${PEER_JAR} is up to date`);
    return;
  }
  log("peer: mvn -q -B package (dependencies from Maven Central on the first build)");
  execFileSync("mvn", ["-q", "-B", "package"], { cwd: PEER_DIR, stdio: "inherit" });
}

/** `agentops run --roles ingest` until every fact is ingested: fills the engine-facts topic. */
async function ingest(prefix: string, facts: number): Promise<void> {
  const logPath = `${OUT}peer-bench-ingest.log`;
  const out = openSync(logPath, "w");
  const child = agentops(
    [
      "run",
      "--roles",
      "ingest",
      "--topic-prefix",
      prefix,
      "--group",
      `${prefix}.ingest`,
      "--metrics-port",
      "0",
      "--instance-id",
      "bench-ingest",
      "--brokers",
      BROKERS.join(","),
      "--schema-registry",
      REGISTRY_URL,
    ],
    out,
  );
  closeSync(out);
  const started = performance.now();
  try {
    const port = await metricsPortOf(child, logPath);
    for (;;) {
      if (child.exitCode !== null) throw new Error(`ingest exited ${child.exitCode}; see ${logPath}`);
      if (performance.now() - started > RUN_TIMEOUT_MS)
        throw new Error(`ingest not done after ${RUN_TIMEOUT_MS / 60_000} min; see ${logPath}`);
      const text = await scrape(port);
      if (text === undefined) continue;
      const ingested = sum(metricValues(text, "agentops_records_processed_total", { processor: "ingest" }));
      if (ingested >= facts) break;
      log(`ingest: ${ingested.toLocaleString("en-US")} / ${facts.toLocaleString("en-US")}`);
      await sleep(5_000);
    }
    log(`ingest: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await stop(child);
  }
  // The producer of the engine-facts records flushes on stop; the topic is complete afterwards.
}

/** Our engine stage alone over the engine-facts topic: spawn → rebuilt, live (results reconciled), lag 0, results no longer changing. */
/** The restore phases an engine run's JSON log lines name (kafka-member.ts: log-load-end, restore-end). */
function engineRestore(logPath: string, peakRssAnonBytes: number): EngineRestore {
  const lines = readFileSync(logPath, "utf8")
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map(
      (line) => JSON.parse(line) as { stage?: string; processor?: string; records?: number | string; seconds?: number },
    );
  const logLoaded = lines.find((line) => line.stage === "log-load-end");
  const replayed = lines.find(
    (line) => line.stage === "restore-end" && line.processor === "engine" && typeof line.records === "string",
  );
  const logRecords = Number(logLoaded?.records ?? 0);
  return {
    path: logRecords > 0 ? "log" : "rebuild",
    logRecords,
    logSeconds: logLoaded?.seconds ?? 0,
    replaySeconds: replayed?.seconds ?? Number.NaN,
    peakRssAnonBytes,
  };
}

async function runEngine(prefix: string, run: number): Promise<StageRun & { readonly restore: EngineRestore }> {
  const logPath = `${OUT}peer-bench-engine-${run}.log`;
  const out = openSync(logPath, "w");
  const started = performance.now();
  const child = agentops(
    [
      "run",
      "--roles",
      "engine",
      "--topic-prefix",
      prefix,
      "--group",
      `${prefix}.engine-${run}`,
      "--metrics-port",
      "0",
      "--instance-id",
      `bench-engine-${run}`,
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
    let lastPublished = -1;
    let seconds = 0;
    let lastProgress = 0;
    let peakRssAnonBytes = 0;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`engine exited ${child.exitCode}; see ${logPath}`);
      peakRssAnonBytes = Math.max(peakRssAnonBytes, procStatus(pid, "RssAnon"));
      if (performance.now() - started > RUN_TIMEOUT_MS)
        throw new Error(`engine not quiescent after ${RUN_TIMEOUT_MS / 60_000} min; see ${logPath}`);
      const text = await scrape(port);
      if (text === undefined) continue;
      const engine = sum(metricValues(text, "agentops_records_processed_total", { processor: "engine" }));
      const lag = sum(metricValues(text, "agentops_consumer_lag", { processor: "engine" }));
      const published = sum(metricValues(text, "agentops_results_published_total"));
      const elapsed = (performance.now() - started) / 1000;
      if (elapsed - lastProgress >= 10) {
        lastProgress = elapsed;
        log(
          `engine run ${run}: ${elapsed.toFixed(0)} s: ${engine.toLocaleString("en-US")} processed, lag ${lag}, ${published.toLocaleString("en-US")} results, RSS ${mib(procStatus(pid, "VmRSS"))}`,
        );
      }
      // Lag 0 comes at the end of the rebuild, before the results are reconciled: done means live too.
      const caughtUp = engine > 0 && lag === 0 && readFileSync(logPath, "utf8").includes('"stage":"live"');
      if (caughtUp && published === lastPublished) break;
      if (caughtUp) seconds = (performance.now() - started) / 1000;
      lastPublished = caughtUp ? published : -1;
      await sleep(caughtUp ? 2_000 : 500);
    }
    const peakRssBytes = procStatus(pid, "VmHWM");
    const cpu = cpuSeconds(pid) ?? Number.NaN;
    const restore = engineRestore(logPath, peakRssAnonBytes);
    log(
      `engine run ${run}: quiescent after ${seconds.toFixed(1)} s (${restore.path}: log ${restore.logRecords.toLocaleString("en-US")} records in ${restore.logSeconds.toFixed(1)} s, engine-facts replayed in ${restore.replaySeconds.toFixed(1)} s), peak RSS ${mib(peakRssBytes)}, peak RssAnon ${mib(peakRssAnonBytes)}`,
    );
    return { seconds, processingSeconds: undefined, peakRssBytes, peakRssAnonBytes, cpuSeconds: cpu, restore };
  } finally {
    await stop(child);
  }
}

interface PeerEvent {
  readonly event: string;
  readonly sinceFirstRecordMs: number;
  readonly records: number;
  readonly redeliveries: number;
  readonly unreadable: number;
}

/** The peer over the same topic: spawn → the first punctuation after its last offset (every changed group forwarded). */
async function runPeer(
  topics: TopicNames,
  peer: Peer,
  lastOffset: number,
  run: number,
): Promise<StageRun & { readonly done: PeerEvent }> {
  const applicationId = `${peer.results}.app-${run}-${Date.now().toString(36)}`;
  const stateDir = `${OUT}peer-state/${applicationId}`;
  const properties = `${OUT}peer-${run}.properties`;
  const catalog = shippedCatalog();
  // Properties files read ISO 8859-1 with \uXXXX escapes: the texts here hold "−" and may hold more.
  const escape = (text: string): string =>
    text
      .replace(/\\/g, "\\\\")
      .replace(/\n/g, "\\n")
      .replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
  const lines = [
    `bootstrap.servers=${BROKERS.join(",")}`,
    `application.id=${applicationId}`,
    `state.dir=${stateDir}`,
    `input.topic=${topics.engineFacts}`,
    `output.topic=${peer.results}`,
    `input.last.offset=${lastOffset}`,
    `catalog=${catalog.catalogRevision}`,
    `window.millis=${DEFAULT_ENGINE_CONFIG.windowMillis}`,
    `coverage.threshold.hundredths=${DEFAULT_ENGINE_CONFIG.coverageThresholdHundredths}`,
    `na.sum.past.safe.integer=${escape(SUM_PAST_SAFE_INTEGER)}`,
  ];
  for (const metricId of PEER_METRICS) {
    const definition = catalog.metrics.get(metricId as Parameters<typeof catalog.metrics.get>[0]);
    if (definition === undefined) throw new Error(`no catalog definition for ${metricId}`);
    // `missing` is read by earlier builds of the peer only (--baseline-jar); the current one builds na_reason from counts.
    lines.push(
      `metric.${metricId}.version=${escape(definition.version)}`,
      `metric.${metricId}.unit=${escape(definition.unit)}`,
      `metric.${metricId}.missing=${escape(definition.missing)}`,
      `metric.${metricId}.minimum.sample=${definition.minimumSample}`,
    );
  }
  writeFileSync(properties, `${lines.join("\n")}\n`);
  const logPath = `${OUT}peer-bench-${peer.label}-${run}.log`;
  const out = openSync(logPath, "w");
  const started = performance.now();
  const child: ChildProcess = spawn("java", [...PEER_JVM_FLAGS, "-jar", peer.jar, properties], {
    cwd: PEER_DIR,
    stdio: ["ignore", "pipe", out],
  });
  closeSync(out);
  const pid = child.pid ?? 0;
  let buffered = "";
  let done: PeerEvent | undefined;
  let doneAt = 0;
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!line.startsWith("{")) continue;
      const event = JSON.parse(line) as PeerEvent;
      if (event.event === "progress" || event.event === "caught-up")
        log(
          `${peer.label} run ${run}: ${event.event} at ${event.records.toLocaleString("en-US")} records, RSS ${mib(procStatus(pid, "VmRSS"))}`,
        );
      if (event.event === "results-emitted" && done === undefined) {
        done = event;
        doneAt = performance.now();
      }
    }
  });
  let peakRssAnonBytes = 0;
  try {
    while (done === undefined) {
      if (child.exitCode !== null) throw new Error(`${peer.label} exited ${child.exitCode}; see ${logPath}`);
      if (performance.now() - started > RUN_TIMEOUT_MS)
        throw new Error(`${peer.label} not caught up after ${RUN_TIMEOUT_MS / 60_000} min; see ${logPath}`);
      peakRssAnonBytes = Math.max(peakRssAnonBytes, procStatus(pid, "RssAnon"));
      await sleep(100);
    }
    const peakRssBytes = procStatus(pid, "VmHWM");
    const cpu = cpuSeconds(pid) ?? Number.NaN;
    const seconds = (doneAt - started) / 1000;
    log(
      `${peer.label} run ${run}: results forwarded after ${seconds.toFixed(1)} s (${(done.sinceFirstRecordMs / 1000).toFixed(1)} s from its first record), CPU ${cpu.toFixed(1)} s, peak RSS ${mib(peakRssBytes)}, peak RssAnon ${mib(peakRssAnonBytes)}`,
    );
    return {
      seconds,
      processingSeconds: done.sinceFirstRecordMs / 1000,
      peakRssBytes,
      peakRssAnonBytes,
      cpuSeconds: cpu,
      done,
    };
  } finally {
    // SIGTERM runs the peer's shutdown hook: KafkaStreams.close() flushes its producer and commits.
    const code = await stop(child);
    if (code !== 0 && code !== 143) log(`${peer.label} run ${run}: exited ${code}; see ${logPath}`);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** Every record of a topic, in offset order per partition, read to the high watermarks seen at the start. */
async function readTopic(
  kafka: Kafka,
  topic: string,
  onRecord: (key: string, value: Buffer | null) => Promise<void>,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map(
    (await admin.fetchTopicOffsets(topic)).map((partition) => [partition.partition, Number(partition.high)]),
  );
  await admin.disconnect();
  const remaining = new Set([...ends].filter(([, high]) => high > 0).map(([partition]) => partition));
  if (remaining.size === 0) return;
  const consumer = kafka.consumer({ groupId: `bench-peer-read-${Date.now().toString(36)}`, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) {
            await onRecord(message.key?.toString("utf8") ?? "", message.value);
            if (Number(message.offset) + 1 >= (ends.get(batch.partition) ?? 0)) remaining.delete(batch.partition);
          }
          if (remaining.size === 0) resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
}

interface Comparison {
  readonly ours: number;
  readonly peer: number;
  readonly matching: number;
  readonly differing: string[];
  readonly onlyOurs: string[];
  readonly onlyPeer: string[];
  /** Both sides of the first keys that differ or exist on one side only, to print. */
  readonly examples: string[];
}

/** Our latest result per key of the two metrics against the peer's, as parsed JSON (numbers compared as numbers). */
async function compare(kafka: Kafka, topics: TopicNames, peerResults: string): Promise<Comparison> {
  const serde = new AvroTopicSerde(createSchemaRegistry(REGISTRY_URL));
  const ours = new Map<string, unknown>();
  await readTopic(kafka, topics.results, async (key, value) => {
    if (value === null) ours.delete(key);
    else {
      const result = await serde.decodeResult(value);
      // The Avro round trip gives plain objects; compare as JSON values.
      if (PEER_METRICS.includes(result.metric_id)) ours.set(key, JSON.parse(JSON.stringify(result)));
    }
  });
  const peer = new Map<string, unknown>();
  await readTopic(kafka, peerResults, async (key, value) => {
    if (value === null) peer.delete(key);
    else peer.set(key, JSON.parse(value.toString("utf8")));
  });
  const differing: string[] = [];
  let matching = 0;
  for (const [key, result] of ours) {
    if (!peer.has(key)) continue;
    if (isDeepStrictEqual(result, peer.get(key))) matching += 1;
    else differing.push(key);
  }
  const onlyOurs = [...ours.keys()].filter((key) => !peer.has(key));
  const onlyPeer = [...peer.keys()].filter((key) => !ours.has(key));
  const examples = [...differing, ...onlyOurs, ...onlyPeer]
    .slice(0, 3)
    .map(
      (key) =>
        `${key}\n    ours: ${JSON.stringify(ours.get(key) ?? null)}\n    peer: ${JSON.stringify(peer.get(key) ?? null)}`,
    );
  return { ours: ours.size, peer: peer.size, matching, differing, onlyOurs, onlyPeer, examples };
}

const range = (values: readonly number[], format: (value: number) => string): string =>
  `${format(Math.min(...values))}–${format(Math.max(...values))}`;
const list = (values: readonly number[], format: (value: number) => string): string => values.map(format).join(", ");
const seconds1 = (value: number): string => value.toFixed(1);
const thousands = (value: number): string => `${(value / 1000).toFixed(1)}k`;
const inMib = (bytes: number): string => (bytes / 1_048_576).toFixed(0);

/** One row of the side-by-side table: records/s median (range over runs), seconds, CPU seconds, peak RSS and RssAnon per run. */
function row(label: string, records: number, runs: readonly StageRun[]): string {
  const rates = runs.map((run) => records / run.seconds);
  return `| ${label} | **${thousands(median(rates))}** (${range(rates, thousands)}) | ${list(
    runs.map((run) => run.seconds),
    seconds1,
  )} | ${list(
    runs.map((run) => run.cpuSeconds),
    (value) => value.toFixed(0),
  )} | ${list(
    runs.map((run) => run.peakRssBytes),
    inMib,
  )} (${list(
    runs.map((run) => run.peakRssAnonBytes),
    inMib,
  )}) |`;
}

mkdirSync(`${OUT}peer-state`, { recursive: true });
const date = execFileSync("date", ["-u"], { encoding: "utf8" }).trim();
const loadBefore = loadavg();
// `java -version` writes to stderr.
const javaVersion = spawnSync("java", ["-version"], { encoding: "utf8" }).stderr.trim();
buildPeer();
if (BASELINE_JAR !== undefined && !existsSync(BASELINE_JAR))
  throw new Error(`--baseline-jar ${BASELINE_JAR}: no such file`);
const input = await ensureWorkload(FACTS, log);
const kafka = createKafka({ brokers: BROKERS, clientId: "bench-peer" });
const prefix = `bench.${Date.now().toString(36)}`;
const topics = topicNames(prefix);
const peer: Peer = { label: "peer", jar: PEER_JAR, results: `${prefix}.peer-results` };
const baseline: Peer | undefined =
  BASELINE_JAR === undefined
    ? undefined
    : { label: "baseline", jar: BASELINE_JAR, results: `${prefix}.baseline-results` };
const peers = baseline === undefined ? [peer] : [peer, baseline];
const admin = kafka.admin();
await admin.connect();
log(`created ${(await ensureTopics(admin, prefix)).length} topics under ${prefix}`);
await createTopicsWithLeaders(
  admin,
  peers.map((each) => ({
    topic: each.results,
    numPartitions: 1,
    replicationFactor: 1,
    configEntries: [{ name: "cleanup.policy", value: "compact" }],
  })),
);
await admin.disconnect();

try {
  const produced = await produce(kafka, topics, prefix, input, log);
  await ingest(prefix, produced.facts);
  const engineFacts = await topicRecordCount(kafka, topics.engineFacts);
  log(`engine-facts: ${engineFacts.toLocaleString("en-US")} records`);
  const engineRuns: (StageRun & { restore: EngineRestore })[] = [];
  const peerRuns = new Map<Peer, (StageRun & { done: PeerEvent })[]>(peers.map((each) => [each, []]));
  for (let run = 1; run <= RUNS; run += 1) {
    // Rotate which goes first, so none always meets the same moment of the machine's load.
    const order: (Peer | "engine")[] = ["engine", ...peers];
    for (let turn = 0; turn < order.length; turn += 1) {
      const contender = order[(turn + run - 1) % order.length] as Peer | "engine";
      if (contender === "engine") engineRuns.push(await runEngine(prefix, run));
      else peerRuns.get(contender)?.push(await runPeer(topics, contender, engineFacts - 1, run));
    }
  }
  const comparison = await compare(kafka, topics, peer.results);
  log(
    `comparison: ${comparison.matching} of ${comparison.ours} keys match; ${comparison.differing.length} differ, ${comparison.onlyOurs.length} only ours, ${comparison.onlyPeer.length} only the peer's`,
  );
  if (comparison.matching !== comparison.ours || comparison.ours !== comparison.peer) {
    for (const example of comparison.examples) log(`  mismatch: ${example}`);
    throw new Error(
      `the peer's results differ from the engine's on ${comparison.differing.length + comparison.onlyOurs.length + comparison.onlyPeer.length} keys: nothing written`,
    );
  }
  const loadAfter = loadavg();
  const runsOf = (each: Peer): (StageRun & { done: PeerEvent })[] => peerRuns.get(each) ?? [];
  const engineRate = engineFacts / median(engineRuns.map((run) => run.seconds));
  const peerRate = engineFacts / median(runsOf(peer).map((run) => run.seconds));
  const peerProcessingRate = engineFacts / median(runsOf(peer).map((run) => run.processingSeconds ?? Number.NaN));
  const last = runsOf(peer).at(-1)?.done;
  const commandFlags = [
    ...(FACTS === 200_000 ? [] : [`--facts ${FACTS}`]),
    ...(RUNS === 3 ? [] : [`--runs ${RUNS}`]),
    ...(BASELINE_JAR === undefined ? [] : ["--baseline-jar <jar>"]),
  ];
  const section = [
    HEADING,
    "",
    `- Date: ${date} (\`date -u\`)`,
    `- Machine: ${cpus().length} cores, ${(totalmem() / 1024 ** 3).toFixed(1)} GiB RAM; ${javaVersion.split("\n")[0] ?? "java"}; Kafka 4.4.0 (one KRaft node) and Apicurio on the same cores, **shared with other engineers' jobs**: load average 1/5/15 min ${loadBefore.map((value) => value.toFixed(1)).join(" / ")} before, ${loadAfter.map((value) => value.toFixed(1)).join(" / ")} after. Figures on a loaded 2-core machine are noisy: read the ratio, not the absolute rates.`,
    `- Command: \`npm run bench:peer${commandFlags.length === 0 ? "" : ` -- ${commandFlags.join(" ")}`}\` (= \`node bench/peer.bench.ts\`; the peer's JVM: \`java ${PEER_JVM_FLAGS.join(" ")} -jar\`, set with PEER_JAVA_OPTS); ${RUNS} run${RUNS === 1 ? "" : "s"} of each, in rotating order, medians and ranges quoted.`,
    `- Input: \`agentops generate --facts ${FACTS} --seed ${DEFAULT_SEED}\`, produced and ingested (\`agentops run --roles ingest\`): **${engineFacts.toLocaleString("en-US")} records** on the one-partition engine-facts topic (binary layout), read by all from offset 0.`,
    "- **Not the same work**: the engine computes all 14 metrics; the peer does the ledger (unit identities, redeliveries, re-reports, conflicts), operational-token-usage and direct-evidence-basis-rate.",
    "",
    "| process over the engine-facts topic, spawn → results forwarded | records/s, median (range) | seconds per run | CPU seconds per run | peak RSS per run, MiB (RssAnon) |",
    "|---|---|---|---|---|",
    row(
      "agentops engine stage (`agentops run --roles engine`, **14 metrics**), spawn → quiescent",
      engineFacts,
      engineRuns,
    ),
    row(
      "Kafka Streams peer (bench/peer, **2 metrics**: one store read and write per record, one DSL aggregation with the record cache)",
      engineFacts,
      runsOf(peer),
    ),
    ...(baseline === undefined
      ? []
      : [row(`earlier peer (\`--baseline-jar\`, results not compared)`, engineFacts, runsOf(baseline))]),
    "",
    `engine / peer records/s (medians, spawn → done): **${(engineRate / peerRate).toFixed(2)}**. The peer from its first record to its last: ${rate(engineFacts, engineFacts / peerProcessingRate)} (no JVM start, no group join).`,
    "",
    'Each engine run is a new member without local state: the first rebuilds from offset 0, later ones load the contributions log the runs before them wrote, then the facts before its marker (docs/engine-state.md, "Restart and restore").',
    "",
    "| engine run | path | contributions log: records, seconds | engine-facts replayed, seconds | spawn → quiescent, seconds |",
    "|---:|---|---|---:|---:|",
    ...engineRuns.map(
      (run, index) =>
        `| ${String(index + 1)} | ${run.restore.path} | ${run.restore.logRecords.toLocaleString("en-US")}, ${run.restore.logSeconds.toFixed(1)} | ${run.restore.replaySeconds.toFixed(1)} | ${run.seconds.toFixed(1)} |`,
    ),
    "",
    `Results of the two metrics, key by key (our results topic, Avro, against the peer's results topic, JSON; equal as JSON values): **${comparison.matching.toLocaleString("en-US")} of ${comparison.ours.toLocaleString("en-US")} keys match**, none differs, none on one side only (any would fail the bench). The peer read ${last?.records.toLocaleString("en-US") ?? "?"} records (${last?.redeliveries ?? "?"} redeliveries of a known version, ${last?.unreadable ?? "?"} unreadable).`,
    "",
  ].join("\n");
  publishResultsSection(HEADING, section, writeResults, log);
} finally {
  if (!keepTopics) {
    const deleted = await deletePrefixedTopics(kafka, prefix, log);
    log(`deleted ${deleted} bench topics (the peer's changelog and repartition topics among them)`);
  }
}
