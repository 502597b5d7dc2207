import { describe, expect, it } from "vitest";
import type { MetricFact } from "../../../src/contract/facts.ts";
import {
  HOUR,
  TUPLE,
  WINDOW0,
  at,
  cost,
  definedTask,
  evaluate,
  modelCall,
  packet,
  repair,
  snapshot,
  summary,
  terminalTask,
  type Raw,
} from "./fact-builders.ts";

/** Seed §6.5: per-metric required inputs, eligibility and exclusions (money in contract §2). */

const SNAP = { snapshot: "snap-1" } as const;
const TPL = { role_template: "tpl-a" };
const USD_SLICE = { cost_basis: "list-price", currency: "USD", source: "PROVIDER" };

function twentyTasks(extra: (i: number) => MetricFact[] = () => []): { tasks: Raw[]; facts: MetricFact[] } {
  const tasks: Raw[] = [];
  const facts: MetricFact[] = [];
  for (let i = 0; i < 20; i += 1) {
    const built = terminalTask(`t-${i}`);
    tasks.push(built.task);
    facts.push(...built.facts, ...extra(i));
  }
  return { tasks, facts };
}

describe("seed §6.5 role-template-rework-rate: terminal tasks with ≥1 linked attributable repair / eligible terminal tasks", () => {
  it("no-repair tasks contribute 0 and stay in the denominator; repairs link by task_id or by a member delivery_id", () => {
    const { tasks, facts } = twentyTasks((i) => {
      if (i === 0) return [repair({ repair_id: "r-0", packet_id: undefined, task_id: "t-0" })];
      if (i === 1) return [repair({ repair_id: "r-1", packet_id: undefined, delivery_id: "t-1-d" })];
      if (i === 2)
        return [
          repair({ repair_id: "r-2a", packet_id: undefined, task_id: "t-2" }),
          repair({ repair_id: "r-2b", packet_id: undefined, task_id: "t-2", finding_id: "f-2" }),
        ];
      return [];
    });
    const result = evaluate([snapshot({ tasks }), ...facts]).get("role-template-rework-rate", TPL, SNAP);
    expect(result.status).toBe("PUBLISHED");
    expect(result.measures).toMatchObject({ numerator: 3, denominator: 20 });
    expect(result.value).toBe(3 / 20);
    expect(result.coverage).toMatchObject({ numerator: 20, denominator: 20 });
  });

  it("a non-attributable repair is not a repair hit", () => {
    const { tasks, facts } = twentyTasks((i) =>
      i === 0 ? [repair({ packet_id: undefined, task_id: "t-0", attributable: false })] : [],
    );
    expect(
      evaluate([snapshot({ tasks }), ...facts]).get("role-template-rework-rate", TPL, SNAP).measures?.numerator,
    ).toBe(0);
  });

  it("a repair after the snapshot cutoff is not read", () => {
    const { tasks, facts } = twentyTasks((i) =>
      i === 0 ? [repair({ packet_id: undefined, task_id: "t-0", event_time: at(23 * HOUR + 1) })] : [],
    );
    expect(
      evaluate([snapshot({ tasks }), ...facts]).get("role-template-rework-rate", TPL, SNAP).measures?.numerator,
    ).toBe(0);
  });

  it("below minimum sample coverage is still published: 19 eligible tasks vs minimum 20 → BELOW_MINIMUM_SAMPLE, value and measures null", () => {
    const { tasks, facts } = twentyTasks();
    const result = evaluate([snapshot({ tasks: tasks.slice(0, 19) }), ...facts]).get(
      "role-template-rework-rate",
      TPL,
      SNAP,
    );
    expect(result.status).toBe("BELOW_MINIMUM_SAMPLE");
    expect(result.value).toBeNull();
    expect(result.measures).toBeNull();
    expect(result.na_reason).toBeNull();
    expect(result.eligible_units).toBe(19);
    expect(result.minimum_sample).toBe(20);
    expect(result.coverage).toEqual({
      numerator: 19,
      denominator: 19,
      raw_ratio: 1,
      state: "FULL",
      alert: false,
      threshold_hundredths: 10,
    });
  });

  it("20 eligible tasks vs minimum 20 → PUBLISHED", () => {
    const { tasks, facts } = twentyTasks();
    const result = evaluate([snapshot({ tasks }), ...facts]).get("role-template-rework-rate", TPL, SNAP);
    expect(result.status).toBe("PUBLISHED");
    expect(result.value).toBe(0);
    expect(result.eligible_units).toBe(20);
  });

  it("minimum sample counts eligible units, not candidates: 19 eligible + 1 mixed stays below minimum", () => {
    const { tasks, facts } = twentyTasks();
    tasks[19] = definedTask({ task_id: "t-19", members: ["t-19-d", "t-19-e"] });
    facts.push(summary({ delivery_id: "t-19-e", task_id: "t-19", outcome: "FAILED" }));
    const result = evaluate([snapshot({ tasks }), ...facts]).get("role-template-rework-rate", TPL, SNAP);
    expect(result.status).toBe("BELOW_MINIMUM_SAMPLE");
    expect(result.coverage).toMatchObject({ numerator: 20, denominator: 20 });
  });
});

