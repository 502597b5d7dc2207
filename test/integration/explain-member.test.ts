import { join } from "node:path";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Explanation } from "../../src/lineage/explanation.ts";
import { groupKeyOfResult } from "../../src/lineage/group-keys.ts";
import { memberExplainer, queryMember } from "../../src/explain/member-client.ts";
import { startViewServer } from "../../src/serve/server.ts";
import { ViewState } from "../../src/serve/view-state.ts";
import { explainReplay } from "../../src/explain/replay-explain.ts";
import { explainAudit } from "../../src/explain/audit-explain.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../src/metrics/engine-config.ts";
import { topicNames } from "../../src/stream/topic-names.ts";
import { expectUnitsAddUp } from "../support/explain-adds-up.ts";
import { closeAll, testKafka, uniqueName } from "../support/kafka.ts";
import {
  describeDifferences,
  embeddedReplay,
  killAllProcessors,
  runAgentopsOk,
  startProcessor,
  stopProcessor,
  testDir,
  waitForResults,
  type EmbeddedReplay,
} from "../support/processes.ts";

/**
 * `agentops explain --member` against running members on the shared broker: the engine in an
 * instance of its own beside one with the other roles. Asked at the member without the engine,
 * the query is redirected (307) to the engine's member, found through the engine's consumer group;
 * the answer adds up to the published figure and names the same units as the replay's explanation,
 * its facts placed by topic, partition and offset; the audit rebuild gives the same answer.
 */

let dir: string;
let facts: string;
let expected: EmbeddedReplay;
let kafka: Kafka;

beforeAll(async () => {
  dir = testDir("agentops-explain-");
  facts = join(dir, "facts.ndjson");
  await runAgentopsOk(["generate", "--out", facts, "--tasks", "60", "--seed", "7"]);
  expected = await embeddedReplay(facts, dir);
  kafka = testKafka();
});

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

/** The units of an explanation, without where their facts were read (a file line or a topic offset). */
function unitsOf(explanation: Explanation): unknown[] {
  return explanation.units.map((unit) => ({ ...unit, facts: unit.facts.map((fact) => ({ ...fact, origin: null })) }));
}

describe("agentops explain against a running member", () => {
  it(
    "a member without the engine redirects to the engine's member, whose answer adds up and equals the replay's",
    { timeout: 300_000 },
    async () => {
      const prefix = uniqueName("explain");
      const topics = topicNames(prefix);
      const front = await startProcessor({
        topicPrefix: prefix,
        name: "explain-front",
        dir,
        extraArgs: ["--roles", "ingest,run-monitor"],
      });
      const engine = await startProcessor({
        topicPrefix: prefix,
        name: "explain-engine",
        dir,
        extraArgs: ["--roles", "engine"],
      });
      await runAgentopsOk(["produce", "--input", facts, "--topic-prefix", prefix]);
      const quiet = await waitForResults(kafka, topics.results, expected.results, 120_000);
      expect(
        quiet.comparison.differingKeys,
        describeDifferences(expected.results, quiet.actual, quiet.comparison),
      ).toEqual([]);

      const frontUrl = `http://127.0.0.1:${String(front.metricsPort)}`;
      const engineUrl = `http://127.0.0.1:${String(engine.metricsPort)}`;
      const keys = [...expected.results.keys()];
      const key = keys.find(
        (candidate) => candidate.includes('"metric_id":"operational-latency-ms"') && !candidate.includes('"cohort":{}'),
      ) as string;
      expect(key).toBeDefined();

      const redirect = await fetch(`${frontUrl}/explain?key=${encodeURIComponent(key)}`, { redirect: "manual" });
      expect(redirect.status).toBe(307);
      expect(redirect.headers.get("location")?.startsWith(`${engineUrl}/explain?`)).toBe(true);

      const viaFront = await queryMember(frontUrl, { key });
      if (viaFront.kind !== "explained") throw new Error(`not explained: ${JSON.stringify(viaFront)}`);
      expectUnitsAddUp(viaFront.explanation);
      expect(viaFront.explanation.units.length).toBeGreaterThan(0);
      for (const unit of viaFront.explanation.units) {
        for (const fact of unit.facts) expect(fact.origin).toMatchObject({ topic: topics.facts });
      }

      // The live view's lineage route gives the same answer, asked of the same member.
      const view = await startViewServer(
        new ViewState({ mode: "kafka", description: "test", error: null }),
        "127.0.0.1",
        0,
        { explain: memberExplainer(frontUrl) },
      );
      try {
        const lineage = await fetch(new URL(`/api/explain?key=${encodeURIComponent(key)}`, view.url));
        expect(lineage.status).toBe(200);
        expect(await lineage.json()).toEqual(viaFront);
      } finally {
        await view.close();
      }

      const replayed = await explainReplay(
        { input: facts, engine: DEFAULT_ENGINE_CONFIG, state: "memory", stateDir: undefined, cacheMb: 16 },
        { key },
      );
      if (replayed.kind !== "explained") throw new Error("the replay did not explain the key");
      expect(unitsOf(viaFront.explanation)).toEqual(unitsOf(replayed.explanation));
      expect(viaFront.explanation.totals).toEqual(replayed.explanation.totals);

      // The audit rebuild from the engine-facts topic explains the same units, placed at the same offsets.
      const audited = await explainAudit(
        kafka,
        topics.engineFacts,
        { engine: DEFAULT_ENGINE_CONFIG, state: "memory", stateDir: undefined, cacheMb: 16 },
        { key },
      );
      expect(audited).toEqual(viaFront);

      // Every group the member publishes adds up (asked at the engine's member itself).
      for (const group of new Set(keys.map(groupKeyOfResult))) {
        const answered = await queryMember(engineUrl, { key: group });
        if (answered.kind !== "explained") throw new Error(`not explained: ${group}`);
        expectUnitsAddUp(answered.explanation);
      }

      expect(await stopProcessor(front, "SIGTERM")).toBe(0);
      expect(await stopProcessor(engine, "SIGTERM")).toBe(0);
    },
  );
});
