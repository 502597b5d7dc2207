import { join } from "node:path";
import type { Kafka, Producer } from "kafkajs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { enginePartitions, topicNames, type TopicNames } from "../../src/stream/topic-names.ts";
import { STAGE_TOPIC_ROLES } from "../../src/stream/topic-names.ts";
import { createTopicsWithLeaders } from "../../src/kafka/topic-admin.ts";
import { closeAll, connectedAdmin, connectedProducer, testKafka, uniqueName } from "../support/kafka.ts";
import {
  chunks,
  embeddedReplay,
  expectResultsTopic,
  isAlive,
  killAllProcessors,
  logLines,
  produceLines,
  readLines,
  runAgentops,
  runAgentopsOk,
  spawnProcessor,
  startProcessor,
  stopProcessor,
  testDir,
  topicSerde,
  waitFor,
  type EmbeddedReplay,
  type ProcessorInstance,
} from "../support/processes.ts";

/**
 * Issue #13 Part 2 on Kafka: the partitioned engine (`--engine stages`: fact ledger, domain
 * ledger, entities, aggregation, each on the stage topics' partitions) shared by several
 * instances, killed with SIGKILL mid-stream and restarted, and rebalanced. The results topic must
 * end equal to the embedded replay (the single engine) byte for byte: a reader left holding a
 * value its writer sent from state it lost in the crash, or a fact counted twice, shows up as a
 * differing key.
 */

let dir: string;
let lines: string[];
let expected: EmbeddedReplay;
let kafka: Kafka;

beforeAll(async () => {
  dir = testDir("agentops-stages-");
  const facts = join(dir, "facts.ndjson");
  await runAgentopsOk(["generate", "--out", facts, "--tasks", "1500", "--seed", "13"]);
  lines = readLines(facts);
  expected = await embeddedReplay(facts, dir);
  kafka = testKafka();
});

afterEach(killAllProcessors);
afterAll(closeAll);

const STAGES = ["fact-ledger", "domain-ledger", "entities", "aggregation"];

async function assertMatchesEmbedded(topics: TopicNames, timeoutMs: number): Promise<void> {
  await expectResultsTopic(kafka, topics.results, expected.results, timeoutMs);
}

async function newProducer(): Promise<Producer> {
  return connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
}

/** Stage partitions an instance was last assigned, by stage. */
function assignedStages(instance: ProcessorInstance): Map<string, readonly number[]> {
  const owned = new Map<string, readonly number[]>();
  for (const line of logLines(instance)) {
    const processor = line["processor"];
    if (
      line["msg"] === "partitions assigned" &&
      typeof processor === "string" &&
      STAGES.includes(processor) &&
      Array.isArray(line["partitions"])
    )
      owned.set(processor, line["partitions"] as number[]);
  }
  return owned;
}

