import { describe, expect, it } from "vitest";
import type { MetricId } from "../../../src/catalog/metric-definitions.ts";
import type { MetricFact } from "../../../src/contract/facts.ts";
import { SUM_PAST_SAFE_INTEGER } from "../../../src/metrics/exact-sum.ts";
import type { MetricResult } from "../../../src/contract/result-record.ts";
import {
  DAY,
  HOUR,
  TUPLE,
  WINDOW0,
  at,
  cost,
  definedTask,
  evaluate,
  modelCall,
  repair,
  snapshot,
  summary,
  terminalDeliveries,
  terminalTask,
  type Raw,
} from "./fact-builders.ts";

/**
 * Contract revision 3 (shared/spec/observation-contract.md §7), the engine's readings: one named
 * test per change (1, 2, 3, 4, 6, 7, 13). Each fails when its change is reverted.
 */

const SNAP = { snapshot: "snap-1" } as const;
const MANUAL = { basis: "MANUAL", source: "ops" } as const;
const OTHER_TUPLE = { ...TUPLE, model: "gpt-5-mini" } as const;
const USD_PROVIDER = { currency: "USD", source: "PROVIDER", cost_basis: "list-price" } as const;
const OUTCOME = "role-model-task-outcome-rate";

/** `count` eligible terminal tasks of one template, each with its own member Delivery. */
function templateTasks(prefix: string, template: string, count: number): { tasks: Raw[]; facts: MetricFact[] } {
  const tasks: Raw[] = [];
  const facts: MetricFact[] = [];
  for (let index = 0; index < count; index++) {
    const built = terminalTask(`${prefix}-${index}`, { template });
    tasks.push(built.task);
    facts.push(...built.facts);
  }
  return { tasks, facts };
}

/** Each record's cohort and exclusions: what says which slice a unit entered and why it was left out. */
const slices = (records: readonly MetricResult[]): unknown[] =>
  records.map((result) => [result.cohort, result.exclusions]);

/** A cost linked to a Delivery (not to a call). */
const deliveryCost = (costId: string, deliveryId: string, amountMinor: number): MetricFact =>
  cost({ cost_id: costId, call_id: undefined, delivery_id: deliveryId, amount_minor: amountMinor });

describe("revision 3 change 1: a later TERMINAL summary is a unit of no metric (seed §5 'accepted' fact)", () => {
  const earliest = summary({ delivery_id: "d-1" });
  const later = summary({ delivery_id: "d-1", outcome: "FAILED", provenance: MANUAL, event_time: at(11 * HOUR) });
  const laterNextDay = summary({ delivery_id: "d-1", outcome: "FAILED", event_time: at(DAY + HOUR) });

  it("direct-evidence-basis-rate counts the earliest TERMINAL summary only, in any arrival order", () => {
    for (const facts of [
      [earliest, later],
      [later, earliest],
    ]) {
      const evaluated = evaluate(facts);
      const evidence = evaluated.get("direct-evidence-basis-rate", {}, WINDOW0);
      expect(evidence.coverage).toMatchObject({ numerator: 1, denominator: 1 });
      expect(evidence.measures).toMatchObject({ numerator: 1, denominator: 1 });
      expect(evaluated.conflicts.map((conflict) => conflict.reason)).toEqual(["LATER_TERMINAL_SUMMARY"]);
    }
  });

  it("a later TERMINAL summary in another window adds no unit there; OPEN summaries stay units", () => {
    const open = summary({ delivery_id: "d-1", status: "OPEN", event_time: at(DAY + 2 * HOUR) });
    const evaluated = evaluate([earliest, laterNextDay, open]);
    const nextDay = evaluated.get("direct-evidence-basis-rate", {}, { window: at(DAY) });
    expect(nextDay.coverage).toMatchObject({ numerator: 1, denominator: 1 });
    expect(evaluated.get("direct-evidence-basis-rate", {}, WINDOW0).coverage.denominator).toBe(1);
  });
});

describe("revision 3 change 2: NOT_AVAILABLE, for any reason, precedes BELOW_MINIMUM_SAMPLE", () => {
  it("a trajectory-partial-cost slice past 2^53 − 1 with 1 of its 20 units is NOT_AVAILABLE", () => {
    const costs = Array.from({ length: 10 }, (_, index) => deliveryCost(`k-${index}`, "d-1", 1e15));
    const money = evaluate([summary(), ...costs]).records("trajectory-partial-cost");
    expect(money).toHaveLength(1);
    expect(money[0]).toMatchObject({ status: "NOT_AVAILABLE", na_reason: SUM_PAST_SAFE_INTEGER, value: null });
    expect(money[0]).toMatchObject({ eligible_units: 1, minimum_sample: 20 });
  });
});

