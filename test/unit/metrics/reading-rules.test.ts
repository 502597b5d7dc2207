import { describe, expect, it } from "vitest";
import { METRIC_IDS } from "../../../src/catalog/metric-definitions.ts";
import type { MetricFact } from "../../../src/contract/facts.ts";
import type { MetricResult } from "../../../src/contract/result-record.ts";
import {
  CUTOFF,
  DAY,
  HOUR,
  TUPLE,
  WINDOW0,
  at,
  catalogMinimumSample,
  cost,
  definedTask,
  evaluate,
  modelCall,
  packet,
  repair,
  snapshot,
  summary,
} from "./fact-builders.ts";

/** Seed §7 reading rules and forbidden claims, and the contract §4 result record. */

/** A fact set that makes records of all 14 metrics, with every status and several cohorts. */
function richFacts(): MetricFact[] {
  return [
    snapshot({
      tasks: [
        definedTask(),
        definedTask({ task_id: "t-2", members: ["d-2"] }),
        definedTask({ task_id: "t-3", members: ["d-3"], template_assignment: "BACKFILLED" }),
        definedTask({ task_id: undefined, members: ["d-4"], role_template: undefined }),
      ],
    }),
    summary(),
    summary({ delivery_id: "d-2", task_id: "t-2", status: "OPEN" }),
    summary({ delivery_id: "d-3", task_id: "t-3", elapsed_ms: undefined, stage_reached: undefined }),
    modelCall({ delivery_id: "d-1", task_id: "t-1" }),
    modelCall({
      call_id: "c-2",
      task_id: "t-2",
      role: "reviewer",
      span_duration_ms: undefined,
      input_tokens: undefined,
      output_tokens: undefined,
      usage_source: undefined,
      provenance: null,
    }),
    modelCall({ call_id: "c-3", runtime: undefined }),
    modelCall({ call_id: "judge", operational: false }),
    cost(),
    cost({ cost_id: "eur", currency: "EUR" }),
    cost({ cost_id: "est", call_id: "c-2", estimated: true }),
    cost({ cost_id: "d-cost", call_id: undefined, delivery_id: "d-3", source: "HOST" }),
    packet(),
    packet({ packet_id: "p-2", repair_attribution: "UNAVAILABLE" }),
    packet({ packet_id: "p-3", governance_revision: "0.1", event_time: at(DAY + HOUR) }),
    repair(),
    // A later window whose only fact lacks every optional input: the Delivery metrics and the evidence rate are N/A there.
    summary({
      delivery_id: "d-bare",
      task_id: undefined,
      elapsed_ms: undefined,
      stage_reached: undefined,
      provenance: null,
      event_time: at(2 * DAY + HOUR),
    }),
    // A snapshot whose only task has no identity: no task is covered, the eligibility record is N/A.
    snapshot({ snapshot_id: "snap-bare", tasks: [definedTask({ task_id: undefined })] }),
  ];
}

const RESULT_KEYS = [
  "as_of",
  "catalog",
  "cohort",
  "coverage",
  "eligible_units",
  "exclusions",
  "measures",
  "metric_id",
  "metric_version",
  "minimum_sample",
  "na_reason",
  "scope",
  "status",
  "value",
];
const MEASURE_KEYS = ["categories", "contributing", "currency", "denominator", "numerator", "sum", "unit"];
const COVERAGE_KEYS = ["alert", "denominator", "numerator", "raw_ratio", "state", "threshold_hundredths"];
const COHORT_KEYS = new Set([
  "provider",
  "model",
  "role",
  "runtime",
  "role_template",
  "currency",
  "source",
  "cost_basis",
  "direction",
]);

