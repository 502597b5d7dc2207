import { describe, expect, it } from "vitest";
import type { MetricFact } from "../../../src/contract/facts.ts";
import { WINDOW0, evaluate, modelCall, packet, summary } from "./fact-builders.ts";

/**
 * Seed §6.4 (coverage result and alert policy), through the engine. direct-evidence-basis-rate is
 * the probe: a fact with readable provenance is covered, one with null provenance is not, so the
 * coverage counts are exactly what the test builds.
 */
function evidence(readable: number, unreadable: number): MetricFact[] {
  const facts: MetricFact[] = [];
  for (let i = 0; i < readable; i += 1)
    facts.push(modelCall({ call_id: `ok-${i}`, provenance: { basis: "DIRECT_HOST", source: "host" } }));
  for (let i = 0; i < unreadable; i += 1) facts.push(modelCall({ call_id: `no-${i}`, provenance: null }));
  return facts;
}

const basisRate = (readable: number, unreadable: number, threshold?: number) =>
  evaluate(
    evidence(readable, unreadable),
    threshold === undefined ? {} : { coverageThresholdHundredths: threshold },
  ).get("direct-evidence-basis-rate", {}, WINDOW0);

describe("seed §6.4 coverage states", () => {
  it("denominator = 0 → NO_POPULATION, with ratio and metric value N/A", () => {
    // Only an unsupported-revision packet: counted, but not a coverage candidate.
    const result = evaluate([packet({ governance_revision: "0.1" })]).get("packet-rework-rate", {}, WINDOW0);
    expect(result.coverage).toEqual({
      numerator: 0,
      denominator: 0,
      raw_ratio: null,
      state: "NO_POPULATION",
      alert: false,
      threshold_hundredths: 10,
    });
    expect(result.status).toBe("NOT_AVAILABLE");
    expect(result.value).toBeNull();
  });

  it("denominator > 0 and numerator = 0 → NO_COVERAGE, ratio 0 and metric value N/A", () => {
    const result = basisRate(0, 3);
    expect(result.coverage).toMatchObject({ numerator: 0, denominator: 3, raw_ratio: 0, state: "NO_COVERAGE" });
    expect(result.status).toBe("NOT_AVAILABLE");
    expect(result.value).toBeNull();
  });

  it("0 < numerator < denominator → PARTIAL (and the value is still published)", () => {
    const result = basisRate(1, 2);
    expect(result.coverage).toMatchObject({ numerator: 1, denominator: 3, raw_ratio: 1 / 3, state: "PARTIAL" });
    expect(result.status).toBe("PUBLISHED");
    expect(result.value).toBe(1);
  });

  it("numerator = denominator → FULL", () => {
    const result = basisRate(4, 0);
    expect(result.coverage).toMatchObject({ numerator: 4, denominator: 4, raw_ratio: 1, state: "FULL", alert: false });
  });
});

describe("seed §6.4 LOW_COVERAGE alert: 100 × numerator < T × denominator, no rounding", () => {
  it("the default threshold is 0.10 (10 hundredths) and is published with the coverage", () => {
    expect(basisRate(1, 0).coverage.threshold_hundredths).toBe(10);
  });

  it("equality does not alert: 1 of 10 covered at threshold 10 → no alert", () => {
    const result = basisRate(1, 9, 10);
    expect(result.coverage).toMatchObject({ numerator: 1, denominator: 10, alert: false });
  });

  it("just below the threshold alerts: 1 of 11 covered at threshold 10 → alert", () => {
    expect(basisRate(1, 10, 10).coverage.alert).toBe(true);
  });

  it("threshold 0.99: 99 of 100 covered does not alert (equality), 98 of 100 does", () => {
    expect(basisRate(99, 1, 99).coverage).toMatchObject({
      numerator: 99,
      denominator: 100,
      alert: false,
      threshold_hundredths: 99,
    });
    expect(basisRate(98, 2, 99).coverage).toMatchObject({ numerator: 98, denominator: 100, alert: true });
  });

  it("no rounded value participates: 199/200 (0.995, which rounds to 1.00) vs 197/200 at threshold 99 compare exactly", () => {
    // 100 × 199 = 19900 < 99 × 200 = 19800 is false → no alert; 100 × 197 = 19700 < 19800 → alert.
    expect(basisRate(199, 1, 99).coverage.alert).toBe(false);
    expect(basisRate(197, 3, 99).coverage.alert).toBe(true);
  });

  it("threshold 0 disables the alert, even with no coverage at all", () => {
    const result = basisRate(0, 5, 0);
    expect(result.coverage).toMatchObject({
      numerator: 0,
      denominator: 5,
      state: "NO_COVERAGE",
      alert: false,
      threshold_hundredths: 0,
    });
  });

  it("no population never alerts (denominator > 0 is required)", () => {
    const result = evaluate([packet({ governance_revision: "0.3" })], { coverageThresholdHundredths: 99 }).get(
      "packet-rework-rate",
      {},
      WINDOW0,
    );
    expect(result.coverage.alert).toBe(false);
  });

  it("threshold changes recalculate only the alert, never value or coverage counts", () => {
    const facts = evidence(3, 7);
    const low = evaluate(facts, { coverageThresholdHundredths: 10 });
    const high = evaluate(facts, { coverageThresholdHundredths: 50 });
    expect(low.results.length).toBe(high.results.length);
    low.results.forEach((result, i) => {
      const other = high.results[i];
      expect({ ...other, coverage: { ...other?.coverage, alert: null, threshold_hundredths: null } }).toEqual({
        ...result,
        coverage: { ...result.coverage, alert: null, threshold_hundredths: null },
      });
    });
    const lowRate = low.get("direct-evidence-basis-rate", {}, WINDOW0);
    const highRate = high.get("direct-evidence-basis-rate", {}, WINDOW0);
    expect(lowRate.coverage.alert).toBe(false);
    expect(highRate.coverage.alert).toBe(true);
  });
});

describe("seed §6.4 coverage never gates publication", () => {
  it("low coverage with an alert still publishes the computable value", () => {
    const result = basisRate(1, 19);
    expect(result.coverage.alert).toBe(true);
    expect(result.status).toBe("PUBLISHED");
    expect(result.value).toBe(1);
    expect(result.measures).toMatchObject({ numerator: 1, denominator: 1 });
  });

  it("ordinary negative examples remain covered; only unavailable required inputs are missing", () => {
    // A terminal FAILED Delivery is an ordinary negative for the outcome rate: covered, in the denominator.
    const result = evaluate([
      summary({ delivery_id: "d-ok", outcome: "SUCCEEDED" }),
      summary({ delivery_id: "d-bad", outcome: "FAILED" }),
    ]).get("delivery-terminal-outcome-rate", {}, WINDOW0);
    expect(result.coverage).toMatchObject({ numerator: 2, denominator: 2, state: "FULL" });
    expect(result.value).toEqual({ FAILED: 0.5, SUCCEEDED: 0.5 });
  });

  it("coverage is published with every status, below minimum sample and not available too", () => {
    const results = evaluate([...evidence(1, 1), summary(), packet({ repair_attribution: "UNAVAILABLE" })]).results;
    expect(new Set(results.map((result) => result.status))).toEqual(new Set(["PUBLISHED", "NOT_AVAILABLE"]));
    for (const result of results) {
      expect(Object.keys(result.coverage).sort()).toEqual([
        "alert",
        "denominator",
        "numerator",
        "raw_ratio",
        "state",
        "threshold_hundredths",
      ]);
    }
  });
});
