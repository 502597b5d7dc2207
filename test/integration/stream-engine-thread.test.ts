import { join } from "node:path";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topicNames, type TopicNames } from "../../src/stream/topic-names.ts";
import { closeAll, testKafka, uniqueName } from "../support/kafka.ts";
import { countLogs, describeDifferences, embeddedReplay, fetchMetrics, killAllProcessors, metricSum, runAgentopsOk, startProcessor, stopProcessor, testDir, waitForResults, type EmbeddedReplay } from "../support/processes.ts";

/**
 * `agentops run --engine-thread on|off`: the engine role on a worker thread of the same process
 * (the default on a machine with more than one core), or on the instance's one event loop. Either
 * way the results must equal the embedded replay's byte for byte, the engine's telemetry must
 * reach the instance's /metrics, and SIGTERM must stop the instance cleanly (exit 0).
 */

let dir: string;
let facts: string;
let expected: EmbeddedReplay;
let kafka: Kafka;

beforeAll(async () => {
  dir = testDir("agentops-engine-thread-");
  facts = join(dir, "facts.ndjson");
  await runAgentopsOk(["generate", "--out", facts, "--tasks", "120", "--seed", "11"]);
  expected = await embeddedReplay(facts, dir);
  kafka = testKafka();
});

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

describe("the engine role on its own thread or on the instance's event loop", () => {
  it.each([
    ["on", 1],
    ["off", 0],
  ] as const)("--engine-thread %s gives the embedded replay's results, reports the engine's telemetry on /metrics, and stops cleanly", async (mode, threadLogs) => {
    const prefix = uniqueName(`thread-${mode}`);
    const topics: TopicNames = topicNames(prefix);
    const instance = await startProcessor({ topicPrefix: prefix, name: `engine-thread-${mode}`, dir, extraArgs: ["--engine-thread", mode] });
    expect(countLogs(instance, "engine role running on its own thread")).toBe(threadLogs);

    await runAgentopsOk(["produce", "--input", facts, "--topic-prefix", prefix]);
    const quiet = await waitForResults(kafka, topics.results, expected.results, 120_000);
    expect(quiet.comparison.differingKeys, describeDifferences(expected.results, quiet.actual, quiet.comparison)).toEqual([]);
    expect(quiet.comparison.actualDigest).toBe(quiet.comparison.expectedDigest);

    // With a thread, the engine's counters come from it and ingest's from the main thread: one endpoint shows both.
    const samples = await fetchMetrics(instance);
    expect(metricSum(samples, "agentops_records_processed_total", { processor: "ingest" })).toBeGreaterThan(0);
    expect(metricSum(samples, "agentops_records_processed_total", { processor: "engine" })).toBeGreaterThan(0);
    expect(metricSum(samples, "agentops_results_published_total")).toBeGreaterThan(0);
    expect(samples.some((sample) => sample.name === "agentops_consumer_lag" && sample.labels["processor"] === "engine")).toBe(true);

    expect(await stopProcessor(instance, "SIGTERM")).toBe(0);
  });
});
