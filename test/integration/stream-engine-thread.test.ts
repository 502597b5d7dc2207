import { join } from "node:path";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topicNames, type TopicNames } from "../../src/stream/topic-names.ts";
import { closeAll, testKafka, uniqueName } from "../support/kafka.ts";
import { countLogs, describeDifferences, embeddedReplay, fetchMetrics, killAllProcessors, metricSum, runAgentopsOk, startProcessor, stopProcessor, testDir, waitForResults, type EmbeddedReplay } from "../support/processes.ts";

/**
 * `agentops run --engine-thread on`: the engine role on a worker thread of the same process. Its
 * results must equal the embedded replay's byte for byte, its telemetry must reach the instance's
 * /metrics, and SIGTERM must stop the thread cleanly (exit 0).
 */

let dir: string;
let facts: string;
let expected: EmbeddedReplay;
let kafka: Kafka;
let prefix: string;
let topics: TopicNames;

beforeAll(async () => {
  dir = testDir("agentops-engine-thread-");
  facts = join(dir, "facts.ndjson");
  await runAgentopsOk(["generate", "--out", facts, "--tasks", "120", "--seed", "11"]);
  expected = await embeddedReplay(facts, dir);
  kafka = testKafka();
  prefix = uniqueName("thread");
  topics = topicNames(prefix);
});

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

describe("the engine role on its own thread (--engine-thread on)", () => {
  it("gives the embedded replay's results, reports the thread's telemetry on /metrics, and stops cleanly", async () => {
    const instance = await startProcessor({ topicPrefix: prefix, name: "threaded", dir, extraArgs: ["--engine-thread", "on"] });
    expect(countLogs(instance, "engine role running on its own thread")).toBe(1);

    await runAgentopsOk(["produce", "--input", facts, "--topic-prefix", prefix]);
    const quiet = await waitForResults(kafka, topics.results, expected.results, 120_000);
    expect(quiet.comparison.differingKeys, describeDifferences(expected.results, quiet.actual, quiet.comparison)).toEqual([]);
    expect(quiet.comparison.actualDigest).toBe(quiet.comparison.expectedDigest);

    // The engine's counters come from the thread; ingest's from the main thread; both on one endpoint.
    const samples = await fetchMetrics(instance);
    const ingested = metricSum(samples, "agentops_records_processed_total", { processor: "ingest" });
    expect(ingested).toBeGreaterThan(0);
    expect(metricSum(samples, "agentops_records_processed_total", { processor: "engine" })).toBeGreaterThan(0);
    expect(metricSum(samples, "agentops_results_published_total")).toBeGreaterThan(0);
    expect(samples.some((sample) => sample.name === "agentops_consumer_lag" && sample.labels["processor"] === "engine")).toBe(true);

    expect(await stopProcessor(instance, "SIGTERM")).toBe(0);
  });
});
