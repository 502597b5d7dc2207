import { join } from "node:path";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseFactJson } from "../../src/contract/parse-fact.ts";
import { byUtf8 } from "../../src/contract/code-point-order.ts";
import { topicNames, type TopicNames } from "../../src/stream/topic-names.ts";
import { closeAll, connectedProducer, testKafka, uniqueName } from "../support/kafka.ts";
import {
  describeDifferences,
  embeddedReplay,
  fetchMetrics,
  httpGet,
  killAllProcessors,
  metricSum,
  readAlertIds,
  readLines,
  runAgentops,
  runAgentopsOk,
  startProcessor,
  stopProcessor,
  testDir,
  topicSerde,
  waitFor,
  waitForResults,
  type EmbeddedReplay,
  type ProcessorInstance,
} from "../support/processes.ts";

/**
 * Issue #5, end to end on a real broker and registry: a generated workload produced to the
 * 3-partition facts topic and processed by two `agentops run` instances of one group must give,
 * once the results topic is quiescent, exactly the embedded replay's results (same keys, same
 * canonical bytes per key) and the same alert ids; the audit replay verifies it and catches a
 * tampered result.
 */

let dir: string;
let facts: string;
let expected: EmbeddedReplay;
let kafka: Kafka;
let prefix: string;
let topics: TopicNames;
let instances: ProcessorInstance[] = [];
let factsOnTopic = 0;
let agentEvents = 0;

beforeAll(async () => {
  dir = testDir("agentops-e2e-");
  facts = join(dir, "facts.ndjson");
  await runAgentopsOk(["generate", "--out", facts, "--tasks", "150", "--seed", "7"]);
  for (const line of readLines(facts)) {
    const parsed = parseFactJson(line);
    if (!parsed.ok) continue;
    if (parsed.fact.type === "agent_step" || parsed.fact.type === "sandbox_event") agentEvents += 1;
    else factsOnTopic += 1;
  }
  expected = await embeddedReplay(facts, dir);
  kafka = testKafka();
  prefix = uniqueName("e2e");
  topics = topicNames(prefix);
});

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

describe("Kafka topology end to end (two instances, one group)", () => {
  it("gives the embedded replay's results byte for byte and the same alerts", async () => {
    expect(expected.results.size).toBeGreaterThan(50);
    expect(expected.alertIds.length).toBeGreaterThan(0);
    instances = await Promise.all(["e2e-a", "e2e-b"].map((name) => startProcessor({ topicPrefix: prefix, name, dir })));

    const produced = await runAgentopsOk(["produce", "--input", facts, "--topic-prefix", prefix]);
    expect(produced.stdout).toContain(`sent ${factsOnTopic + agentEvents} records`);

    const quiet = await waitForResults(kafka, topics.results, expected.results, 120_000);
    expect(
      quiet.comparison.differingKeys,
      describeDifferences(expected.results, quiet.actual, quiet.comparison),
    ).toEqual([]);
    expect([...quiet.actual.keys()].sort(byUtf8)).toEqual([...expected.results.keys()].sort(byUtf8));
    expect(quiet.comparison.actualDigest).toBe(quiet.comparison.expectedDigest);

    const alertIds = await waitFor(
      "the embedded replay's alerts on the alerts topic",
      async () => {
        const ids = await readAlertIds(kafka, topics.alerts);
        return ids.length >= expected.alertIds.length ? ids : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect(alertIds).toEqual(expected.alertIds);
  });

  it("/metrics exposes consumer lag, records processed, dead letters and rebalances; /healthz answers 200", async () => {
    expect(instances).toHaveLength(2);
    for (const instance of instances) {
      const health = await httpGet(instance, "/healthz");
      expect(health.status).toBe(200);
      expect(JSON.parse(health.body)).toEqual({ status: "ok" });
      const samples = await fetchMetrics(instance);
      expect(metricSum(samples, "agentops_rebalances_total")).toBeGreaterThanOrEqual(3);
    }
    // Counters are per process; the group's work is their sum.
    const all = (await Promise.all(instances.map((instance) => fetchMetrics(instance)))).flat();
    for (const processor of ["ingest", "engine", "run-monitor"]) {
      expect(
        all.some((sample) => sample.name === "agentops_consumer_lag" && sample.labels["processor"] === processor),
        `lag series for ${processor}`,
      ).toBe(true);
      expect(metricSum(all, "agentops_rebalances_total", { processor })).toBeGreaterThanOrEqual(2);
    }
    expect(metricSum(all, "agentops_records_processed_total", { processor: "ingest" })).toBeGreaterThanOrEqual(
      factsOnTopic,
    );
    expect(metricSum(all, "agentops_records_processed_total", { processor: "run-monitor" })).toBeGreaterThanOrEqual(
      agentEvents,
    );
    expect(metricSum(all, "agentops_records_processed_total", { processor: "engine" })).toBeGreaterThan(0);
    // The workload holds conflicting versions: the engine dead-letters them.
    expect(metricSum(all, "agentops_dead_letters_total", { reason: "CONFLICT" })).toBeGreaterThan(0);
    // The engine member has caught up with its input: its lag gauge is 0.
    const engineLag = all.filter(
      (sample) => sample.name === "agentops_consumer_lag" && sample.labels["processor"] === "engine",
    );
    expect(engineLag.length).toBeGreaterThan(0);
    expect(engineLag.every((sample) => sample.value === 0)).toBe(true);
  });

  it("audit replay --from-topic --verify passes on the clean run and fails naming a tampered key", async () => {
    // Stop the instances (clean SIGTERM) so nothing rewrites the results topic under the audit.
    expect(await Promise.all(instances.map((instance) => stopProcessor(instance, "SIGTERM")))).toEqual([0, 0]);

    const clean = await runAgentops(["replay", "--from-topic", "--verify", "--topic-prefix", prefix]);
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    expect(clean.stdout).toContain(`verified: ${expected.results.size} results`);

    const key = [...expected.results.keys()].sort(byUtf8)[0] as string;
    const original = expected.results.get(key);
    if (original === undefined) throw new Error("no result to tamper with");
    const tampered = { ...original, eligible_units: original.eligible_units + 1 };
    const producer = await connectedProducer(kafka);
    await producer.send({
      topic: topics.results,
      messages: [{ key, value: await topicSerde().encodeResult(tampered) }],
    });

    const audit = await runAgentops(["replay", "--from-topic", "--verify", "--topic-prefix", prefix]);
    expect(audit.code, audit.stdout + audit.stderr).toBe(1);
    expect(audit.stdout).toContain("MISMATCH: 1 key(s) differ");
    expect(audit.stdout).toContain(key);
  });
});