describe("seed §6.5 role-template-trajectory-partial-cost: same task inputs plus linked direct cost", () => {
  it("sums eligible member-Delivery costs (direct and via calls) per exact slice; estimated and unattributed costs are excluded and counted", () => {
    const { tasks, facts } = twentyTasks((i) => [
      cost({ cost_id: `direct-${i}`, call_id: undefined, delivery_id: `t-${i}-d`, amount_minor: 10 }),
      modelCall({ call_id: `call-${i}`, delivery_id: `t-${i}-d` }),
      cost({ cost_id: `via-${i}`, call_id: `call-${i}`, amount_minor: 5 }),
      ...(i === 0
        ? [
            cost({ cost_id: "est", call_id: undefined, delivery_id: "t-0-d", estimated: true }),
            cost({ cost_id: "shared", call_id: undefined, delivery_id: "t-0-d", attribution: "SHARED" }),
          ]
        : []),
    ]);
    const result = evaluate([snapshot({ tasks }), ...facts]).get(
      "role-template-trajectory-partial-cost",
      { ...TPL, ...USD_SLICE },
      SNAP,
    );
    expect(result.status).toBe("PUBLISHED");
    expect(result.value).toBe(300);
    expect(result.measures).toMatchObject({ sum: 300, contributing: 20, currency: "USD" });
    expect(result.exclusions).toEqual({ ESTIMATED_COST: 1, UNATTRIBUTED_COST: 1 });
  });

  it("partial coverage remains visible and does not exclude an otherwise computable value", () => {
    const { tasks, facts } = twentyTasks((i) => [
      cost({ cost_id: `c-${i}`, call_id: undefined, delivery_id: `t-${i}-d` }),
    ]);
    const extra = terminalTask("t-nomoney");
    const result = evaluate([snapshot({ tasks: [...tasks, extra.task] }), ...facts, ...extra.facts]).get(
      "role-template-trajectory-partial-cost",
      { ...TPL, ...USD_SLICE },
      SNAP,
    );
    expect(result.status).toBe("PUBLISHED");
    expect(result.coverage).toMatchObject({ numerator: 20, denominator: 21, state: "PARTIAL" });
    expect(result.value).toBe(20 * 250);
  });

  it("costs of an excluded (open) task are not summed", () => {
    const tasks = [definedTask()];
    const result = evaluate([
      snapshot({ tasks }),
      summary({ status: "OPEN" }),
      cost({ call_id: undefined, delivery_id: "d-1" }),
    ]).records("role-template-trajectory-partial-cost");
    expect(result).toHaveLength(1);
    expect(result[0]).toMatchObject({
      cohort: TPL,
      status: "NOT_AVAILABLE",
      value: null,
      exclusions: { OPEN_DELIVERY: 1 },
    });
  });
});