describe("revision 3 change 3: tuple attribution of a task reads direct evidence only (seed §5)", () => {
  it("a task whose only linked operational call is nondirect enters no tuple: covered, NONDIRECT_EVIDENCE", () => {
    const { task, facts } = terminalTask("t-1");
    const call = modelCall({ task_id: "t-1", provenance: MANUAL });
    const records = evaluate([snapshot({ tasks: [task] }), ...facts, call]).records(OUTCOME);
    expect(slices(records)).toEqual([[{}, { NONDIRECT_EVIDENCE: 1 }]]);
    expect(records[0]?.coverage).toMatchObject({ numerator: 1, denominator: 1 });
  });

  it("a nondirect call beside a direct one adds no tuple; unreadable calls alone leave the task uncovered", () => {
    const first = terminalTask("t-1");
    const second = terminalTask("t-2");
    const facts = [
      snapshot({ tasks: [first.task, second.task] }),
      ...first.facts,
      ...second.facts,
      modelCall({ call_id: "direct", task_id: "t-1" }),
      modelCall({ call_id: "manual", task_id: "t-1", model: "gpt-5-mini", provenance: MANUAL }),
      modelCall({ call_id: "unreadable", task_id: "t-2", provenance: null }),
    ];
    const evaluated = evaluate(facts);
    expect(evaluated.get(OUTCOME, TUPLE, SNAP).coverage).toMatchObject({ numerator: 1, denominator: 1 });
    expect(evaluated.find(OUTCOME, OTHER_TUPLE, SNAP)).toBeUndefined();
    const unattributed = evaluated.get(OUTCOME, {}, SNAP);
    expect(unattributed.exclusions).toEqual({ INCOMPLETE_ATTRIBUTION: 1 });
    expect(unattributed.coverage).toMatchObject({ numerator: 0, denominator: 1 });
  });
});

describe("revision 3 change 4: no task disappears from role-model-task-outcome-rate (seed §6.2)", () => {
  it("a joined terminal task with no linked call is INCOMPLETE_ATTRIBUTION; an open one is no unit", () => {
    const joined = terminalTask("t-1");
    const open = definedTask({ task_id: "t-2", members: ["d-open"] });
    const openSummary = summary({ delivery_id: "d-open", task_id: "t-2", status: "OPEN" });
    const facts = [snapshot({ tasks: [joined.task, open] }), ...joined.facts, openSummary];
    const records = evaluate(facts).records(OUTCOME);
    expect(slices(records)).toEqual([[{}, { INCOMPLETE_ATTRIBUTION: 1 }]]);
    expect(records[0]?.coverage).toMatchObject({ numerator: 0, denominator: 1 });
  });

  it("a call after the cutoff does not attribute the task either", () => {
    const { task, facts } = terminalTask("t-1");
    const late = modelCall({ task_id: "t-1", event_time: at(23 * HOUR + 1) });
    const records = evaluate([snapshot({ tasks: [task] }), ...facts, late]).records(OUTCOME);
    expect(slices(records)).toEqual([[{}, { INCOMPLETE_ATTRIBUTION: 1 }]]);
  });
});

describe("revision 3 change 6: a repair joins a task by exact identities (seed §6.2 rule 2)", () => {
  // Two cohorts of 20 eligible tasks each, so that role-template-rework-rate publishes its numerator.
  const a = templateTasks("a", "tpl-a", 20);
  const b = templateTasks("b", "tpl-b", 20);
  const base = [snapshot({ tasks: [...a.tasks, ...b.tasks] }), ...a.facts, ...b.facts];
  const reworked = (facts: readonly MetricFact[], template: string): number | null | undefined => {
    const result = evaluate([...base, ...facts]).get("role-template-rework-rate", { role_template: template }, SNAP);
    return result.measures?.numerator;
  };

  it("a repair naming a task_id and another task's member joins neither task (it counted for both)", () => {
    const crossed = repair({ packet_id: undefined, task_id: "a-0", delivery_id: "b-0-d" });
    expect(reworked([crossed], "tpl-a")).toBe(0);
    expect(reworked([crossed], "tpl-b")).toBe(0);
  });

  it("naming both of one task's identities it joins that task; naming one, it joins by that one", () => {
    const exact = repair({ repair_id: "r-exact", packet_id: undefined, task_id: "a-0", delivery_id: "a-0-d" });
    const byDelivery = repair({ repair_id: "r-delivery", packet_id: undefined, delivery_id: "b-1-d" });
    const byTask = repair({ repair_id: "r-task", packet_id: undefined, task_id: "b-2" });
    const repairs = [exact, byDelivery, byTask];
    expect(reworked(repairs, "tpl-a")).toBe(1);
    expect(reworked(repairs, "tpl-b")).toBe(2);
  });
});

