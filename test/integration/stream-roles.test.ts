import { join } from "node:path";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topicNames, type TopicNames } from "../../src/stream/topic-names.ts";
import { closeAll, testKafka, uniqueName } from "../support/kafka.ts";
import {
  describeDifferences,
  embeddedReplay,
  fetchMetrics,
  killAllProcessors,
  metricSum,
  runAgentopsOk,
  startProcessor,
  stopProcessor,
  testDir,
  waitForResults,
  type EmbeddedReplay,
} from "../support/processes.ts";

/**
 * Roles are processes by configuration: the engine in an instance of its own (`--roles engine`,
 * the way to give it a core) beside one with the other roles. Together they must give the
 * embedded replay's results byte for byte, each instance's /metrics shows its own roles, and
 * SIGTERM stops both cleanly (exit 0).
 */

let dir: string;
let facts: string;
let expected: EmbeddedReplay;
let kafka: Kafka;

beforeAll(async () => {
  dir = testDir("agentops-roles-");
  facts = join(dir, "facts.ndjson");
  await runAgentopsOk(["generate", "--out", facts, "--tasks", "120", "--seed", "11"]);
  expected = await embeddedReplay(facts, dir);
  kafka = testKafka();
});

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

describe("roles in separate processes", () => {
  it("--roles engine beside --roles ingest,run-monitor gives the embedded replay's results, each reporting its own roles, and both stop cleanly", async () => {
    const prefix = uniqueName("roles");
    const topics: TopicNames = topicNames(prefix);
    const front = await startProcessor({
      topicPrefix: prefix,
      name: "roles-front",
      dir,
      extraArgs: ["--roles", "ingest,run-monitor"],
    });
    const engine = await startProcessor({
      topicPrefix: prefix,
      name: "roles-engine",
      dir,
      extraArgs: ["--roles", "engine"],
    });

    await runAgentopsOk(["produce", "--input", facts, "--topic-prefix", prefix]);
    const quiet = await waitForResults(kafka, topics.results, expected.results, 120_000);
    expect(
      quiet.comparison.differingKeys,
      describeDifferences(expected.results, quiet.actual, quiet.comparison),
    ).toEqual([]);
    expect(quiet.comparison.actualDigest).toBe(quiet.comparison.expectedDigest);

    const frontSamples = await fetchMetrics(front);
    const engineSamples = await fetchMetrics(engine);
    expect(metricSum(frontSamples, "agentops_records_processed_total", { processor: "ingest" })).toBeGreaterThan(0);
    expect(metricSum(frontSamples, "agentops_records_processed_total", { processor: "engine" })).toBe(0);
    expect(metricSum(engineSamples, "agentops_records_processed_total", { processor: "engine" })).toBeGreaterThan(0);
    expect(metricSum(engineSamples, "agentops_records_processed_total", { processor: "ingest" })).toBe(0);
    expect(metricSum(engineSamples, "agentops_results_published_total")).toBeGreaterThan(0);

    expect(await stopProcessor(front, "SIGTERM")).toBe(0);
    expect(await stopProcessor(engine, "SIGTERM")).toBe(0);
  });
});
