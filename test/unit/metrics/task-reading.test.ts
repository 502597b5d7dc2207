import { describe, expect, it } from "vitest";
import type { MetricFact } from "../../../src/contract/facts.ts";
import type { MetricResult } from "../../../src/contract/result-record.ts";
import {
  CUTOFF,
  HOUR,
  TUPLE,
  at,
  definedTask,
  evaluate,
  modelCall,
  snapshot,
  summary,
  terminalTask,
  type Raw,
} from "./fact-builders.ts";

/**
 * Seed §6.2 (terminal-task and cohort reading) and contract §3's exclusion precedence, read
 * through task-cohort-comparison-eligibility (every defined task) and role-template-rework-rate
 * (the passing set only).
 */

const SNAP = { snapshot: "snap-1" } as const;
const TPL = { role_template: "tpl-a" };

function run(tasks: readonly Raw[], facts: readonly MetricFact[]) {
  return evaluate([snapshot({ tasks: [...tasks] }), ...facts]);
}

/** The single exclusion reason a task gets, as task-cohort-comparison-eligibility counts it (any cohort). */
function reasonOf(task: Raw, facts: readonly MetricFact[]): { reasons: Record<string, number>; comparable: number } {
  const records = run([task], facts).records("task-cohort-comparison-eligibility");
  expect(records).toHaveLength(1);
  const record = records[0] as MetricResult;
  expect(record.eligible_units).toBe(1);
  const excluded = Object.values(record.exclusions).reduce((a, b) => a + b, 0);
  return { reasons: record.exclusions, comparable: 1 - excluded };
}

describe("seed §6.2 rule 2: a member without an accepted terminal summary at the cutoff is open → OPEN_DELIVERY", () => {
  it("a member with only an OPEN summary", () => {
    expect(reasonOf(definedTask(), [summary({ status: "OPEN" })]).reasons).toEqual({ OPEN_DELIVERY: 1 });
  });

  it("a member with no summary at all", () => {
    const { task, facts } = terminalTask("t-1", { members: ["d-1", "d-2"] });
    expect(reasonOf(task, facts.slice(0, 1)).reasons).toEqual({ OPEN_DELIVERY: 1 });
  });

  it("a member terminal only after the cutoff is open at the cutoff", () => {
    expect(
      reasonOf(definedTask(), [
        summary({ status: "OPEN", event_time: at(9 * HOUR) }),
        summary({ event_time: at(23 * HOUR + 1) }),
      ]).reasons,
    ).toEqual({ OPEN_DELIVERY: 1 });
  });

  it("a member terminal exactly at the cutoff is terminal (event_time ≤ cutoff is read)", () => {
    expect(reasonOf(definedTask(), [summary({ event_time: CUTOFF })])).toEqual({ reasons: {}, comparable: 1 });
  });

  it("members join only by exact Delivery and Task identity: a summary without task_id, or naming another task, leaves the member open", () => {
    expect(reasonOf(definedTask(), [summary({ task_id: undefined })]).reasons).toEqual({ OPEN_DELIVERY: 1 });
    expect(reasonOf(definedTask(), [summary({ task_id: "t-other" })]).reasons).toEqual({ OPEN_DELIVERY: 1 });
  });

  it("an open task is ineligible for terminal-task metrics and uncovered for them (its terminal input is missing)", () => {
    const result = run([definedTask()], [summary({ status: "OPEN" })]).get("role-template-rework-rate", TPL, SNAP);
    expect(result.eligible_units).toBe(0);
    expect(result.exclusions).toEqual({ OPEN_DELIVERY: 1 });
    expect(result.coverage).toMatchObject({ numerator: 0, denominator: 1 });
  });
});

