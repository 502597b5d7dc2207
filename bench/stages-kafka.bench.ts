/**
 * Scale-out of the partitioned engine on Kafka (`npm run bench:stages`, issue #13 Part 2): the
 * same workload processed by 1, 2 and 4 `agentops run --engine stages --roles ingest,engine`
 * instances sharing stage topics of P partitions (default 4), each variant on fresh topics:
 *   - facts/s from the instances' start until quiescent (every fact ingested, every stage's lag 0,
 *     the results no longer changing), and from "all healthy" (start-up excluded);
 *   - peak RSS per instance (VmHWM) and CPU seconds per instance and of the broker (its pid from
 *     ops/services.sh), so the split between processors and broker on this machine is visible;
 *   - the results topic's digest, which must be the embedded replay's (the single engine) in
 *     every variant.
 * Writes the section "Partitioned engine on Kafka (scale-out)" of bench/RESULTS.md.
 *
 * A first row runs the single engine (`--engine single`, one instance) in the same pipeline and
 * sitting, as the reference (--no-single skips it).
 *
 *   node_modules/.bin/node bench/stages-kafka.bench.ts [--facts 200000] [--partitions 4] [--instances 1,2,4] [--no-single] [--no-write]
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import type { Kafka } from "kafkajs";
import { createKafka } from "../src/kafka/client.ts";
import { resolveBrokers, resolveSchemaRegistryUrl } from "../src/kafka/connection-addresses.ts";
import { ensureTopics } from "../src/kafka/ensure-topics.ts";
import { createSchemaRegistry } from "../src/kafka/registry.ts";
import { createTopicsWithLeaders } from "../src/kafka/topic-admin.ts";
import { AvroTopicSerde } from "../src/kafka/serde/avro-serde.ts";
import type { MetricResult } from "../src/contract/result-record.ts";
import { resultKey } from "../src/metrics/scope.ts";
import { readLatestResults, resultsDigest } from "../src/stream/audit/topic-results.ts";
import { STAGE_TOPIC_ROLES, topicNames } from "../src/stream/topic-names.ts";
import { DEFAULT_SEED } from "../src/workload/workload.ts";
import {
  agentops,
  benchLog,
  brokerPid,
  CLI_ENV,
  CLI_NODE_FLAGS,
  cpuSeconds,
  deletePrefixedTopics,
  ensureWorkload,
  exited,
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

const HEADING = "## Partitioned engine on Kafka (scale-out)";
const BROKERS = resolveBrokers(undefined).value;
const REGISTRY_URL = resolveSchemaRegistryUrl(undefined).value;
const TIMEOUT_MS = 30 * 60_000;
const STAGES = ["fact-ledger", "domain-ledger", "entities", "aggregation"] as const;

const argv = process.argv.slice(2);
const flag = (name: string, fallback: string): string =>
  argv.includes(name) ? (argv[argv.indexOf(name) + 1] ?? fallback) : fallback;
const FACTS = Number(flag("--facts", "200000"));
const PARTITIONS = Number(flag("--partitions", "4"));
const INSTANCES = flag("--instances", "1,2,4").split(",").map(Number);
const writeResults = !argv.includes("--no-write");
const withSingle = !argv.includes("--no-single");
const log = benchLog("bench:stages");

for (const [name, value] of [
  ["--facts", FACTS],
  ["--partitions", PARTITIONS],
] as const)
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name}: give a positive whole number, got ${String(value)}`);
if (INSTANCES.some((count) => !Number.isInteger(count) || count < 1))
  throw new Error(`--instances: give comma-separated positive whole numbers, e.g. 1,2,4`);

interface Variant {
  /** The engine topology the instances ran (`single`: the reference row, one instance). */
  readonly engine: "single" | "stages";
  readonly instances: number;
  /** Metric facts produced (the workload's lines less agent events and invalid lines). */
  readonly facts: number;
  readonly seconds: number;
  readonly liveSeconds: number;
  readonly peakRss: readonly number[];
  /** Per instance, the greatest anonymous RSS seen at the polls. */
  readonly peakAnonymous: readonly number[];
  readonly cpu: readonly number[];
  readonly brokerCpu: number;
  readonly stageRecords: number;
  /** Records each stage processor read, in `STAGES` order (which hop the stage records are on). */
  readonly stageRecordsByStage: readonly number[];
  readonly digest: string;
  readonly results: number;
}

