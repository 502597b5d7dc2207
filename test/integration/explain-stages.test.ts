import { join } from "node:path";
import type { Kafka } from "kafkajs";
import { afterAll, describe, expect, it } from "vitest";
import type { Explanation } from "../../src/lineage/explanation.ts";
import { explainReplay } from "../../src/explain/replay-explain.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../src/metrics/engine-config.ts";
import { topicNames } from "../../src/stream/topic-names.ts";
import { expectUnitsAddUp } from "../support/explain-adds-up.ts";
import { closeAll, testKafka, uniqueName } from "../support/kafka.ts";
import {
  embeddedReplay,
  expectResultsTopic,
  killAllProcessors,
  runAgentops,
  runAgentopsOk,
  startProcessor,
  stopProcessor,
  testDir,
} from "../support/processes.ts";

/**
 * `agentops explain` for a cluster running the partitioned engine (`--engine stages`): its members
 * answer `/explain` with 501 and say what to use instead; `--from-topic --engine stages` rebuilds the
 * single engine from the stage facts topic and explains the figure the stages published, with the
 * replay's units and facts placed at facts-topic offsets.
 */

let kafka: Kafka | undefined;

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

/** The units of an explanation, without where their facts were read (a file line or a topic offset). */
function unitsOf(explanation: Explanation): unknown[] {
  return explanation.units.map((unit) => ({ ...unit, facts: unit.facts.map((fact) => ({ ...fact, origin: null })) }));
}

describe("agentops explain over the partitioned engine", () => {
  it("a stages member answers 501 with the fix; the stage-facts rebuild explains its published figure", async () => {
    const dir = testDir("agentops-explain-stages-");
    const facts = join(dir, "facts.ndjson");
    await runAgentopsOk(["generate", "--out", facts, "--tasks", "60", "--seed", "5"]);
    const expected = await embeddedReplay(facts, dir);
    kafka = testKafka();
    const prefix = uniqueName("explain-stages");
    const topics = topicNames(prefix);
    // A shared, loaded machine can take minutes to start a JVM-backed processor group.
    const member = await startProcessor(
      { topicPrefix: prefix, name: "explain-stages", dir, extraArgs: ["--engine", "stages"] },
      300_000,
    );
    await runAgentopsOk(["produce", "--input", facts, "--topic-prefix", prefix]);
    await expectResultsTopic(kafka, topics.results, expected.results, 240_000);

    const key = [...expected.results.keys()].find(
      (candidate) => candidate.includes('"metric_id":"operational-latency-ms"') && !candidate.includes('"cohort":{}'),
    );
    if (key === undefined) throw new Error("the workload has no latency figure with a cohort");

    const refused = await runAgentops(["explain", key, "--member", `http://127.0.0.1:${String(member.metricsPort)}`]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("answered 501");
    expect(refused.stderr).toContain("--from-topic --engine stages");

    const { stdout } = await runAgentopsOk(
      ["explain", key, "--from-topic", "--engine", "stages", "--json", "--topic-prefix", prefix],
      300_000,
    );
    const explanation = JSON.parse(stdout) as Explanation;
    expectUnitsAddUp(explanation);
    // The figure explained is the one the partitioned engine published.
    expect(explanation.results.map(({ result }) => result)).toEqual([expected.results.get(key)]);
    for (const unit of explanation.units)
      for (const fact of unit.facts) expect(fact.origin).toMatchObject({ topic: topics.facts });

    const replayed = await explainReplay(
      { input: facts, engine: DEFAULT_ENGINE_CONFIG, state: "memory", stateDir: undefined, cacheMb: 16 },
      { key },
    );
    if (replayed.kind !== "explained") throw new Error("the replay did not explain the key");
    expect(unitsOf(explanation)).toEqual(unitsOf(replayed.explanation));
    expect(explanation.totals).toEqual(replayed.explanation.totals);

    // Without --from-topic the flag names its use.
    const misplaced = await runAgentops(["explain", key, "--input", facts, "--engine", "stages"]);
    expect(misplaced.code).not.toBe(0);
    expect(misplaced.stderr).toContain("--engine");
    expect(misplaced.stderr).toContain("only applies with --from-topic");
    expect(await stopProcessor(member, "SIGTERM")).toBe(0);
  }, 600_000);
});