describe("seed §6.2 rule 3: identical outcomes give the unique task outcome; differing ones → MIXED_DELIVERY_OUTCOMES, no winner inferred", () => {
  it("mixed outcomes are excluded and counted, and leave the eligible denominator (but stay covered)", () => {
    const mixed = terminalTask("t-mixed", { members: ["m-1", "m-2"] });
    const mixedFacts = [
      summary({ delivery_id: "m-1", task_id: "t-mixed", outcome: "SUCCEEDED" }),
      summary({ delivery_id: "m-2", task_id: "t-mixed", outcome: "FAILED", event_time: at(11 * HOUR) }),
    ];
    const ok = terminalTask("t-ok");
    const evaluated = run([mixed.task, ok.task], [...mixedFacts, ...ok.facts]);
    const rework = evaluated.get("role-template-rework-rate", TPL, SNAP);
    expect(rework.exclusions).toEqual({ MIXED_DELIVERY_OUTCOMES: 1 });
    expect(rework.eligible_units).toBe(1);
    expect(rework.coverage).toMatchObject({ numerator: 2, denominator: 2 });
    const eligibility = evaluated.get("task-cohort-comparison-eligibility", {}, SNAP);
    expect(eligibility.eligible_units).toBe(2);
    expect(eligibility.exclusions).toEqual({ MIXED_DELIVERY_OUTCOMES: 1 });
  });

  it("identical outcomes over several members give one task outcome", () => {
    const { task, facts } = terminalTask("t-1", { members: ["a", "b", "c"], outcome: "FAILED" });
    expect(reasonOf(task, facts)).toEqual({ reasons: {}, comparable: 1 });
  });

  it("a Delivery's earliest TERMINAL summary decides its outcome; a later, different TERMINAL summary does not make the task mixed", () => {
    const task = definedTask({ members: ["d-1", "d-2"] });
    const facts = [
      summary({ delivery_id: "d-1", outcome: "SUCCEEDED" }),
      summary({ delivery_id: "d-2", outcome: "SUCCEEDED", event_time: at(10 * HOUR) }),
      summary({ delivery_id: "d-2", outcome: "FAILED", event_time: at(11 * HOUR) }),
    ];
    expect(reasonOf(task, facts)).toEqual({ reasons: {}, comparable: 1 });
  });

  it("equal event times: the earliest TERMINAL summary is the one with the smaller fact_id", () => {
    const task = definedTask({ members: ["d-1", "d-2"] });
    const first = summary({ delivery_id: "d-1", outcome: "SUCCEEDED" });
    const tieA = summary({ delivery_id: "d-2", outcome: "SUCCEEDED", fact_id: "a-first" });
    const tieB = summary({ delivery_id: "d-2", outcome: "FAILED", fact_id: "b-second" });
    expect(reasonOf(task, [first, tieB, tieA])).toEqual({ reasons: {}, comparable: 1 });
    const tieA2 = summary({ delivery_id: "d-2", outcome: "FAILED", fact_id: "a-first" });
    const tieB2 = summary({ delivery_id: "d-2", outcome: "SUCCEEDED", fact_id: "b-second" });
    expect(reasonOf(task, [first, tieB2, tieA2]).reasons).toEqual({ MIXED_DELIVERY_OUTCOMES: 1 });
  });
});

describe("seed §6.2 rule 4: missing membership, Task identity or cohort coordinate; absence is never reconstructed", () => {
  it("MISSING_TASK_IDENTITY: a defined task without task_id, even when a summary names its member", () => {
    expect(reasonOf(definedTask({ task_id: undefined }), [summary()]).reasons).toEqual({ MISSING_TASK_IDENTITY: 1 });
  });

  it("UNDEFINED_TASK_MEMBERSHIP: no members, even when summaries name the task", () => {
    expect(reasonOf(definedTask({ members: undefined }), [summary()]).reasons).toEqual({
      UNDEFINED_TASK_MEMBERSHIP: 1,
    });
  });

  it("UNDEFINED_TASK_MEMBERSHIP: an empty member list (docs/semantics.md decision 11)", () => {
    expect(reasonOf(definedTask({ members: [] }), [summary()]).reasons).toEqual({ UNDEFINED_TASK_MEMBERSHIP: 1 });
  });

  it("INCOMPLETE_COHORT_COORDINATES: a missing role_template; the task is counted in the cohort-less record", () => {
    const evaluated = run([definedTask({ role_template: undefined })], [summary()]);
    const result = evaluated.get("task-cohort-comparison-eligibility", {}, SNAP);
    expect(result.exclusions).toEqual({ INCOMPLETE_COHORT_COORDINATES: 1 });
    expect(result.coverage).toMatchObject({ numerator: 0, denominator: 1, alert: true });
    expect(result.value).toBeNull();
  });

  it("INCOMPLETE_COHORT_COORDINATES: a BACKFILLED template never assigns a cohort (never backfill)", () => {
    const evaluated = run([definedTask({ template_assignment: "BACKFILLED" })], [summary()]);
    for (const metricId of [
      "task-cohort-comparison-eligibility",
      "role-template-rework-rate",
      "role-template-trajectory-partial-cost",
    ] as const) {
      const records = evaluated.records(metricId);
      expect(records.map((result) => result.cohort)).toEqual([{}]);
      expect(records[0]?.exclusions).toMatchObject({ INCOMPLETE_COHORT_COORDINATES: 1 });
    }
  });

  it("a template without an assignment kind is not event-time either", () => {
    expect(reasonOf(definedTask({ template_assignment: undefined }), [summary()]).reasons).toEqual({
      INCOMPLETE_COHORT_COORDINATES: 1,
    });
  });
});

