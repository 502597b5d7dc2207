import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Admin } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigResourceTypes } from "../../src/kafka/kafkajs.ts";
import { applyTopicActions, planTopics } from "../../src/kafka/topic-admin.ts";
import { loadTopicSpecFile, parseTopicSpecFile, type TopicSpec } from "../../src/kafka/topic-spec.ts";
import { closeAll, connectedAdmin, serviceEndpoints, uniqueName } from "../support/kafka.ts";

const run = promisify(execFile);
let admin: Admin;

beforeAll(async () => {
  admin = await connectedAdmin();
});
afterAll(closeAll);

/** Every config of a topic as the broker reports it (not as our file says). */
async function brokerConfigs(topic: string): Promise<Record<string, string | null>> {
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
  });
  const resource = described.resources[0];
  if (resource === undefined) throw new Error(`no config for ${topic}`);
  return Object.fromEntries(resource.configEntries.map((entry) => [entry.configName, entry.configValue]));
}

function testSpecs(): TopicSpec[] {
  const base = { description: "test", replication: 1, key: "k", value: "v" } as const;
  return [
    {
      ...base,
      name: uniqueName("topics-test.results"),
      partitions: 2,
      cleanupPolicy: "compact",
      retentionMs: -1,
      configs: { "min.cleanable.dirty.ratio": "0.1" },
    },
    { ...base, name: uniqueName("topics-test.facts"), partitions: 3, cleanupPolicy: "delete", retentionMs: 3_600_000 },
  ];
}

async function apply(specs: readonly TopicSpec[]): Promise<void> {
  const actions = await planTopics(admin, specs);
  expect(actions.filter((action) => action.kind === "error")).toEqual([]);
  await applyTopicActions(admin, actions);
}

describe("topics apply", () => {
  it("creates the topics, and applying twice leaves the broker's configs identical", async () => {
    const specs = testSpecs();
    await apply(specs);
    const first = await Promise.all(specs.map((spec) => brokerConfigs(spec.name)));
    expect(first[0]?.["cleanup.policy"]).toBe("compact");
    expect(first[0]?.["retention.ms"]).toBe("-1");
    expect(first[0]?.["min.cleanable.dirty.ratio"]).toBe("0.1");
    expect(first[1]?.["cleanup.policy"]).toBe("delete");
    expect(first[1]?.["retention.ms"]).toBe("3600000");

    const secondPlan = await planTopics(admin, specs);
    expect(secondPlan.map((action) => action.kind)).toEqual(["unchanged", "unchanged"]);
    await applyTopicActions(admin, secondPlan);
    const second = await Promise.all(specs.map((spec) => brokerConfigs(spec.name)));
    expect(second).toEqual(first);
    const metadata = await admin.fetchTopicMetadata({ topics: specs.map((spec) => spec.name) });
    expect(metadata.topics.map((topic) => topic.partitions.length).sort()).toEqual([2, 3]);
  });

  it("aligns a drifted config and keeps the other managed configs (AlterConfigs replaces all)", async () => {
    const [results] = testSpecs();
    if (results === undefined) throw new Error("no spec");
    await apply([results]);
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: results.name,
          configEntries: [{ name: "retention.ms", value: "1000" }],
        },
      ],
    });
    expect((await brokerConfigs(results.name))["cleanup.policy"]).toBe("delete"); // the drift wiped the policy
    const [action] = await planTopics(admin, [results]);
    expect(action?.kind).toBe("update");
    await apply([results]);
    const after = await brokerConfigs(results.name);
    expect(after["cleanup.policy"]).toBe("compact");
    expect(after["retention.ms"]).toBe("-1");
    expect(after["min.cleanable.dirty.ratio"]).toBe("0.1");
  });

  it("adds partitions but reports a decrease as an error naming the topic", async () => {
    const [, facts] = testSpecs();
    if (facts === undefined) throw new Error("no spec");
    await apply([facts]);
    await apply([{ ...facts, partitions: 4 }]);
    const metadata = await admin.fetchTopicMetadata({ topics: [facts.name] });
    expect(metadata.topics[0]?.partitions.length).toBe(4);
    const [action] = await planTopics(admin, [{ ...facts, partitions: 2 }]);
    expect(action?.kind).toBe("error");
    expect(action?.kind === "error" ? action.message : "").toContain(facts.name);
  });

  it("the CLI applies the project's topics/topics.json and the results topic is compacted per the broker", async () => {
    const env = { ...process.env, KAFKA_BROKERS: serviceEndpoints().brokers.join(",") };
    const first = await run("node_modules/.bin/node", ["bin/agentops", "topics", "apply"], { env });
    expect(first.stdout).toMatch(/(created|unchanged|updated) +agentops\.metric-results\.v1/);
    const second = await run("node_modules/.bin/node", ["bin/agentops", "topics", "apply"], { env });
    const spec = await loadTopicSpecFile();
    for (const topic of spec.topics) expect(second.stdout).toContain(`unchanged ${topic.name}`);
    const results = await brokerConfigs("agentops.metric-results.v1");
    expect(results["cleanup.policy"]).toBe("compact");
    const listing = await run("node_modules/.bin/node", ["bin/agentops", "topics", "list"], { env });
    expect(listing.stdout).toMatch(/agentops\.metric-results\.v1 +3p r1 compact -1 +3p r1 compact -1/);
  });

  it("a broken spec file is refused with the field named, before touching the broker", async () => {
    expect(() =>
      parseTopicSpecFile(
        JSON.stringify({
          topics: [
            {
              name: "x",
              description: "d",
              partitions: 0,
              replication: 1,
              cleanupPolicy: "compact",
              retentionMs: -1,
              key: "k",
              value: "v",
            },
          ],
        }),
        "inline",
      ),
    ).toThrow(/topics\.0\.partitions/);
    const dir = await mkdtemp(join(tmpdir(), "agentops-topics-"));
    const file = join(dir, "bad.json");
    await writeFile(
      file,
      JSON.stringify({
        topics: [
          {
            name: "x",
            description: "d",
            partitions: 1,
            replication: 1,
            cleanupPolicy: "forever",
            retentionMs: -1,
            key: "k",
            value: "v",
          },
        ],
      }),
    );
    const failure = await run("node_modules/.bin/node", [
      "bin/agentops",
      "topics",
      "apply",
      "--file",
      file,
      "--brokers",
      "127.0.0.1:1",
    ]).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("topics.0.cleanupPolicy");
  });
});