describe("revision 3 change 7: requirement change is a common exclusion for Delivery units (seed §5)", () => {
  const DELIVERY_METRICS: readonly MetricId[] = [
    "delivery-terminal-outcome-rate",
    "delivery-cycle-time-ms",
    "delivery-stage-reach",
  ];

  it("a Delivery whose summary says requirement_changed stays a covered candidate of each Delivery metric", () => {
    const changed = summary({ delivery_id: "changed", requirement_changed: true });
    const evaluated = evaluate([changed, summary({ delivery_id: "plain", outcome: "INFRASTRUCTURE_FAILURE" })]);
    for (const metricId of DELIVERY_METRICS) {
      const result = evaluated.get(metricId, {}, WINDOW0);
      expect(result.exclusions).toEqual({ REQUIREMENT_CHANGED: 1 });
      expect(result.coverage).toMatchObject({ numerator: 2, denominator: 2 });
      expect(result.eligible_units).toBe(1);
    }
    // Infrastructure failure stays an outcome category of the Delivery metrics.
    expect(evaluated.get("delivery-terminal-outcome-rate", {}, WINDOW0).value).toEqual({ INFRASTRUCTURE_FAILURE: 1 });
  });

  it("read from direct OPEN summaries and the deciding TERMINAL one; later TERMINAL, nondirect ones ignored", () => {
    const reasons = (extra: MetricFact): Readonly<Record<string, number>> =>
      evaluate([summary(), extra]).get("delivery-terminal-outcome-rate", {}, WINDOW0).exclusions;
    const open = { status: "OPEN", requirement_changed: true, event_time: at(9 * HOUR) } as const;
    expect(reasons(summary(open))).toEqual({ REQUIREMENT_CHANGED: 1 });
    expect(reasons(summary({ ...open, provenance: MANUAL }))).toEqual({});
    expect(reasons(summary({ requirement_changed: true, event_time: at(11 * HOUR) }))).toEqual({});
  });

  it("the OPEN summary read for the flag is read wherever its time falls, and is in as_of (decision 21)", () => {
    const laterOpen = summary({ status: "OPEN", requirement_changed: true, event_time: at(12 * HOUR) });
    const result = evaluate([summary(), laterOpen]).get("delivery-cycle-time-ms", {}, WINDOW0);
    expect(result).toMatchObject({ exclusions: { REQUIREMENT_CHANGED: 1 }, as_of: at(12 * HOUR) });
  });

  it("trajectory-partial-cost leaves the changed Delivery's money out", () => {
    const deliveries = terminalDeliveries(21, (index) => ({ requirement_changed: index === 0 }));
    const costs = deliveries.map((_, index) => deliveryCost(`k-${index}`, `dd-${index}`, 10));
    const money = evaluate([...deliveries, ...costs]).get("trajectory-partial-cost", USD_PROVIDER, WINDOW0);
    expect(money).toMatchObject({ status: "PUBLISHED", value: 200, eligible_units: 20 });
    expect(money.exclusions).toEqual({ REQUIREMENT_CHANGED: 1 });
    expect(money.coverage).toMatchObject({ numerator: 21, denominator: 21 });
  });
});

describe("revision 3 change 13: an N/A reason says what happened, with the counts beside it", () => {
  it("20 calls, all nondirect evidence: the reason names them, not 'no call exists'", () => {
    const calls = Array.from({ length: 20 }, (_, index) => modelCall({ call_id: `c-${index}`, provenance: MANUAL }));
    const latency = evaluate(calls).get("operational-latency-ms", TUPLE, WINDOW0);
    expect(latency).toMatchObject({ status: "NOT_AVAILABLE", eligible_units: 0 });
    expect(latency.coverage).toMatchObject({ numerator: 20, denominator: 20 });
    const reason = "N/A: 20 candidate calls, 20 covered, none eligible; excluded: 20 NONDIRECT_EVIDENCE";
    expect(latency.na_reason).toBe(reason);
  });

  it("money with no eligible cost names the costs left out", () => {
    const facts = [modelCall(), cost({ source: "ESTIMATE" }), cost({ cost_id: "k-2", attribution: "SHARED" })];
    const result = evaluate(facts).get("operational-attributable-cost", TUPLE, WINDOW0);
    const reason = "N/A: 1 candidate call, none covered; costs left out: 1 ESTIMATED_COST, 1 UNATTRIBUTED_COST";
    expect(result.na_reason).toBe(reason);
  });
});
