import { join } from "node:path";
import type { Kafka, Producer } from "kafkajs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { topicNames, type TopicNames } from "../../src/stream/topic-names.ts";
import { closeAll, connectedProducer, testKafka, uniqueName } from "../support/kafka.ts";
import {
  chunks,
  countLogs,
  embeddedReplay,
  expectResultsTopic,
  isAlive,
  killAllProcessors,
  logLines,
  produceLines,
  readAlertIds,
  readLines,
  runAgentops,
  runAgentopsOk,
  spawnProcessor,
  startProcessor,
  stopProcessor,
  testDir,
  topicSerde,
  waitFor,
  waitForHealthy,
  type EmbeddedReplay,
  type ProcessorInstance,
} from "../support/processes.ts";

/**
 * Issue #5, faults: processor instances killed with SIGKILL at several points of the stream and
 * restarted, and a rebalance (an instance added mid-stream, the first one stopped). The final
 * results must equal the embedded replay's byte for byte. Delivery is at-least-once with keyed
 * whole-value upserts, so a re-processed batch rewrites the same values: a double-counted fact
 * would change a count, a sum or a coverage and show up as a differing key.
 */

let dir: string;
let lines: string[];
let expected: EmbeddedReplay;
let kafka: Kafka;

beforeAll(async () => {
  dir = testDir("agentops-fault-");
  const facts = join(dir, "facts.ndjson");
  await runAgentopsOk(["generate", "--out", facts, "--tasks", "1500", "--seed", "11"]);
  lines = readLines(facts);
  expected = await embeddedReplay(facts, dir);
  kafka = testKafka();
});

afterEach(killAllProcessors);
afterAll(closeAll);

/** The live instance that most recently took partition 0 of the engine's input (its single one). */
function engineOwner(instances: readonly ProcessorInstance[]): ProcessorInstance | undefined {
  let owner: ProcessorInstance | undefined;
  let latest = -1;
  for (const instance of instances.filter(isAlive)) {
    for (const line of logLines(instance)) {
      const partitions = line["partitions"];
      if (
        line["msg"] === "partitions assigned" &&
        line["processor"] === "engine" &&
        Array.isArray(partitions) &&
        partitions.includes(0) &&
        typeof line["time"] === "number" &&
        line["time"] > latest
      ) {
        latest = line["time"];
        owner = instance;
      }
    }
  }
  return owner;
}

async function assertMatchesEmbedded(topics: TopicNames, timeoutMs: number): Promise<void> {
  await expectResultsTopic(kafka, topics.results, expected.results, timeoutMs);
  const alertIds = await waitFor(
    "the embedded replay's alerts",
    async () => {
      const ids = await readAlertIds(kafka, topics.alerts);
      return ids.length >= expected.alertIds.length ? ids : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 1_000 },
  );
  expect(alertIds).toEqual(expected.alertIds);
}

async function newProducer(): Promise<Producer> {
  return connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
}