describe("seed §7 never collapse independent metrics into a score; no causal or composite output", () => {
  const evaluated = evaluate(richFacts());

  it("the rich fact set reaches all 14 metrics", () => {
    expect(new Set(evaluated.results.map((result) => result.metric_id))).toEqual(new Set(METRIC_IDS));
  });

  it("results contain no field beyond the contract §4 record (exact key set of every record)", () => {
    for (const result of evaluated.results) {
      expect(Object.keys(result).sort()).toEqual(RESULT_KEYS);
      expect(Object.keys(result.coverage).sort()).toEqual(COVERAGE_KEYS);
      if (result.measures !== null) expect(Object.keys(result.measures).sort()).toEqual(MEASURE_KEYS);
      expect(Object.keys(result.scope).sort()).toEqual(
        result.scope.kind === "window" ? ["end", "kind", "start"] : ["cutoff", "kind", "snapshot_id"],
      );
      for (const key of Object.keys(result.cohort)) expect(COHORT_KEYS.has(key)).toBe(true);
      expect(Object.keys(result.cohort)).toEqual(Object.keys(result.cohort).sort());
      expect(result.catalog).toBe("agentops.evaluation.metric-catalog@1.0.0");
    }
  });

  it("no metric id outside the 14 (no removed metric, profile or score)", () => {
    for (const result of evaluated.results) expect(METRIC_IDS).toContain(result.metric_id);
    for (const line of evaluated.lines)
      expect(line).not.toMatch(
        /utility-profile|configuration-|packet-escalation|qualified-outcome|score|rank|pareto|composite/i,
      );
  });

  it("values are numbers or category maps, never a nested composite", () => {
    for (const result of evaluated.results) {
      if (result.value === null || typeof result.value === "number") continue;
      for (const quotient of Object.values(result.value)) expect(typeof quotient).toBe("number");
    }
  });

  it("minimum_sample is the catalog's, per metric", () => {
    for (const result of evaluated.results) expect(result.minimum_sample).toBe(catalogMinimumSample(result.metric_id));
  });
});

describe("seed §7 missing is never zero: NOT_AVAILABLE always has value null and says why", () => {
  const evaluated = evaluate(richFacts());
  const notAvailable = evaluated.results.filter((result) => result.status === "NOT_AVAILABLE");

  it("every NOT_AVAILABLE record has value null, measures null and an na_reason naming its counts (revision 3)", () => {
    expect(notAvailable.length).toBeGreaterThan(5);
    for (const result of notAvailable) {
      expect(result.value).toBeNull();
      expect(result.measures).toBeNull();
      const { numerator, denominator } = result.coverage;
      if (denominator === 0) expect(result.na_reason?.startsWith("N/A: no candidate ")).toBe(true);
      else expect(result.na_reason?.startsWith(`N/A: ${denominator} candidate `)).toBe(true);
      const covered = numerator === 0 ? "none covered" : `${numerator} covered, none eligible`;
      if (denominator > 0) expect(result.na_reason).toContain(covered);
      for (const [reason, count] of Object.entries(result.exclusions)) {
        expect(result.na_reason).toContain(`${count} ${reason}`);
      }
    }
  });

  it("no other status carries an na_reason; BELOW_MINIMUM_SAMPLE has value and measures null", () => {
    for (const result of evaluated.results) {
      if (result.status !== "NOT_AVAILABLE") expect(result.na_reason).toBeNull();
      if (result.status === "BELOW_MINIMUM_SAMPLE") {
        expect(result.value).toBeNull();
        expect(result.measures).toBeNull();
        expect(result.eligible_units).toBeLessThan(result.minimum_sample);
      }
    }
  });

  it("N/A is reached for every metric (delivery-terminal-outcome-rate through unreadable provenance, revision 2 change 7)", () => {
    const withNa = new Set(notAvailable.map((result) => result.metric_id));
    expect(withNa).toEqual(new Set(METRIC_IDS));
  });
});