describe("seed §6.5 packet-rework-rate: all in-scope eligible packets; no-repair packets contribute 0; unavailable attribution affects coverage", () => {
  it("no-repair packets contribute 0 but stay covered", () => {
    const result = evaluate([
      packet({ packet_id: "a" }),
      packet({ packet_id: "b" }),
      packet({ packet_id: "c" }),
      repair({ packet_id: "a" }),
    ]).get("packet-rework-rate", {}, WINDOW0);
    expect(result.measures).toMatchObject({ numerator: 1, denominator: 3 });
    expect(result.coverage).toMatchObject({ numerator: 3, denominator: 3, state: "FULL" });
  });

  it("repair_attribution UNAVAILABLE is uncovered, not a 0: it leaves the denominator and lowers coverage", () => {
    const result = evaluate([
      packet({ packet_id: "a" }),
      repair({ packet_id: "a" }),
      packet({ packet_id: "b", repair_attribution: "UNAVAILABLE" }),
    ]).get("packet-rework-rate", {}, WINDOW0);
    expect(result.measures).toMatchObject({ numerator: 1, denominator: 1 });
    expect(result.value).toBe(1);
    expect(result.coverage).toMatchObject({ numerator: 1, denominator: 2, state: "PARTIAL" });
  });

  it("an UNAVAILABLE packet with a repair is still not a hit (its attribution is unknown)", () => {
    const result = evaluate([
      packet({ packet_id: "a" }),
      packet({ packet_id: "b", repair_attribution: "UNAVAILABLE" }),
      repair({ packet_id: "b" }),
    ]).get("packet-rework-rate", {}, WINDOW0);
    expect(result.measures).toMatchObject({ numerator: 0, denominator: 1 });
  });

  it("a packet of an unsupported governance revision is excluded from the base scope and counted", () => {
    const result = evaluate([
      packet({ packet_id: "a" }),
      packet({ packet_id: "b", governance_revision: "0.3" }),
      repair({ packet_id: "b" }),
    ]).get("packet-rework-rate", {}, WINDOW0);
    expect(result.exclusions).toEqual({ UNSUPPORTED_GOVERNANCE_REVISION: 1 });
    expect(result.coverage).toMatchObject({ numerator: 1, denominator: 1 });
    expect(result.measures).toMatchObject({ numerator: 0, denominator: 1 });
  });

  it("a non-attributable repair edge is not a repair", () => {
    const result = evaluate([packet(), repair({ attributable: false })]).get("packet-rework-rate", {}, WINDOW0);
    expect(result.value).toBe(0);
  });
});

describe("seed §6.5 operational-usage-availability: numerator requires an explicit applicable source; unavailable classification affects coverage", () => {
  it("usage_source NONE is covered and contributes 0; an absent usage_source is uncovered", () => {
    const result = evaluate([
      modelCall({ call_id: "p", usage_source: "PROVIDER" }),
      modelCall({ call_id: "h", usage_source: "HOST" }),
      modelCall({ call_id: "n", usage_source: "NONE" }),
      modelCall({ call_id: "x", usage_source: undefined }),
    ]).get("operational-usage-availability", TUPLE, WINDOW0);
    expect(result.measures).toMatchObject({ numerator: 2, denominator: 3 });
    expect(result.value).toBe(2 / 3);
    expect(result.coverage).toMatchObject({ numerator: 3, denominator: 4 });
  });

  it("only unclassified calls → N/A, never a false zero-usage claim", () => {
    const result = evaluate([modelCall({ usage_source: undefined })]).get(
      "operational-usage-availability",
      TUPLE,
      WINDOW0,
    );
    expect(result.status).toBe("NOT_AVAILABLE");
    expect(result.value).toBeNull();
  });
});

describe("seed §6.5 direct-evidence-basis-rate: nondirect facts contribute 0; missing/unreadable provenance affects coverage, never nondirect", () => {
  it("DIRECT_HOST and DIRECT_PROVIDER are direct; DERIVED, ESTIMATED and MANUAL count 0 and stay in the denominator", () => {
    const bases = ["DIRECT_HOST", "DIRECT_PROVIDER", "DERIVED", "ESTIMATED", "MANUAL"];
    const result = evaluate(
      bases.map((basis) => modelCall({ call_id: basis, provenance: { basis, source: "x" } })),
    ).get("direct-evidence-basis-rate", {}, WINDOW0);
    expect(result.measures).toMatchObject({ numerator: 2, denominator: 5 });
    expect(result.coverage).toMatchObject({ numerator: 5, denominator: 5 });
  });

  it("null provenance and an unknown basis are unreadable: uncovered, not in the denominator, never nondirect", () => {
    const facts = [
      modelCall({ call_id: "a", provenance: { basis: "DIRECT_HOST" } }),
      modelCall({ call_id: "b", provenance: null }),
      modelCall({ call_id: "c", provenance: undefined }),
      modelCall({ call_id: "d", provenance: { basis: "direct_host" } }),
      modelCall({ call_id: "e", provenance: { basis: "TELEPATHY" } }),
    ];
    const result = evaluate(facts).get("direct-evidence-basis-rate", {}, WINDOW0);
    expect(result.measures).toMatchObject({ numerator: 1, denominator: 1 });
    expect(result.value).toBe(1);
    expect(result.coverage).toMatchObject({ numerator: 1, denominator: 5 });
  });

  it("units are accepted model calls, costs and Delivery summaries; packets, repairs and snapshots are not", () => {
    const facts = [modelCall(), cost(), summary(), packet(), repair(), snapshot()];
    const result = evaluate(facts).get("direct-evidence-basis-rate", {}, WINDOW0);
    expect(result.coverage.denominator).toBe(3);
  });

  it("revision 2 change 9: judge calls (operational = false) and their costs are units of no metric, direct-evidence-basis-rate included", () => {
    const evaluated = evaluate([modelCall({ operational: false }), cost(), summary()]);
    for (const metricId of [
      "operational-latency-ms",
      "operational-token-usage",
      "operational-attributable-cost",
      "operational-usage-availability",
    ] as const) {
      expect(evaluated.records(metricId)).toEqual([]);
    }
    // Only the Delivery summary is a unit: not the judge call, not the cost linked to it.
    expect(evaluated.get("direct-evidence-basis-rate", {}, WINDOW0).coverage.denominator).toBe(1);
  });

  it("revision 2 change 9: a cost linked to a Delivery, or to an accepted operational call, is a unit; a cost of an unknown call is not", () => {
    const evaluated = evaluate([
      modelCall(),
      cost(),
      cost({ cost_id: "k-d", call_id: undefined, delivery_id: "d-9" }),
      cost({ cost_id: "k-orphan", call_id: "no-such-call" }),
    ]);
    expect(evaluated.get("direct-evidence-basis-rate", {}, WINDOW0).coverage.denominator).toBe(3);
  });
});

