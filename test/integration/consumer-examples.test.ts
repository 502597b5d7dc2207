import { join } from "node:path";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { byUtf8 } from "../../src/contract/code-point-order.ts";
import { topicNames, type TopicNames } from "../../src/stream/topic-names.ts";
import {
  buildJavaExample,
  expectedRows,
  parseTable,
  runJavaExample,
  runPythonExample,
  type ExampleTarget,
  type MavenBuild,
  type TableRow,
} from "../support/consumer-examples.ts";
import { closeAll, connectedProducer, serviceEndpoints, testKafka, uniqueName } from "../support/kafka.ts";
import {
  describeDifferences,
  embeddedReplay,
  killAllProcessors,
  runAgentopsOk,
  startProcessor,
  stopProcessor,
  testDir,
  waitForResults,
} from "../support/processes.ts";

/**
 * Issue #15 item 5: the downstream consumer examples of docs/consumers.md (Java with the Apicurio
 * serde, Python with confluent-kafka and avro) read the results topic of a real processor run
 * into tables equal, key by key, to `agentops results --json`: every key, status, value, scope,
 * cohort and as_of. The topic holds superseded values (catch-up flushes rewrite keys) and a
 * tombstone, so an example that ignores compaction semantics fails.
 */

let kafka: Kafka;
let topics: TopicNames;
let target: ExampleTarget;
let expected: Map<string, TableRow>;
let tombstoned: string;
/** Started at once, so Maven works while the processor does; awaited by the Java test. */
let javaBuild: Promise<MavenBuild>;

beforeAll(async () => {
  javaBuild = buildJavaExample();
  javaBuild.catch(() => {}); // reported by the Java test, not as an unhandled rejection here

  const dir = testDir("agentops-consumers-");
  const facts = join(dir, "facts.ndjson");
  await runAgentopsOk(["generate", "--out", facts, "--tasks", "60", "--seed", "15"]);
  const replay = await embeddedReplay(facts, dir);
  kafka = testKafka();
  const prefix = uniqueName("consumers");
  topics = topicNames(prefix);
  const { brokers, registryUrl } = serviceEndpoints();
  target = { brokers: brokers.join(","), registryUrl, topic: topics.results };

  const instance = await startProcessor({ topicPrefix: prefix, name: "consumers", dir });
  await runAgentopsOk(["produce", "--input", facts, "--topic-prefix", prefix]);
  const quiet = await waitForResults(kafka, topics.results, replay.results, 180_000);
  expect(quiet.comparison.differingKeys, describeDifferences(replay.results, quiet.actual, quiet.comparison)).toEqual(
    [],
  );
  // Stopped, so nothing rewrites the topic while the examples read it.
  expect(await stopProcessor(instance, "SIGTERM")).toBe(0);

  // A key the processor deleted: a tombstone after its last value.
  tombstoned = [...replay.results.keys()].sort(byUtf8)[0] as string;
  const producer = await connectedProducer(kafka);
  await producer.send({ topic: topics.results, messages: [{ key: tombstoned, value: null }] });

  expected = expectedRows((await runAgentopsOk(["results", "--json", "--topic-prefix", prefix])).stdout);
}, 600_000);

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

describe("downstream consumer examples (examples/consumers/)", () => {
  it("the workload exercises every shape a consumer must handle", () => {
    const rows = [...expected.values()];
    expect(expected.size).toBeGreaterThan(50);
    expect(expected.has(tombstoned)).toBe(false);
    const scopeKinds = new Set(rows.map((row) => (row.scope as { kind: string }).kind));
    expect([...scopeKinds].sort()).toEqual(["snapshot", "window"]);
    expect(new Set(rows.map((row) => row.status))).toEqual(
      new Set(["PUBLISHED", "NOT_AVAILABLE", "BELOW_MINIMUM_SAMPLE"]),
    );
    expect(rows.some((row) => typeof row.value === "number")).toBe(true);
    expect(rows.some((row) => typeof row.value === "object" && row.value !== null)).toBe(true);
    expect(rows.some((row) => row.value === null)).toBe(true);
    expect(rows.some((row) => Object.keys(row.cohort as object).length === 0)).toBe(true);
  });

  it("Java (kafka-clients + Apicurio serde) prints the same table as `agentops results --json`", async () => {
    const build = await javaBuild;
    process.stderr.write(
      `[consumer-examples] Maven build ${build.offline ? "offline" : "online"} in ${build.seconds.toFixed(1)} s\n`,
    );
    const result = await runJavaExample(target);
    const table = parseTable(result.stdout);
    expect([...table.keys()].sort(byUtf8)).toEqual([...expected.keys()].sort(byUtf8));
    expect(table).toEqual(expected);
    expect(result.stderr).toContain(`${expected.size} results on ${topics.results}`);
  }, 600_000);

  it("Python (confluent-kafka + avro) prints the same table as `agentops results --json`", async () => {
    const result = await runPythonExample(target);
    const table = parseTable(result.stdout);
    expect([...table.keys()].sort(byUtf8)).toEqual([...expected.keys()].sort(byUtf8));
    expect(table).toEqual(expected);
    expect(result.stderr).toContain(`${expected.size} results on ${topics.results}`);
  });
});