describe("contract §3 task-only exclusions", () => {
  it("REQUIREMENT_CHANGED: any accepted summary of a member up to the cutoff says requirement_changed (an OPEN one too)", () => {
    expect(
      reasonOf(definedTask(), [
        summary({ status: "OPEN", requirement_changed: true, event_time: at(9 * HOUR) }),
        summary(),
      ]).reasons,
    ).toEqual({ REQUIREMENT_CHANGED: 1 });
  });

  it("a requirement change reported after the cutoff is not read", () => {
    expect(
      reasonOf(definedTask(), [
        summary(),
        summary({ status: "OPEN", requirement_changed: true, event_time: at(23 * HOUR + 1) }),
      ]),
    ).toEqual({ reasons: {}, comparable: 1 });
  });

  it("INFRASTRUCTURE_FAILURE: the unique outcome is INFRASTRUCTURE_FAILURE", () => {
    expect(reasonOf(definedTask(), [summary({ outcome: "INFRASTRUCTURE_FAILURE" })]).reasons).toEqual({
      INFRASTRUCTURE_FAILURE: 1,
    });
  });

  it("FAILED and CANCELLED tasks are ordinary comparable outcomes, not exclusions", () => {
    expect(reasonOf(definedTask(), [summary({ outcome: "FAILED" })]).comparable).toBe(1);
    expect(reasonOf(definedTask(), [summary({ outcome: "CANCELLED" })]).comparable).toBe(1);
  });
});

describe("contract §3 exclusion precedence: each defined task gets only the first reason that applies", () => {
  const open = summary({ status: "OPEN" });
  const cases: [string, Raw, MetricFact[], string][] = [
    [
      "missing identity beats undefined membership",
      definedTask({ task_id: undefined, members: undefined }),
      [],
      "MISSING_TASK_IDENTITY",
    ],
    [
      "undefined membership beats incomplete cohort coordinates",
      definedTask({ members: undefined, role_template: undefined }),
      [],
      "UNDEFINED_TASK_MEMBERSHIP",
    ],
    [
      "incomplete cohort coordinates beat an open Delivery",
      definedTask({ role_template: undefined }),
      [open],
      "INCOMPLETE_COHORT_COORDINATES",
    ],
    [
      "an open Delivery beats mixed outcomes",
      definedTask({ members: ["d-1", "d-2", "d-3"] }),
      [summary({ delivery_id: "d-1" }), summary({ delivery_id: "d-2", outcome: "FAILED" })],
      "OPEN_DELIVERY",
    ],
    [
      "mixed outcomes beat a requirement change",
      definedTask({ members: ["d-1", "d-2"] }),
      [summary({ delivery_id: "d-1", requirement_changed: true }), summary({ delivery_id: "d-2", outcome: "FAILED" })],
      "MIXED_DELIVERY_OUTCOMES",
    ],
    [
      "a requirement change beats an infrastructure failure",
      definedTask(),
      [summary({ outcome: "INFRASTRUCTURE_FAILURE", requirement_changed: true })],
      "REQUIREMENT_CHANGED",
    ],
  ];
  it.each(cases)("%s", (_name, task, facts, expected) => {
    expect(reasonOf(task, facts).reasons).toEqual({ [expected]: 1 });
  });
});

