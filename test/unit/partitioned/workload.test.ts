import { describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import { isAgentEvent, type MetricFact } from "../../../src/contract/facts.ts";
import { parseFactJson } from "../../../src/contract/parse-fact.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { MetricEngine } from "../../../src/metrics/metric-engine.ts";
import { PartitionedEngine } from "../../../src/partitioned/partitioned-engine.ts";
import { generateWorkloadLines } from "../../../src/workload/workload.ts";

/**
 * The partitioned engine on the generated workload (snapshots of many tasks with early and final
 * cutoffs, calls with their costs, repairs, redeliveries, conflicts, re-reports, late facts): the
 * property test's arbitraries are small, this is the structure a deployment sees.
 */
describe("partitioned engine on the generated workload", () => {
  const { lines } = generateWorkloadLines({ seed: 7, tasks: 400 });
  const facts: MetricFact[] = [];
  for (const line of lines) {
    const parsed = parseFactJson(line);
    if (parsed.ok && !isAgentEvent(parsed.fact)) facts.push(parsed.fact);
  }
  const catalog = shippedCatalog();
  const single = new MetricEngine(DEFAULT_ENGINE_CONFIG, catalog);
  facts.forEach((fact, index) => single.ingest(fact, index + 1));
  const expected = single.results().map((entry) => entry.json);
  const expectedConflicts = single.conflicts().map((conflict) => conflict.identity);

  it.each([1, 3, 4])(
    "gives the single engine's results and conflicts on %i partitions, committing every 500 facts",
    (partitions) => {
      expect(facts.length).toBeGreaterThan(5_000);
      expect(
        expected.some((json) => json.includes('"scope":{"kind":"snapshot"') && json.includes('"status":"PUBLISHED"')),
      ).toBe(true);
      const engine = new PartitionedEngine(DEFAULT_ENGINE_CONFIG, catalog, { partitions });
      facts.forEach((fact, index) => {
        engine.ingest(fact, index + 1);
        if ((index + 1) % 500 === 0) engine.run();
      });
      expect(engine.results().map((entry) => entry.json)).toEqual(expected);
      expect(engine.conflicts().map((conflict) => conflict.identity)).toEqual(expectedConflicts);
      // The joins ran across partitions: task units read members owned elsewhere.
      if (partitions > 1) expect(engine.traffic.responses).toBeGreaterThan(0);
    },
  );
});