describe("the partitioned engine on Kafka (--engine stages)", () => {
  it("runs on the stage topics' partitions with two instances, survives kill -9 of one mid-stream and its restart, and ends equal to the embedded replay", async () => {
    expect(enginePartitions()).toBe(3);
    const prefix = uniqueName("stages");
    const topics = topicNames(prefix);
    const parts = chunks(lines, 6);
    const serde = topicSerde();
    const start = (name: string): Promise<ProcessorInstance> =>
      startProcessor({ topicPrefix: prefix, name, dir, extraArgs: ["--engine", "stages"] });
    const [first, second] = await Promise.all([start("stages-a"), start("stages-b")]);
    const producer = await newProducer();
    for (const part of parts.slice(0, 3)) await produceLines(producer, serde, topics, part);

    // Both instances own stage partitions (any number of instances share them).
    await waitFor(
      "both instances to own stage partitions",
      () =>
        [first, second].every((instance) =>
          [...assignedStages(instance).values()].some((partitions) => partitions.length > 0),
        )
          ? true
          : undefined,
      { timeoutMs: 90_000 },
    );

    // Killed while it works through the burst: its outputs since its last checkpoint are on the
    // topics, its state on disk is behind them.
    await stopProcessor(first, "SIGKILL");
    await produceLines(producer, serde, topics, parts[3] ?? []);
    const restarted = spawnProcessor({ topicPrefix: prefix, name: "stages-a", dir, extraArgs: ["--engine", "stages"] });
    await produceLines(producer, serde, topics, parts[4] ?? []);
    await produceLines(producer, serde, topics, parts[5] ?? []);

    await assertMatchesEmbedded(topics, 240_000);
    expect(isAlive(second)).toBe(true);
    expect(isAlive(restarted)).toBe(true);
    // The restarted instance read back what its stage partitions wrote and went live.
    const reconciled = [second, restarted]
      .flatMap((instance) => logLines(instance))
      .filter((line) => line["stage"] === "reconciled");
    console.info(
      `[stages test] reconciled ${String(reconciled.length)} stage partitions after the crash: ${reconciled.map((line) => `${String(line["writer"])} read ${String(line["read"])} corrected ${String(line["corrections"])}`).join("; ")}`,
    );
    expect(reconciled.length).toBeGreaterThan(0);
    // The audit rebuilds the partitioned engine's whole history from its stage facts topic through the same stages.
    const audit = await runAgentops([
      "replay",
      "--from-topic",
      "--verify",
      "--engine",
      "stages",
      "--engine-partitions",
      "3",
      "--topic-prefix",
      prefix,
    ]);
    expect(audit.code, audit.stdout).toBe(0);
    expect(audit.stdout).toContain(`rebuilt ${String(expected.results.size)} results from ${topics.stageFacts}`);
  }, 420_000);

  it("on one partition (stage topics created with one), three instances: one stopped (SIGTERM), one killed (kill -9) and restarted, ends equal to the embedded replay", async () => {
    const prefix = uniqueName("stages1");
    const topics = topicNames(prefix);
    // The engine's partition count is its topics' on the cluster: created here with one.
    const admin = await connectedAdmin(kafka);
    await createTopicsWithLeaders(
      admin,
      STAGE_TOPIC_ROLES.map((role) => ({
        topic: topics[role],
        numPartitions: 1,
        replicationFactor: 1,
        configEntries: [{ name: "cleanup.policy", value: "compact" }],
      })),
    );
    const parts = chunks(lines, 6);
    const serde = topicSerde();
    const start = (name: string): Promise<ProcessorInstance> =>
      startProcessor({ topicPrefix: prefix, name, dir, extraArgs: ["--engine", "stages"] });
    const [first, second, third] = await Promise.all([start("one-a"), start("one-b"), start("one-c")]);
    const producer = await newProducer();
    await produceLines(producer, serde, topics, parts[0] ?? []);
    await produceLines(producer, serde, topics, parts[1] ?? []);

    // A rebalance: the first leaves cleanly (its stage partitions checkpointed), the others take them.
    expect(await stopProcessor(first, "SIGTERM")).toBe(0);
    await produceLines(producer, serde, topics, parts[2] ?? []);
    await produceLines(producer, serde, topics, parts[3] ?? []);
    // A crash with work in flight, then a restart under the same instance id (its local state).
    await stopProcessor(second, "SIGKILL");
    await produceLines(producer, serde, topics, parts[4] ?? []);
    const restarted = spawnProcessor({ topicPrefix: prefix, name: "one-b", dir, extraArgs: ["--engine", "stages"] });
    await produceLines(producer, serde, topics, parts[5] ?? []);

    await assertMatchesEmbedded(topics, 240_000);
    expect(isAlive(third)).toBe(true);
    expect(isAlive(restarted)).toBe(true);
    // Every stage ran on partition 0 only.
    for (const instance of [first, second, third, restarted])
      for (const partitions of assignedStages(instance).values())
        expect(partitions.every((partition) => partition === 0)).toBe(true);
  }, 420_000);
});
