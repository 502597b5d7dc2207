import { readFileSync } from "node:fs";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { METRIC_IDS, shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import type { Explanation } from "../../../src/lineage/explanation.ts";
import { groupKeyOfResult } from "../../../src/lineage/group-keys.ts";
import { explainGroup } from "../../../src/lineage/lineage.ts";
import { explainReplay } from "../../../src/explain/replay-explain.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import type { EngineLineage } from "../../../src/metrics/metric-engine.ts";
import { replayFile } from "../../../src/stream/transports/embedded/embedded-replay.ts";
import { expectUnitsAddUp } from "../../support/explain-adds-up.ts";

const SAMPLE = "samples/facts.ndjson";

/** Every group of the sample's replay, explained from the engine's state as the replay closes it. */
async function explainEverything(): Promise<{ explanations: Explanation[]; published: string[] }> {
  const explanations: Explanation[] = [];
  let published: string[] = [];
  const engineObserver = {
    opened: () => undefined,
    closing: (_partition: number, lineage: EngineLineage) => {
      published = lineage.resultKeys();
      for (const group of new Set(published.map(groupKeyOfResult))) explanations.push(explainGroup(lineage, group));
    },
  };
  const outcome = await Effect.runPromise(
    replayFile({ input: SAMPLE }, { engine: DEFAULT_ENGINE_CONFIG, tripwires: {}, engineObserver }, shippedCatalog()),
  );
  // The explained figures are the replay's output, byte for byte.
  expect(Array.from(outcome.sinks.results(), (entry) => entry.key)).toEqual(published);
  return { explanations, published };
}

describe("explain over the bundled sample", { timeout: 120_000 }, () => {
  it("for all 14 metrics, every group's units add up to its published figures", async () => {
    const { explanations, published } = await explainEverything();
    expect(new Set(explanations.map((explanation) => explanation.metric_id))).toEqual(new Set(METRIC_IDS));
    for (const explanation of explanations) expectUnitsAddUp(explanation);
    expect(explanations.reduce((sum, explanation) => sum + explanation.results.length, 0)).toBe(published.length);
  });

  it("names each unit's facts with the sample line they were read from", async () => {
    const lines = readFileSync(SAMPLE, "utf8").split("\n");
    const { explanations } = await explainEverything();
    let checked = 0;
    for (const explanation of explanations) {
      for (const unit of explanation.units) {
        for (const fact of unit.facts) {
          expect(fact.origin).not.toBeNull();
          const line = fact.origin !== null && "line" in fact.origin ? lines[fact.origin.line - 1] : undefined;
          expect((JSON.parse(line ?? "{}") as { fact_id?: string }).fact_id).toBe(fact.fact_id);
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it("explainReplay answers a result key with the figure, uncovered units with what they lack, and refuses an ambiguous metric", async () => {
    const options = {
      input: SAMPLE,
      engine: DEFAULT_ENGINE_CONFIG,
      state: "disk",
      stateDir: undefined,
      cacheMb: 16,
    } as const;
    const ambiguous = await explainReplay(options, { metric: "operational-latency-ms", cohort: {} });
    expect(ambiguous.kind).toBe("unmatched");
    const keys = ambiguous.kind === "unmatched" ? ambiguous.matches : [];
    expect(keys.length).toBeGreaterThan(1);
    const cohortless = keys.find((key) => key.includes('"cohort":{}')) as string;
    const answered = await explainReplay(options, { key: cohortless });
    if (answered.kind !== "explained") throw new Error("the key was not explained");
    const { explanation } = answered;
    expect(explanation.results.map((entry) => entry.key)).toEqual([cohortless]);
    expectUnitsAddUp(explanation);
    // The cohort-less record holds the calls without a complete tuple: uncovered, and saying so.
    expect(explanation.units.length).toBeGreaterThan(0);
    for (const unit of explanation.units) {
      expect(unit.status).toBe("uncovered");
      expect(unit.reasons).toEqual({ INCOMPLETE_ATTRIBUTION: 1 });
      expect(unit.missing).toEqual(["a complete attribution tuple (provider, model, role, runtime)"]);
    }
  });
});