describe("seed §6.5 operational-token-usage: keep input/output separate; never synthesize a total", () => {
  it("input and output tokens are separate records and no total is published", () => {
    const evaluated = evaluate([
      modelCall({ call_id: "a", input_tokens: 100, output_tokens: 10 }),
      modelCall({ call_id: "b", input_tokens: 200, output_tokens: 20 }),
    ]);
    const records = evaluated.records("operational-token-usage");
    expect(records.map((result) => [result.cohort["direction"], result.value])).toEqual([
      ["input", 300],
      ["output", 30],
    ]);
    for (const line of evaluated.lines) expect(line).not.toMatch(/total/i);
    expect(evaluated.results.some((result) => result.value === 330)).toBe(false);
  });

  it("a call reporting only output tokens is uncovered for input only", () => {
    const evaluated = evaluate([
      modelCall({ call_id: "a", input_tokens: undefined, output_tokens: 10 }),
      modelCall({ call_id: "b", input_tokens: 5, output_tokens: 10 }),
    ]);
    expect(evaluated.get("operational-token-usage", { ...TUPLE, direction: "input" }, WINDOW0).coverage).toMatchObject({
      numerator: 1,
      denominator: 2,
    });
    expect(evaluated.get("operational-token-usage", { ...TUPLE, direction: "output" }, WINDOW0).coverage).toMatchObject(
      { numerator: 2, denominator: 2 },
    );
  });
});