describe("seed §7 no cross-context comparison: roles, cohorts, provider/runtime boundaries, cost bases and currencies stay apart", () => {
  it("two roles of the same model are two cohorts with their own values", () => {
    const evaluated = evaluate([
      modelCall({ call_id: "w", role: "writer", span_duration_ms: 100 }),
      modelCall({ call_id: "r", role: "reviewer", span_duration_ms: 300 }),
    ]);
    expect(evaluated.get("operational-latency-ms", TUPLE, WINDOW0).value).toBe(100);
    expect(evaluated.get("operational-latency-ms", { ...TUPLE, role: "reviewer" }, WINDOW0).value).toBe(300);
  });

  it("two role templates are two cohorts (of the role-template metrics)", () => {
    const evaluated = evaluate([
      snapshot({ tasks: [definedTask(), definedTask({ task_id: "t-2", members: ["d-2"], role_template: "tpl-b" })] }),
      summary(),
      summary({ delivery_id: "d-2", task_id: "t-2" }),
    ]);
    expect(
      evaluated.records("role-template-rework-rate").map((result) => [result.cohort, result.eligible_units]),
    ).toEqual([
      [{ role_template: "tpl-a" }, 1],
      [{ role_template: "tpl-b" }, 1],
    ]);
  });

  it("revision 2 change 6: task-cohort-comparison-eligibility is one record per snapshot over every defined task, whatever their templates", () => {
    const evaluated = evaluate([
      snapshot({
        tasks: [
          definedTask(),
          definedTask({ task_id: "t-2", members: ["d-2"], role_template: "tpl-b" }),
          definedTask({ task_id: "t-3", members: ["d-3"], role_template: undefined }),
        ],
      }),
      summary(),
      summary({ delivery_id: "d-2", task_id: "t-2" }),
      summary({ delivery_id: "d-3", task_id: "t-3" }),
    ]);
    const records = evaluated.records("task-cohort-comparison-eligibility");
    expect(records.map((result) => [result.cohort, result.eligible_units])).toEqual([[{}, 3]]);
    expect(records[0]?.exclusions).toEqual({ INCOMPLETE_COHORT_COORDINATES: 1 });
    expect(records[0]?.coverage).toMatchObject({ numerator: 2, denominator: 3 });
  });
});

describe("seed §7 partial is not total", () => {
  it("money and quantity records carry a partial sum and a contributing count, and nothing is labelled total", () => {
    const evaluated = evaluate(richFacts());
    for (const line of evaluated.lines) expect(line).not.toMatch(/total/i);
    const money = evaluated.results.filter(
      (result) => result.metric_id === "operational-attributable-cost" && result.status === "PUBLISHED",
    );
    expect(money.length).toBe(2);
  });
});

describe("contract §4 as_of is the greatest event_time read", () => {
  it("window metrics: the greatest anchoring or linked event_time of the group's units", () => {
    const evaluated = evaluate([
      summary({ delivery_id: "a", event_time: at(9 * HOUR) }),
      summary({ delivery_id: "b", event_time: at(15 * HOUR) }),
      modelCall({ event_time: at(8 * HOUR) }),
      cost({ event_time: at(20 * HOUR) }),
    ]);
    expect(evaluated.get("delivery-cycle-time-ms", {}, WINDOW0).as_of).toBe(at(15 * HOUR));
    expect(evaluated.get("operational-latency-ms", TUPLE, WINDOW0).as_of).toBe(at(8 * HOUR));
    expect(
      evaluated.get(
        "operational-attributable-cost",
        { ...TUPLE, cost_basis: "list-price", currency: "USD", source: "PROVIDER" },
        WINDOW0,
      ).as_of,
    ).toBe(at(20 * HOUR));
    expect(evaluated.get("direct-evidence-basis-rate", {}, WINDOW0).as_of).toBe(at(20 * HOUR));
  });

  it("snapshot metrics: includes the snapshot itself and the summaries and repairs read before the cutoff", () => {
    const evaluated = evaluate([
      snapshot({ event_time: at(12 * HOUR) }),
      summary({ event_time: at(13 * HOUR) }),
      repair({ packet_id: undefined, task_id: "t-1", event_time: at(14 * HOUR) }),
    ]);
    expect(evaluated.get("task-cohort-comparison-eligibility", {}, { snapshot: "snap-1" }).as_of).toBe(at(13 * HOUR));
    expect(evaluated.get("role-template-rework-rate", { role_template: "tpl-a" }, { snapshot: "snap-1" }).as_of).toBe(
      at(14 * HOUR),
    );
    const onlySnapshot = evaluate([snapshot()]).get("task-cohort-comparison-eligibility", {}, { snapshot: "snap-1" });
    expect(onlySnapshot.as_of).toBe(CUTOFF);
  });

  it("as_of is never later than the latest fact given", () => {
    const facts = richFacts();
    const latest = Math.max(...facts.map((fact) => fact.event_time));
    for (const result of evaluate(facts).results as MetricResult[]) {
      expect(result.as_of).not.toBeNull();
      expect(Date.parse(result.as_of as string)).toBeLessThanOrEqual(latest);
    }
  });
});
