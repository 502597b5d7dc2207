import { join } from "node:path";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topicNames, type TopicNames } from "../../src/stream/topic-names.ts";
import { closeAll, connectedAdmin, testKafka, uniqueName } from "../support/kafka.ts";
import {
  countLogs,
  describeDifferences,
  embeddedReplay,
  killAllProcessors,
  logLines,
  runAgentopsOk,
  startProcessor,
  stopProcessor,
  testDir,
  waitFor,
  waitForResults,
  type EmbeddedReplay,
} from "../support/processes.ts";

/**
 * Issue #15, item 4: a restart with no new facts publishes nothing. The engine restores its state
 * from its changelogs (a new instance) or resumes it from its local checkpoint (the same instance
 * id), issue #13, and
 * reconciles the results topic; it must write only keys whose value differs and tombstone only keys
 * that are gone, so restarts leave the results topic's end offsets where the first run left them.
 * The store of published results is checkpointed too: an instance with local state reads none of
 * the results topic again.
 */

let dir: string;
let facts: string;
let expected: EmbeddedReplay;
let kafka: Kafka;
let prefix: string;
let topics: TopicNames;

beforeAll(async () => {
  dir = testDir("agentops-restart-");
  facts = join(dir, "facts.ndjson");
  await runAgentopsOk(["generate", "--out", facts, "--tasks", "40", "--seed", "11"]);
  expected = await embeddedReplay(facts, dir);
  kafka = testKafka();
  prefix = uniqueName("restart");
  topics = topicNames(prefix);
});

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

async function engineFactsEnd(): Promise<string> {
  const admin = await connectedAdmin(kafka);
  const [partition] = await admin.fetchTopicOffsets(topics.engineFacts);
  return partition?.high ?? "0";
}

async function resultsEndOffsets(): Promise<string[]> {
  const admin = await connectedAdmin(kafka);
  return (await admin.fetchTopicOffsets(topics.results))
    .sort((a, b) => a.partition - b.partition)
    .map((entry) => `${entry.partition}:${entry.high}`);
}

async function resultsRecordCount(): Promise<number> {
  const admin = await connectedAdmin(kafka);
  return (await admin.fetchTopicOffsets(topics.results)).reduce(
    (sum, entry) => sum + Number(entry.high) - Number(entry.low),
    0,
  );
}

describe("restarting an instance with no new facts", () => {
  it("does not move the results topic's end offsets", async () => {
    const first = await startProcessor({ topicPrefix: prefix, name: "restart-0", dir });
    await runAgentopsOk(["produce", "--input", facts, "--topic-prefix", prefix]);
    const quiet = await waitForResults(kafka, topics.results, expected.results, 120_000);
    expect(
      quiet.comparison.differingKeys,
      describeDifferences(expected.results, quiet.actual, quiet.comparison),
    ).toEqual([]);
    expect(await stopProcessor(first)).toBe(0);
    const before = await resultsEndOffsets();
    expect(before.some((entry) => !entry.endsWith(":0"))).toBe(true);

    // Round 1: another instance id, so no local state: it restores from the contributions log and
    // the engine-facts topic.
    // Round 2: the first instance's id again: it resumes from its local checkpoint (issue #13) and
    // reads no history.
    for (const [round, name, resumes] of [
      [1, "restart-1", false],
      [2, "restart-0", true],
    ] as const) {
      const instance = await startProcessor({ topicPrefix: prefix, name, dir });
      const live = await waitFor(
        `restart ${round}: engine live`,
        () => logLines(instance).find((line) => line["msg"] === "engine state rebuilt; results reconciled; live"),
        { timeoutMs: 90_000 },
      );
      // Without local state the whole result table is compared with the topic; resumed, only the
      // keys changed since the checkpoints (none here).
      expect(live["results"], `restart ${round}: results compared going live`).toBe(
        resumes ? 0 : expected.results.size,
      );
      expect(live["upserts"]).toBe(0);
      expect(live["tombstones"]).toBe(0);
      expect(countLogs(instance, "engine state rebuilt; results reconciled; live")).toBe(1);
      expect(countLogs(instance, "engine state resumed from its local checkpoint"), `restart ${round} resumes`).toBe(
        resumes ? 1 : 0,
      );
      expect(
        countLogs(instance, "rebuilding engine state from its input topic"),
        `restart ${round} reads the engine-facts topic from 0`,
      ).toBe(resumes ? 0 : 1);
      // The published results: without local state the store reads the whole results topic; with
      // it, only what was written after its checkpoint (nothing: the last stop checkpointed it).
      const restored = logLines(instance).find(
        (line) => line["msg"] === "store restored" && line["store"] === "published-results",
      );
      expect(restored?.["held"], `restart ${round}: result keys held`).toBe(expected.results.size);
      expect(restored?.["records"], `restart ${round}: results topic records read`).toBe(
        resumes ? 0 : await resultsRecordCount(),
      );
      if (!resumes) {
        // Without local state it loads the contributions log: every fact before the log's marker
        // (all of them: the first instance went live) is loaded, and no unit is evaluated again.
        const loaded = logLines(instance).find((line) => line["msg"] === "engine contributions log loaded");
        expect(Number(loaded?.["units"]), "units restored from the contributions log").toBeGreaterThan(0);
        expect(loaded?.["loadUntil"]).toBe(await engineFactsEnd());
      }
      expect(await stopProcessor(instance)).toBe(0);
      expect(await resultsEndOffsets(), `results topic end offsets after restart ${round}`).toEqual(before);
    }
  });
});