async function runVariant(
  kafka: Kafka,
  input: string,
  instances: number,
  engine: "single" | "stages" = "stages",
): Promise<Variant> {
  const prefix = `bench.stages.${Date.now().toString(36)}.${engine}.${instances}`;
  const topics = topicNames(prefix);
  const admin = kafka.admin();
  await admin.connect();
  // The engine runs on its topics' partition count: created here with --partitions, the rest from topics.json.
  await createTopicsWithLeaders(
    admin,
    STAGE_TOPIC_ROLES.map((role) => ({
      topic: topics[role],
      numPartitions: PARTITIONS,
      replicationFactor: 1,
      configEntries: [{ name: "cleanup.policy", value: "compact" }],
    })),
  );
  await ensureTopics(admin, prefix);
  await admin.disconnect();
  const produced = await produce(kafka, topics, prefix, input, log);
  const broker = brokerPid();
  const brokerBefore = broker === undefined ? 0 : (cpuSeconds(broker) ?? 0);
  const started = performance.now();
  const children = Array.from({ length: instances }, (_, index) => {
    const logPath = `${OUT}stages-bench-${instances}-${index}.log`;
    const stateDir = `${OUT}stages-bench-state-${instances}-${index}`;
    rmSync(stateDir, { recursive: true, force: true });
    const out = openSync(logPath, "w");
    // BENCH_CPU_PROFILE_DIR=<dir> writes a V8 CPU profile of each instance there when it stops (summarise with bench/engine-profile-summary.ts).
    const profileFlags =
      process.env.BENCH_CPU_PROFILE_DIR === undefined
        ? []
        : ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE_DIR}`];
    // BENCH_PROCESSOR_ARGS adds `agentops run` flags (e.g. --state-cache-mb 16).
    const processorArgs = (process.env.BENCH_PROCESSOR_ARGS ?? "").split(/\s+/).filter((word) => word !== "");
    // BENCH_NODE_FLAGS adds node flags to each instance (after bin/agentops' own, so e.g. --max-old-space-size=384 wins).
    const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? "").split(/\s+/).filter((word) => word !== "");
    const child: ChildProcess = spawn(
      NODE,
      [
        ...CLI_NODE_FLAGS,
        ...nodeFlags,
        ...profileFlags,
        `${ROOT}bin/agentops`,
        "run",
        "--engine",
        engine,
        "--roles",
        "ingest,engine",
        "--topic-prefix",
        prefix,
        "--metrics-port",
        "0",
        "--instance-id",
        `stages-${index}`,
        "--state-dir",
        stateDir,
        "--brokers",
        BROKERS.join(","),
        "--schema-registry",
        REGISTRY_URL,
        ...processorArgs,
      ],
      { cwd: ROOT, env: CLI_ENV, stdio: ["ignore", out, out] },
    );
    closeSync(out);
    return { child, pid: child.pid ?? 0, logPath, stateDir, port: 0, peak: 0, anonymous: 0, cpu: 0 };
  });
  try {
    for (const entry of children) entry.port = await metricsPortOf(entry.child, entry.logPath);
    for (const { port } of children)
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200, 180_000);
    const healthy = performance.now();
    log(`${instances} instance(s): healthy after ${((healthy - started) / 1000).toFixed(1)} s`);
    let lastPublished = -1;
    let seconds = 0;
    let lastProgress = 0;
    let stageRecords = 0;
    let stageRecordsByStage: number[] = [];
    for (;;) {
      for (const entry of children) {
        if (entry.child.exitCode !== null)
          throw new Error(`an instance exited ${String(entry.child.exitCode)}; see ${entry.logPath}`);
        entry.peak = Math.max(entry.peak, procStatus(entry.pid, "VmHWM"));
        entry.anonymous = Math.max(entry.anonymous, procStatus(entry.pid, "RssAnon"));
        entry.cpu = Math.max(entry.cpu, cpuSeconds(entry.pid) ?? 0);
      }
      if (performance.now() - started > TIMEOUT_MS)
        throw new Error(`not quiescent after ${TIMEOUT_MS / 60_000} min; see ${OUT}`);
      // A busy instance may drop a scrape (its exit is checked above): poll again.
      const scraped = await Promise.all(
        children.map(async ({ port }) =>
          (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) })).text(),
        ),
      ).catch((error: unknown) => {
        log(`a metrics scrape failed (${String(error)}); polling again`);
        return undefined;
      });
      if (scraped === undefined) {
        await sleep(1_000);
        continue;
      }
      const text = scraped.join("\n");
      const ingested = sum(metricValues(text, "agentops_records_processed_total", { processor: "ingest" }));
      const lag = sum(metricValues(text, "agentops_consumer_lag"));
      const aggregated = sum(
        metricValues(text, "agentops_records_processed_total", {
          processor: engine === "stages" ? "aggregation" : "engine",
        }),
      );
      stageRecordsByStage = STAGES.map((stage) =>
        sum(metricValues(text, "agentops_records_processed_total", { processor: stage })),
      );
      stageRecords = sum(stageRecordsByStage);
      const published = sum(metricValues(text, "agentops_results_published_total"));
      const elapsed = (performance.now() - started) / 1000;
      if (elapsed - lastProgress >= 10) {
        lastProgress = elapsed;
        log(
          `${instances} instance(s), ${elapsed.toFixed(0)} s: ingested ${ingested.toLocaleString("en-US")}/${produced.facts.toLocaleString("en-US")}, stage records ${stageRecords.toLocaleString("en-US")}, lag ${lag.toLocaleString("en-US")}, results published ${published.toLocaleString("en-US")}`,
        );
      }
      const caughtUp = ingested >= produced.facts && aggregated > 0 && lag === 0;
      if (caughtUp && published === lastPublished) break;
      if (caughtUp && lastPublished === -1) seconds = elapsed;
      lastPublished = caughtUp ? published : -1;
      await sleep(caughtUp ? 3_000 : 1_000);
    }
    const brokerCpu = broker === undefined ? Number.NaN : (cpuSeconds(broker) ?? Number.NaN) - brokerBefore;
    const serde = new AvroTopicSerde(createSchemaRegistry(REGISTRY_URL));
    const results = await readLatestResults(kafka, serde, topics.results);
    const variant: Variant = {
      engine,
      instances,
      facts: produced.facts,
      seconds,
      liveSeconds: seconds - (healthy - started) / 1000,
      peakRss: children.map((entry) => entry.peak),
      peakAnonymous: children.map((entry) => entry.anonymous),
      cpu: children.map((entry) => entry.cpu),
      brokerCpu,
      stageRecords,
      stageRecordsByStage,
      digest: resultsDigest(results),
      results: results.size,
    };
    log(
      `${engine} engine, ${instances} instance(s): quiescent after ${seconds.toFixed(1)} s (${rate(produced.facts, seconds)}), peak RSS ${variant.peakRss.map(mib).join(", ")}, CPU ${variant.cpu.map((value) => `${value.toFixed(0)} s`).join(", ")} + broker ${brokerCpu.toFixed(0)} s, ${results.size} results ${variant.digest.slice(0, 19)}`,
    );
    return variant;
  } finally {
    await Promise.all(children.map(({ child }) => stop(child)));
    for (const { stateDir } of children) rmSync(stateDir, { recursive: true, force: true });
    await deletePrefixedTopics(kafka, prefix, log);
  }
}

/** The embedded replay's results digest (the single engine over the same file). */
async function expectedDigest(input: string): Promise<{ digest: string; results: number }> {
  const output = `${OUT}stages-bench-expected.ndjson`;
  const code = await exited(agentops(["replay", "--input", input, "--output", output]));
  if (code !== 0) throw new Error(`agentops replay exited ${String(code)}`);
  const results = new Map<string, MetricResult>();
  for (const line of readFileSync(output, "utf8").split("\n")) {
    if (line === "") continue;
    const result = JSON.parse(line) as MetricResult;
    results.set(resultKey(result.metric_id, result.scope, result.cohort), result);
  }
  return { digest: resultsDigest(results), results: results.size };
}

mkdirSync(OUT, { recursive: true });
const date = execFileSync("date", ["-u"], { encoding: "utf8" }).trim();
const loadBefore = loadavg();
const nodeVersion = execFileSync(NODE, ["--version"], { encoding: "utf8" }).trim();
const input = await ensureWorkload(FACTS, log);
const expected = await expectedDigest(input);
log(`embedded replay: ${expected.results} results ${expected.digest.slice(0, 19)}`);
const kafka = createKafka({ brokers: BROKERS, clientId: "bench-stages" });
const variants: Variant[] = [];
// The reference row: the single engine in the same pipeline (one instance, --engine single), same sitting.
if (withSingle) variants.push(await runVariant(kafka, input, 1, "single"));
for (const instances of INSTANCES) variants.push(await runVariant(kafka, input, instances));
const loadAfter = loadavg();
const wrong = variants.filter((variant) => variant.digest !== expected.digest);
if (wrong.length > 0)
  throw new Error(
    `results differ from the embedded replay with ${wrong.map((variant) => `${String(variant.instances)} instance(s)`).join(", ")}`,
  );

const base = variants.find((variant) => variant.engine === "stages");
const rows = variants.map((variant) => {
  const processorCpu = sum(variant.cpu);
  const share = processorCpu / (processorCpu + variant.brokerCpu);
  return `| ${variant.engine} | ${variant.instances} | ${variant.seconds.toFixed(1)} | ${Math.round(variant.facts / variant.seconds).toLocaleString("en-US")} | ${Math.round(variant.facts / variant.liveSeconds).toLocaleString("en-US")} | ${base === undefined || variant.engine === "single" ? "" : (base.seconds / variant.seconds).toFixed(2)} | ${variant.peakRss.map(mib).join(", ")} | ${variant.peakAnonymous.map(mib).join(", ")} | ${variant.cpu.map((value) => value.toFixed(0)).join(" + ")} = ${processorCpu.toFixed(0)} | ${variant.brokerCpu.toFixed(0)} | ${(share * 100).toFixed(0)}% | ${(variant.stageRecords / variant.facts).toFixed(2)} | ${variant.stageRecordsByStage.map((count) => (count / variant.facts).toFixed(2)).join(" / ")} | ${((processorCpu / variant.facts) * 1000).toFixed(2)} |`;
});
const section = [
  HEADING,
  "",
  `- Date: ${date} (\`date -u\`)`,
  `- Machine: ${cpus().length} cores, ${(totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, node ${nodeVersion}; Kafka (one KRaft node, ops/services.sh) and the registry on the same cores, shared with other jobs (load average 1/5/15 min: ${loadBefore.map((value) => value.toFixed(1)).join(" / ")} before, ${loadAfter.map((value) => value.toFixed(1)).join(" / ")} after).`,
  `- Command: \`npm run bench:stages${argv.length === 0 ? "" : ` -- ${argv.join(" ")}`}\` (= \`node bench/stages-kafka.bench.ts\`)`,
  `- Workload: \`agentops generate --facts ${FACTS} --seed ${DEFAULT_SEED}\`, produced to fresh topics per row; stage topics of ${PARTITIONS} partitions; each instance is \`agentops run --engine stages --roles ingest,engine\`, from its start until quiescent.`,
  `- Every row's results topic has the embedded replay's digest (${expected.results} results, \`${expected.digest.slice(0, 23)}…\`).`,
  "",
  `| engine | instances | seconds | metric facts/s | metric facts/s after start-up | speed-up | peak RSS per instance | peak anonymous RSS per instance | processor CPU s | broker CPU s | processor share of CPU | stage records per fact | of which read by ${STAGES.join(" / ")} | processor CPU ms per fact |`,
  "|---|---:|---:|---:|---:|---:|---|---|---|---:|---:|---:|---|---:|",
  ...rows,
].join("\n");
process.stdout.write(`${section}\n`);
if (writeResults) writeResultsSection(HEADING, section);