describe("processor crashes and rebalances", () => {
  it("kill -9 at start, with batches in flight and during the engine rebuild, then restart: results equal the embedded replay", async () => {
    const prefix = uniqueName("crash");
    const topics = topicNames(prefix);
    const parts = chunks(lines, 6);
    const serde = topicSerde();
    const instances: ProcessorInstance[] = [];
    const start = async (name: string): Promise<ProcessorInstance> => {
      const instance = await startProcessor({ topicPrefix: prefix, name, dir });
      instances.push(instance);
      return instance;
    };

    // 1. Killed immediately after it starts (it may or may not have joined its groups yet).
    const early = spawnProcessor({ topicPrefix: prefix, name: "crash-a", dir });
    await waitFor("crash-a's first log line", () => (logLines(early).length > 0 ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 50,
    });
    await stopProcessor(early, "SIGKILL");
    await Promise.all([start("crash-a"), start("crash-b")]);
    const producer = await newProducer();

    // 2. Killed right after a burst of produced facts, while the batches are being processed:
    //    some outputs are written and their offsets not yet committed.
    for (const part of parts.slice(0, 4)) await produceLines(producer, serde, topics, part);
    const inFlight = await waitFor("an engine member", () => engineOwner(instances), { timeoutMs: 60_000 });
    await stopProcessor(inFlight, "SIGKILL");

    // 3. Killed during the engine restore: whichever member takes the engine over next (the
    //    survivor, which rebuilds from the log and the input, or the restarted instance, which
    //    resumes from its checkpoint) is killed as soon as it logs the start of its restore.
    const killedInRebuild = waitFor(
      "an engine restore after the crash",
      () => instances.filter(isAlive).find((instance) => hasRestoreAfter(instance, inFlight)),
      { timeoutMs: 90_000, intervalMs: 20 },
    ).then(async (instance) => {
      await stopProcessor(instance, "SIGKILL");
      return instance;
    });
    const restarted = spawnProcessor({ topicPrefix: prefix, name: inFlight.name, dir });
    instances.push(restarted);
    const rebuilding = await killedInRebuild;
    // Timing-dependent, so reported rather than asserted (a rebuild of ~15k facts takes most of a
    // second here and the log is polled every 20 ms).
    const engineStages = logLines(rebuilding).filter(
      (line) => isEngineStateStage(line) || (line["processor"] === "engine" && line["stage"] === "live"),
    );
    const lastStage = engineStages.at(-1)?.["stage"];
    console.info(
      `[crash test] killed ${rebuilding.name} ${lastStage === "live" ? "just after" : "during"} its engine restore (${engineStages.map((line) => String(line["stage"])).join(" → ")})`,
    );
    if (rebuilding !== restarted) await waitForHealthy(restarted);
    await start(rebuilding.name);

    // 4. The rest of the stream, with the restarted instances.
    await produceLines(producer, serde, topics, parts[4] ?? []);
    await produceLines(producer, serde, topics, parts[5] ?? []);

    await assertMatchesEmbedded(topics, 180_000);
    const audit = await runAgentops(["replay", "--from-topic", "--verify", "--topic-prefix", prefix]);
    expect(audit.code, audit.stdout).toBe(0);
  }, 420_000);

  it("an instance added mid-stream, then the first stopped (SIGTERM): results equal the embedded replay", async () => {
    const prefix = uniqueName("rebalance");
    const topics = topicNames(prefix);
    const parts = chunks(lines, 6);
    const serde = topicSerde();
    const first = await startProcessor({ topicPrefix: prefix, name: "rebalance-a", dir });
    const producer = await newProducer();
    await produceLines(producer, serde, topics, parts[0] ?? []);
    await produceLines(producer, serde, topics, parts[1] ?? []);

    const second = await startProcessor({ topicPrefix: prefix, name: "rebalance-b", dir });
    await produceLines(producer, serde, topics, parts[2] ?? []);
    await produceLines(producer, serde, topics, parts[3] ?? []);
    // The second member has its share before the first leaves (ingest has three partitions).
    await waitFor(
      "rebalance-b to own ingest partitions",
      () =>
        logLines(second).some(
          (line) =>
            line["msg"] === "partitions assigned" &&
            line["processor"] === "ingest" &&
            Array.isArray(line["partitions"]) &&
            line["partitions"].length > 0,
        )
          ? true
          : undefined,
      { timeoutMs: 90_000 },
    );

    expect(await stopProcessor(first, "SIGTERM")).toBe(0);
    await produceLines(producer, serde, topics, parts[4] ?? []);
    await produceLines(producer, serde, topics, parts[5] ?? []);

    await assertMatchesEmbedded(topics, 150_000);
    // The survivor took the engine over: it rebuilt from the engine's input and went live.
    expect(countLogs(second, "engine state rebuilt; results reconciled; live")).toBeGreaterThanOrEqual(1);
    expect(isAlive(second)).toBe(true);
  }, 300_000);
});

/**
 * The engine's restore stages: a member without local state for the partition loads the
 * contributions log and replays the input from 0 ("log-load-begin", "restore-begin"); a member
 * restarted under the same instance id resumes from its own checkpoint ("resume"). Which member
 * takes the partition over after a crash is the group coordinator's choice, so the test accepts
 * either path (it once waited only for the rebuild message and timed out whenever the restarted
 * instance won the partition and resumed instead).
 */
const ENGINE_RESTORE_STAGES: ReadonlySet<unknown> = new Set(["log-load-begin", "restore-begin", "resume"]);

/**
 * True when `instance` logged the start of the engine state's restore after `killed` last logged
 * anything. The published-results store's restore logs "restore-begin" too (with its `store`);
 * it comes first on every takeover, so it is not the point this test means to kill at.
 */
function hasRestoreAfter(instance: ProcessorInstance, killed: ProcessorInstance): boolean {
  const killedAt = Math.max(
    0,
    ...logLines(killed).map((line) => (typeof line["time"] === "number" ? line["time"] : 0)),
  );
  return logLines(instance).some(
    (line) => isEngineStateStage(line) && typeof line["time"] === "number" && line["time"] > killedAt,
  );
}

function isEngineStateStage(line: Readonly<Record<string, unknown>>): boolean {
  return line["processor"] === "engine" && line["store"] === undefined && ENGINE_RESTORE_STAGES.has(line["stage"]);
}