describe("seed §6.2: task-cohort-comparison-eligibility uses every defined task; other terminal-task metrics only the passing set", () => {
  function fullCohort() {
    const tasks: Raw[] = [];
    const facts: MetricFact[] = [];
    for (let i = 0; i < 20; i += 1) {
      const ok = terminalTask(`ok-${i}`);
      tasks.push(ok.task);
      facts.push(...ok.facts);
    }
    tasks.push(definedTask({ task_id: undefined, members: ["x-0"] }));
    tasks.push(definedTask({ task_id: "x-1", members: undefined }));
    tasks.push(definedTask({ task_id: "x-2", members: ["x-2-d"] }));
    facts.push(summary({ delivery_id: "x-2-d", task_id: "x-2", status: "OPEN" }));
    tasks.push(definedTask({ task_id: "x-3", members: ["x-3-a", "x-3-b"] }));
    facts.push(
      summary({ delivery_id: "x-3-a", task_id: "x-3" }),
      summary({ delivery_id: "x-3-b", task_id: "x-3", outcome: "CANCELLED" }),
    );
    tasks.push(definedTask({ task_id: "x-4", members: ["x-4-d"] }));
    facts.push(summary({ delivery_id: "x-4-d", task_id: "x-4", requirement_changed: true }));
    tasks.push(definedTask({ task_id: "x-5", members: ["x-5-d"] }));
    facts.push(summary({ delivery_id: "x-5-d", task_id: "x-5", outcome: "INFRASTRUCTURE_FAILURE" }));
    tasks.push(definedTask({ task_id: "x-6", members: ["x-6-d"], template_assignment: "BACKFILLED" }));
    facts.push(summary({ delivery_id: "x-6-d", task_id: "x-6" }));
    return run(tasks, facts);
  }

  it("numerator + Σ exclusions = defined tasks (27 in the one snapshot record: 20 comparable, 7 excluded, one per reason)", () => {
    const result = fullCohort().get("task-cohort-comparison-eligibility", {}, SNAP);
    expect(result.status).toBe("PUBLISHED");
    expect(result.eligible_units).toBe(27);
    expect(result.exclusions).toEqual({
      INCOMPLETE_COHORT_COORDINATES: 1,
      INFRASTRUCTURE_FAILURE: 1,
      MISSING_TASK_IDENTITY: 1,
      MIXED_DELIVERY_OUTCOMES: 1,
      OPEN_DELIVERY: 1,
      REQUIREMENT_CHANGED: 1,
      UNDEFINED_TASK_MEMBERSHIP: 1,
    });
    expect(result.measures).toMatchObject({ numerator: 20, denominator: 27 });
    expect(result.value).toBe(20 / 27);
    const excluded = Object.values(result.exclusions).reduce((a, b) => a + b, 0);
    expect((result.measures?.numerator ?? 0) + excluded).toBe(result.eligible_units);
    // Coverage: identity, membership and the event-time cohort coordinate are the required inputs.
    expect(result.coverage).toMatchObject({ numerator: 24, denominator: 27 });
  });

  it("the backfilled task is counted in the snapshot's one record (INCOMPLETE_COHORT_COORDINATES), and in the role-template metrics' cohort-less record, not in tpl-a", () => {
    expect(fullCohort().records("task-cohort-comparison-eligibility")).toHaveLength(1);
    const result = fullCohort().get("role-template-rework-rate", {}, SNAP);
    expect(result.coverage.denominator).toBe(1);
    expect(result.exclusions).toEqual({ INCOMPLETE_COHORT_COORDINATES: 1 });
  });

  it("role-template-rework-rate's eligible denominator is the passing set only (20 of 26)", () => {
    const result = fullCohort().get("role-template-rework-rate", TPL, SNAP);
    expect(result.status).toBe("PUBLISHED");
    expect(result.eligible_units).toBe(20);
    expect(result.measures).toMatchObject({ numerator: 0, denominator: 20 });
    // Mixed, requirement-changed and infrastructure tasks stay covered; missing identity/membership and open do not.
    expect(result.coverage).toMatchObject({ numerator: 23, denominator: 26 });
  });
});

