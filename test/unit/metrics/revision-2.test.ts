import { describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import type { MetricFact } from "../../../src/contract/facts.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { SUM_PAST_SAFE_INTEGER } from "../../../src/metrics/exact-sum.ts";
import { MetricEngine } from "../../../src/metrics/metric-engine.ts";
import {
  HOUR,
  TUPLE,
  WINDOW0,
  at,
  cost,
  definedTask,
  evaluate,
  modelCall,
  parsedWithInvalidMeasures,
  rawCost,
  rawModelCall,
  rawSummary,
  snapshot,
  summary,
  terminalTask,
} from "./fact-builders.ts";

/**
 * Contract revision 2 (shared/spec/observation-contract.md §6), the engine side: one named rule
 * test per change (changes 3 and 5, 6, 8, 9 and 10 also have theirs beside the older rules they
 * replace: parse-fact.test.ts, conflicts.test.ts, reading-rules.test.ts, windows-and-snapshots.test.ts,
 * input-eligibility.test.ts). Each fails when its change is reverted.
 */

const SNAP = { snapshot: "snap-1" } as const;
const TPL = { role_template: "tpl-a" } as const;
const USD_PROVIDER = { currency: "USD", source: "PROVIDER", cost_basis: "list-price" } as const;

describe("revision 2 change 1: an invalid measure no longer rejects the fact (seed §6.1 'absent/invalid duration excludes the call')", () => {
  it("a summary with elapsed_ms -1 still makes its Delivery terminal: the task is comparable, not OPEN_DELIVERY; only cycle time lacks it", () => {
    const invalid = parsedWithInvalidMeasures(rawSummary({ elapsed_ms: -1 }));
    const evaluated = evaluate([snapshot({ tasks: [definedTask()] }), invalid]);
    expect(evaluated.get("task-cohort-comparison-eligibility", {}, SNAP).exclusions).toEqual({});
    expect(evaluated.get("delivery-terminal-outcome-rate", {}, WINDOW0).value).toEqual({ SUCCEEDED: 1 });
    const cycle = evaluated.get("delivery-cycle-time-ms", {}, WINDOW0);
    expect(cycle.status).toBe("NOT_AVAILABLE");
    expect(cycle.coverage).toMatchObject({ numerator: 0, denominator: 1 });
  });

  it("a cost with an invalid money field is not eligible money (INVALID_COST), and the call it is linked to stays a candidate", () => {
    const evaluated = evaluate([modelCall(), parsedWithInvalidMeasures(rawCost({ amount_minor: -5 }))]);
    const money = evaluated.records("operational-attributable-cost");
    expect(money).toHaveLength(1);
    expect(money[0]).toMatchObject({
      status: "NOT_AVAILABLE",
      exclusions: { INVALID_COST: 1 },
      coverage: { numerator: 0, denominator: 1 },
    });
  });

  it("a call with an invalid span still brings its cost and its tokens; the evidence rate still counts it", () => {
    const evaluated = evaluate([parsedWithInvalidMeasures(rawModelCall({ span_duration_ms: "fast" })), cost()]);
    expect(evaluated.get("operational-attributable-cost", { ...TUPLE, ...USD_PROVIDER }, WINDOW0).value).toBe(250);
    expect(evaluated.get("operational-token-usage", { ...TUPLE, direction: "output" }, WINDOW0).value).toBe(50);
    expect(evaluated.get("operational-latency-ms", TUPLE, WINDOW0).coverage).toMatchObject({
      numerator: 0,
      denominator: 1,
    });
    expect(evaluated.get("direct-evidence-basis-rate", {}, WINDOW0).coverage.denominator).toBe(2);
  });
});

describe("revision 2 change 2: exact sums; past 2^53 − 1 a result is NOT_AVAILABLE with the reason, never rounded or infinite", () => {
  const MAX_TOKENS = 1e12;
  /** n calls of 10^12 output tokens each (copies of one parsed call under new identities), plus `extra` tokens on one more. */
  const tokenCalls = (count: number, extra: number): MetricFact[] => {
    const big = modelCall({ call_id: "big", output_tokens: MAX_TOKENS });
    return [
      ...Array.from(
        { length: count },
        (_, index) => ({ ...big, fact_id: `f-big-${index}`, call_id: `big-${index}` }) as MetricFact,
      ),
      modelCall({ call_id: "extra", output_tokens: extra }),
    ];
  };
  const output = { ...TUPLE, direction: "output" } as const;

  it("9007 calls of 10^12 tokens plus 199254740991 is exactly 2^53 − 1: published exactly; one token more is NOT_AVAILABLE", () => {
    const atLimit = evaluate(tokenCalls(9007, 199_254_740_991)).get("operational-token-usage", output, WINDOW0);
    expect(atLimit.status).toBe("PUBLISHED");
    expect(atLimit.value).toBe(Number.MAX_SAFE_INTEGER);
    const past = evaluate(tokenCalls(9007, 199_254_740_992)).get("operational-token-usage", output, WINDOW0);
    expect(past).toMatchObject({
      status: "NOT_AVAILABLE",
      value: null,
      measures: null,
      na_reason: SUM_PAST_SAFE_INTEGER,
    });
    expect(past.coverage).toMatchObject({ numerator: 9008, denominator: 9008 });
  });

  it("money of many costs past 2^53 − 1 in one slice is NOT_AVAILABLE with the reason; a retraction brings it back exactly", () => {
    const costs = Array.from({ length: 10 }, (_, index) => cost({ cost_id: `k-${index}`, amount_minor: 1e15 }));
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    for (const fact of [modelCall(), ...costs]) engine.ingest(fact);
    const over = engine.results().find((entry) => entry.result.metric_id === "operational-attributable-cost")?.result;
    expect(over).toMatchObject({ status: "NOT_AVAILABLE", na_reason: SUM_PAST_SAFE_INTEGER, value: null });
    // A conflicting second version of one cost quarantines both versions: 9 × 10^15 is exact again.
    engine.ingest(cost({ cost_id: "k-0", amount_minor: 1 }));
    const back = engine.results().find((entry) => entry.result.metric_id === "operational-attributable-cost")?.result;
    expect(back).toMatchObject({ status: "PUBLISHED", value: 9e15 });
  });

  it("a duration at the range (10^10 ms) sums in integer microseconds without loss", () => {
    const result = evaluate([
      modelCall({ call_id: "a", span_duration_ms: 1e10 }),
      modelCall({ call_id: "b", span_duration_ms: 0.001 }),
    ]).get("operational-latency-ms", TUPLE, WINDOW0);
    expect(result.measures?.sum).toBe(10_000_000_000.001);
  });
});

describe("revision 2 change 4: summaries join tasks only by exact Delivery and Task identities (seed §6.2 rule 2)", () => {
  it("a TERMINAL summary without task_id does not join: the member is open (OPEN_DELIVERY)", () => {
    const evaluated = evaluate([snapshot({ tasks: [definedTask()] }), summary({ task_id: undefined })]);
    expect(evaluated.get("task-cohort-comparison-eligibility", {}, SNAP).exclusions).toEqual({ OPEN_DELIVERY: 1 });
    // The Delivery itself is terminal for the Delivery metrics.
    expect(evaluated.get("delivery-terminal-outcome-rate", {}, WINDOW0).value).toEqual({ SUCCEEDED: 1 });
  });

  it("a summary whose task_id belongs to another task joins neither task", () => {
    const evaluated = evaluate([
      snapshot({ tasks: [definedTask(), definedTask({ task_id: "t-2", members: ["d-2"] })] }),
      summary({ task_id: "t-2" }),
      summary({ delivery_id: "d-2", task_id: "t-2" }),
    ]);
    expect(evaluated.get("task-cohort-comparison-eligibility", {}, SNAP).exclusions).toEqual({ OPEN_DELIVERY: 1 });
    expect(evaluated.get("task-cohort-comparison-eligibility", {}, SNAP).coverage).toMatchObject({
      numerator: 2,
      denominator: 2,
    });
  });

  it("an OPEN summary that carries requirement_changed: read when it joins, ignored when it names no task", () => {
    const { task, facts } = terminalTask("t-1");
    const joined = evaluate([
      snapshot({ tasks: [task] }),
      ...facts,
      summary({ delivery_id: "t-1-d", status: "OPEN", requirement_changed: true, event_time: at(9 * HOUR) }),
    ]);
    expect(joined.get("role-template-rework-rate", TPL, SNAP).exclusions).toEqual({ REQUIREMENT_CHANGED: 1 });
    const unjoined = evaluate([
      snapshot({ tasks: [task] }),
      ...facts,
      summary({
        delivery_id: "t-1-d",
        status: "OPEN",
        task_id: undefined,
        requirement_changed: true,
        event_time: at(9 * HOUR),
      }),
    ]);
    expect(unjoined.get("role-template-rework-rate", TPL, SNAP).exclusions).toEqual({});
  });
});

describe("revision 2 change 7: direct evidence is a common eligibility condition (seed §5)", () => {
  const manual = { basis: "MANUAL", source: "ops" } as const;

  it("a nondirect call is a covered candidate excluded as NONDIRECT_EVIDENCE; an unreadable one is uncovered", () => {
    const evaluated = evaluate([
      modelCall({ call_id: "direct", span_duration_ms: 100 }),
      modelCall({ call_id: "manual", span_duration_ms: 900, provenance: manual }),
      modelCall({ call_id: "unknown", span_duration_ms: 900, provenance: null }),
    ]);
    const latency = evaluated.get("operational-latency-ms", TUPLE, WINDOW0);
    expect(latency.value).toBe(100);
    expect(latency.eligible_units).toBe(1);
    expect(latency.exclusions).toEqual({ NONDIRECT_EVIDENCE: 1 });
    expect(latency.coverage).toMatchObject({ numerator: 2, denominator: 3 });
  });

  it("a Delivery whose terminal summary is nondirect is excluded from every Delivery metric; unreadable is uncovered", () => {
    const evaluated = evaluate([
      summary({ delivery_id: "a", outcome: "FAILED" }),
      summary({ delivery_id: "b", provenance: { basis: "DERIVED" } }),
      summary({ delivery_id: "c", provenance: null }),
    ]);
    const outcome = evaluated.get("delivery-terminal-outcome-rate", {}, WINDOW0);
    expect(outcome.value).toEqual({ FAILED: 1 });
    expect(outcome.exclusions).toEqual({ NONDIRECT_EVIDENCE: 1 });
    expect(outcome.coverage).toMatchObject({ numerator: 2, denominator: 3 });
    expect(evaluated.get("delivery-cycle-time-ms", {}, WINDOW0).measures).toMatchObject({ contributing: 1 });
  });

  it("a nondirect or unreadable cost is not eligible money (NONDIRECT_COST, UNREADABLE_PROVENANCE_COST)", () => {
    const evaluated = evaluate([
      modelCall(),
      cost({ cost_id: "k-manual", provenance: manual }),
      cost({ cost_id: "k-null", provenance: null }),
      cost({ cost_id: "k-ok", amount_minor: 7 }),
    ]);
    const money = evaluated.get("operational-attributable-cost", { ...TUPLE, ...USD_PROVIDER }, WINDOW0);
    expect(money.value).toBe(7);
    expect(money.exclusions).toEqual({ NONDIRECT_COST: 1, UNREADABLE_PROVENANCE_COST: 1 });
  });

  it("task readings use direct joined summaries only: a nondirect terminal summary leaves the member open", () => {
    const evaluated = evaluate([snapshot({ tasks: [definedTask()] }), summary({ provenance: { basis: "ESTIMATED" } })]);
    expect(evaluated.get("task-cohort-comparison-eligibility", {}, SNAP).exclusions).toEqual({ OPEN_DELIVERY: 1 });
  });

  it("direct-evidence-basis-rate keeps nondirect units in its denominator (contributing 0): the gate is for the other metrics", () => {
    const evaluated = evaluate([
      modelCall({ call_id: "direct" }),
      modelCall({ call_id: "manual", provenance: manual }),
    ]);
    expect(evaluated.get("direct-evidence-basis-rate", {}, WINDOW0).measures).toMatchObject({
      numerator: 1,
      denominator: 2,
    });
  });
});
