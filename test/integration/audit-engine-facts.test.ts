import { join } from "node:path";
import type { Admin, Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAgentEvent } from "../../src/contract/facts.ts";
import { parseFactJson } from "../../src/contract/parse-fact.ts";
import { topicNames, type TopicNames } from "../../src/stream/topic-names.ts";
import { closeAll, connectedAdmin, connectedProducer, testKafka, uniqueName } from "../support/kafka.ts";
import {
  describeDifferences,
  embeddedReplay,
  killAllProcessors,
  produceLines,
  readLines,
  runAgentops,
  runAgentopsOk,
  startProcessor,
  stopProcessor,
  testDir,
  topicSerde,
  waitForResults,
  type EmbeddedReplay,
} from "../support/processes.ts";

/**
 * Issue #13, the audit source (docs/engine-state.md §5): the facts topic keeps only its retention,
 * so `replay --from-topic --verify` rebuilds the engine from the compacted engine-facts topic (the
 * whole history) and checks ingest over the facts topic's retained window. Here the facts topic
 * loses the first half of every partition (deleteTopicRecords moves the log start offset as
 * retention does): the audit still verifies, and names the window. A fact on the facts topic that
 * ingest would accept but that has no engine-facts record is a mismatch naming its coordinates.
 */

let dir: string;
let facts: string;
let expected: EmbeddedReplay;
let kafka: Kafka;
let admin: Admin;
let prefix: string;
let topics: TopicNames;

beforeAll(async () => {
  dir = testDir("agentops-audit-");
  facts = join(dir, "facts.ndjson");
  await runAgentopsOk(["generate", "--out", facts, "--tasks", "40", "--seed", "13"]);
  expected = await embeddedReplay(facts, dir);
  kafka = testKafka();
  admin = await connectedAdmin(kafka);
  prefix = uniqueName("audit");
  topics = topicNames(prefix);
});

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

/** Per partition of the facts topic: its first retained offset and its end. */
async function factsOffsets(): Promise<Map<number, { low: bigint; high: bigint }>> {
  const offsets = await admin.fetchTopicOffsets(topics.facts);
  return new Map(
    offsets.map(({ partition, low, high }) => [partition, { low: BigInt(low), high: BigInt(high) }] as const),
  );
}

describe("audit replay over a facts topic whose early segments were deleted", () => {
  it("rebuilds the engine from engine-facts (whole history) and verifies; the ingest window is what the facts topic retains", async () => {
    expect(expected.results.size).toBeGreaterThan(20);
    const instance = await startProcessor({ topicPrefix: prefix, name: "audit-a", dir });
    await runAgentopsOk(["produce", "--input", facts, "--topic-prefix", prefix]);
    const quiet = await waitForResults(kafka, topics.results, expected.results, 120_000);
    expect(
      quiet.comparison.differingKeys,
      describeDifferences(expected.results, quiet.actual, quiet.comparison),
    ).toEqual([]);
    expect(await stopProcessor(instance, "SIGTERM")).toBe(0);

    // Retention, simulated: the first half of every facts partition is gone.
    const before = await factsOffsets();
    await admin.fetchTopicMetadata({ topics: [topics.facts] });
    await admin.deleteTopicRecords({
      topic: topics.facts,
      partitions: [...before].map(([partition, { low, high }]) => ({
        partition,
        offset: String(low + (high - low) / 2n),
      })),
    });
    const after = await factsOffsets();
    expect([...after.values()].some(({ low }) => low > 0n)).toBe(true);
    const window = [...after.keys()]
      .sort((a, b) => a - b)
      .map((partition) => `${partition}@${String(after.get(partition)?.low)}`)
      .join(", ");

    const audit = await runAgentops(["replay", "--from-topic", "--verify", "--topic-prefix", prefix]);
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);
    expect(audit.stdout).toContain(`engine rebuilt from ${topics.engineFacts} (`);
    expect(audit.stdout).toContain(`whole history); ingest checked over ${topics.facts} from offsets ${window} (`);
    expect(audit.stdout).toContain(`verified: ${expected.results.size} results`);
    expect(audit.stdout).not.toContain("MISMATCH");
  }, 240_000);

  it("reports an accepted fact on the facts topic without its engine-facts record, with its coordinates, and exits 1", async () => {
    // A valid metric fact of another workload, produced while no instance runs: ingest would accept
    // it, but nothing wrote its engine-facts record.
    const other = join(dir, "other.ndjson");
    await runAgentopsOk(["generate", "--out", other, "--tasks", "2", "--seed", "99"]);
    const line = readLines(other).find((candidate) => {
      const parsed = parseFactJson(candidate);
      return parsed.ok && !isAgentEvent(parsed.fact) && parsed.invalidMeasures.length === 0;
    });
    if (line === undefined) throw new Error("no metric fact in the generated workload");
    const parsed = parseFactJson(line);
    if (!parsed.ok) throw new Error("the chosen line does not parse");

    const before = await factsOffsets();
    expect(await produceLines(await connectedProducer(kafka), topicSerde(), topics, [line])).toBe(1);
    const after = await factsOffsets();
    const grown = [...after].filter(([partition, { high }]) => high !== before.get(partition)?.high);
    expect(grown).toHaveLength(1);
    const [partition] = grown[0] as [number, unknown];
    const coordinates = `${topics.facts}/${partition}@${String(before.get(partition)?.high)}`;

    const audit = await runAgentops(["replay", "--from-topic", "--verify", "--topic-prefix", prefix]);
    expect(audit.code, audit.stdout + audit.stderr).toBe(1);
    expect(audit.stdout).toContain("MISMATCH: 1 record(s) of the audit source");
    expect(audit.stdout).toContain(`${coordinates}  accepted fact ${parsed.fact.fact_id} has no engine-facts record`);
    // The engine rebuild itself still equals the results topic: only ingest's record is missing.
    expect(audit.stdout).not.toContain("key(s) differ");
  }, 120_000);
});