describe("seed §6.5 role-model-task-outcome-rate: one numerator per outcome category over one eligible denominator", () => {
  function outcomeScenario(
    outcomes: readonly string[],
    extra: { tasks: Raw[]; facts: MetricFact[] } = { tasks: [], facts: [] },
  ) {
    const tasks: Raw[] = [...extra.tasks];
    const facts: MetricFact[] = [...extra.facts];
    outcomes.forEach((outcome, i) => {
      // No role_template: the cohort of this metric is the tuple, so that does not exclude the task.
      tasks.push(
        definedTask({
          task_id: `t-${i}`,
          members: [`d-${i}`],
          role_template: undefined,
          template_assignment: undefined,
        }),
      );
      facts.push(
        summary({ delivery_id: `d-${i}`, task_id: `t-${i}`, outcome }),
        modelCall({ call_id: `c-${i}`, delivery_id: `d-${i}`, task_id: `t-${i}` }),
      );
    });
    return run(tasks, facts);
  }

  it("12 SUCCEEDED, 6 FAILED, 2 CANCELLED of 20 → three numerators over one denominator of 20", () => {
    const outcomes = [
      ...Array<string>(12).fill("SUCCEEDED"),
      ...Array<string>(6).fill("FAILED"),
      ...Array<string>(2).fill("CANCELLED"),
    ];
    const result = outcomeScenario(outcomes).get("role-model-task-outcome-rate", TUPLE, SNAP);
    expect(result.status).toBe("PUBLISHED");
    expect(result.measures).toMatchObject({ categories: { CANCELLED: 2, FAILED: 6, SUCCEEDED: 12 }, denominator: 20 });
    expect(result.value).toEqual({ CANCELLED: 0.1, FAILED: 0.3, SUCCEEDED: 0.6 });
  });

  it("open and mixed tasks are excluded from numerators and denominator, and counted", () => {
    const extraTasks = [
      definedTask({ task_id: "open", members: ["open-d"], role_template: undefined }),
      definedTask({ task_id: "mixed", members: ["mx-1", "mx-2"], role_template: undefined }),
    ];
    const extraFacts = [
      summary({ delivery_id: "open-d", task_id: "open", status: "OPEN" }),
      modelCall({ call_id: "c-open", task_id: "open" }),
      summary({ delivery_id: "mx-1", task_id: "mixed" }),
      summary({ delivery_id: "mx-2", task_id: "mixed", outcome: "FAILED" }),
      modelCall({ call_id: "c-mixed", delivery_id: "mx-1" }),
    ];
    const result = outcomeScenario(Array<string>(20).fill("SUCCEEDED"), { tasks: extraTasks, facts: extraFacts }).get(
      "role-model-task-outcome-rate",
      TUPLE,
      SNAP,
    );
    expect(result.exclusions).toEqual({ MIXED_DELIVERY_OUTCOMES: 1, OPEN_DELIVERY: 1 });
    expect(result.eligible_units).toBe(20);
    expect(result.measures).toMatchObject({ categories: { SUCCEEDED: 20 }, denominator: 20 });
    expect(result.coverage).toMatchObject({ numerator: 21, denominator: 22 });
  });

  it("a task whose linked operational calls all lack a complete tuple is counted once in the cohort-less record, never in a tuple slice", () => {
    const tasks = [definedTask({ task_id: "t-x", members: ["d-x"] })];
    const facts = [
      summary({ delivery_id: "d-x", task_id: "t-x" }),
      modelCall({ call_id: "c-x1", task_id: "t-x", provider: undefined }),
      modelCall({ call_id: "c-x2", delivery_id: "d-x", role: undefined }),
    ];
    const records = run(tasks, facts).records("role-model-task-outcome-rate");
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      cohort: {},
      status: "NOT_AVAILABLE",
      value: null,
      exclusions: { INCOMPLETE_ATTRIBUTION: 1 },
      coverage: { numerator: 0, denominator: 1, alert: true },
    });
  });

  it("non-operational (judge) calls attribute no task: the terminal task is INCOMPLETE_ATTRIBUTION (rev. 3)", () => {
    const tasks = [definedTask()];
    const records = run(tasks, [summary(), modelCall({ task_id: "t-1", operational: false })]).records(
      "role-model-task-outcome-rate",
    );
    expect(records.map((result) => [result.cohort, result.exclusions])).toEqual([[{}, { INCOMPLETE_ATTRIBUTION: 1 }]]);
  });
});