describe("contract §2 money: eligible only when PROVIDER/HOST, PROJECT and not estimated; sums kept apart by exact (currency, source, cost_basis)", () => {
  const slice = (over: Record<string, string>) => ({ ...TUPLE, ...USD_SLICE, ...over });

  it("two currencies never add up: USD and EUR → two records", () => {
    const evaluated = evaluate([
      modelCall(),
      cost({ cost_id: "usd", currency: "USD", amount_minor: 100 }),
      cost({ cost_id: "eur", currency: "EUR", amount_minor: 70 }),
    ]);
    const records = evaluated.records("operational-attributable-cost");
    expect(records).toHaveLength(2);
    expect(evaluated.get("operational-attributable-cost", slice({ currency: "USD" }), WINDOW0)).toMatchObject({
      value: 100,
      measures: { currency: "USD" },
    });
    expect(evaluated.get("operational-attributable-cost", slice({ currency: "EUR" }), WINDOW0)).toMatchObject({
      value: 70,
      measures: { currency: "EUR" },
    });
    expect(records.some((result) => result.value === 170)).toBe(false);
  });

  it("different cost bases never add up", () => {
    const evaluated = evaluate([
      modelCall(),
      cost({ cost_id: "a", cost_basis: "list-price", amount_minor: 100 }),
      cost({ cost_id: "b", cost_basis: "negotiated", amount_minor: 40 }),
    ]);
    expect(evaluated.records("operational-attributable-cost")).toHaveLength(2);
    expect(evaluated.get("operational-attributable-cost", slice({ cost_basis: "negotiated" }), WINDOW0).value).toBe(40);
  });

  it("different sources never add up (PROVIDER vs HOST)", () => {
    const evaluated = evaluate([
      modelCall(),
      cost({ cost_id: "a", source: "PROVIDER", amount_minor: 100 }),
      cost({ cost_id: "b", source: "HOST", amount_minor: 40 }),
    ]);
    expect(evaluated.get("operational-attributable-cost", slice({ source: "HOST" }), WINDOW0).value).toBe(40);
    expect(evaluated.get("operational-attributable-cost", slice({ source: "PROVIDER" }), WINDOW0).value).toBe(100);
  });

  it.each([
    ["estimated = true", { estimated: true }, "ESTIMATED_COST"],
    ["source ESTIMATE", { source: "ESTIMATE" }, "ESTIMATED_COST"],
    ["attribution SHARED", { attribution: "SHARED" }, "UNATTRIBUTED_COST"],
    ["attribution UNATTRIBUTED", { attribution: "UNATTRIBUTED" }, "UNATTRIBUTED_COST"],
  ])("a cost with %s is never in the sum and is counted as an exclusion", (_name, override, reason) => {
    const evaluated = evaluate([
      modelCall(),
      cost({ cost_id: "good", amount_minor: 100 }),
      cost({ cost_id: "bad", amount_minor: 9999, ...override }),
    ]);
    const records = evaluated.records("operational-attributable-cost");
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ cohort: slice({}), value: 100, exclusions: { [reason]: 1 } });
  });

  it("money with candidates but no eligible money → one NOT_AVAILABLE record without money coordinates, with coverage", () => {
    const evaluated = evaluate([
      modelCall({ call_id: "a" }),
      modelCall({ call_id: "b" }),
      cost({ call_id: "a", estimated: true }),
    ]);
    const records = evaluated.records("operational-attributable-cost");
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      cohort: TUPLE,
      status: "NOT_AVAILABLE",
      value: null,
      measures: null,
      eligible_units: 0,
      exclusions: { ESTIMATED_COST: 1 },
    });
    expect(records[0]?.coverage).toMatchObject({ numerator: 0, denominator: 2, state: "NO_COVERAGE", alert: true });
  });

  it("trajectory-partial-cost: a Delivery with only ineligible money → one NOT_AVAILABLE record without money coordinates", () => {
    const records = evaluate([summary(), cost({ call_id: undefined, delivery_id: "d-1", source: "ESTIMATE" })]).records(
      "trajectory-partial-cost",
    );
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      cohort: {},
      status: "NOT_AVAILABLE",
      coverage: { numerator: 0, denominator: 1 },
      exclusions: { ESTIMATED_COST: 1 },
    });
  });

  it("trajectory-partial-cost links costs by delivery_id and through a call's delivery_id", () => {
    const deliveries = Array.from({ length: 20 }, (_, i) => summary({ delivery_id: `d-${i}`, task_id: undefined }));
    const calls = Array.from({ length: 10 }, (_, i) => modelCall({ call_id: `c-${i}`, delivery_id: `d-${i}` }));
    const costs = Array.from({ length: 20 }, (_, i) =>
      i < 10
        ? cost({ cost_id: `k-${i}`, call_id: `c-${i}`, amount_minor: 1 })
        : cost({ cost_id: `k-${i}`, call_id: undefined, delivery_id: `d-${i}`, amount_minor: 2 }),
    );
    const result = evaluate([...deliveries, ...calls, ...costs]).get("trajectory-partial-cost", USD_SLICE, WINDOW0);
    expect(result).toMatchObject({ status: "PUBLISHED", value: 30, eligible_units: 20 });
  });
});

describe("contract §3 tuple-sliced metrics: incomplete attribution tuple", () => {
  it("→ the cohort-less record with exclusions {INCOMPLETE_ATTRIBUTION: n}, coverage 0/n, alert true, no value, and never inside a tuple slice", () => {
    const evaluated = evaluate([
      modelCall({ call_id: "a", provider: undefined }),
      modelCall({ call_id: "b", model: undefined }),
      modelCall({ call_id: "c" }),
      cost({ call_id: "a" }),
    ]);
    for (const metricId of [
      "operational-latency-ms",
      "operational-token-usage",
      "operational-attributable-cost",
      "operational-usage-availability",
    ] as const) {
      const cohortLess = evaluated.get(metricId, {}, WINDOW0);
      expect(cohortLess).toMatchObject({
        status: "NOT_AVAILABLE",
        value: null,
        measures: null,
        eligible_units: 0,
        exclusions: { INCOMPLETE_ATTRIBUTION: 2 },
      });
      expect(cohortLess.coverage).toMatchObject({ numerator: 0, denominator: 2, alert: true });
      for (const sliced of evaluated.records(metricId).filter((result) => Object.keys(result.cohort).length > 0)) {
        expect(sliced.exclusions).not.toHaveProperty("INCOMPLETE_ATTRIBUTION");
        expect(sliced.coverage.denominator).toBe(1);
      }
    }
    // The cost of the incomplete call is in no slice.
    expect(
      evaluated.records("operational-attributable-cost").filter((result) => result.status === "PUBLISHED"),
    ).toEqual([]);
  });
});
