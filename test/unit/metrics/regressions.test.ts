import { describe, expect, it } from "vitest";
import { CUTOFF, HOUR, WINDOW0, at, definedTask, evaluate, modelCall, snapshot, summary } from "./fact-builders.ts";

/**
 * Regressions: rules the engine once broke (found by the rule and property tests), each kept as a
 * test that states the rule.
 */

describe("docs/semantics.md decision 24: result lines are sorted by key (byte order) in every output", () => {
  it("keys are ordered by their UTF-8 bytes, not by UTF-16 code units (U+FFFD sorts before U+1F600)", () => {
    // UTF-8: U+FFFD is EF BF BD, U+1F600 is F0 9F 98 80, so the U+FFFD key comes first in byte order.
    // UTF-16 code units: U+1F600 is D83D DE00 < FFFD, so a plain `<` comparison puts it first.
    const lines = evaluate([
      modelCall({ call_id: "a", role: "\u{1F600}" }),
      modelCall({ call_id: "b", role: "\uFFFD" }),
    ]).lines;
    const keys = lines.map((line) => {
      const result = JSON.parse(line) as { metric_id: string; cohort: Record<string, string> };
      return `${result.metric_id} ${result.cohort["role"] ?? ""}`;
    });
    const latency = keys.filter((key) => key.startsWith("operational-latency-ms"));
    expect(latency).toEqual(["operational-latency-ms \uFFFD", "operational-latency-ms \u{1F600}"]);
  });
});

describe('catalog N/A rule of task-cohort-comparison-eligibility: "N/A when the defined-task snapshot declares no task" (seed §6.4: every metric result always publishes its coverage)', () => {
  it("an accepted snapshot declaring no task publishes one NOT_AVAILABLE record with NO_POPULATION coverage", () => {
    const evaluated = evaluate([snapshot({ tasks: [] })]);
    const records = evaluated.records("task-cohort-comparison-eligibility");
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      scope: { kind: "snapshot", snapshot_id: "snap-1", cutoff: CUTOFF },
      cohort: {},
      status: "NOT_AVAILABLE",
      value: null,
      measures: null,
      na_reason: "N/A: no candidate tasks",
      eligible_units: 0,
      coverage: { numerator: 0, denominator: 0, raw_ratio: null, state: "NO_POPULATION", alert: false },
    });
  });
});

describe("contract §2: a Delivery is terminal from its earliest TERMINAL summary by (event_time, fact_id); later TERMINAL summaries are ignored", () => {
  it("the task reading never reads an ignored later TERMINAL summary, even when only that one carries the task identity", () => {
    // d-1's earliest TERMINAL summary (FAILED, 10:00) carries no task_id, so by decision 9 it does not
    // join t-1; the later TERMINAL summary (SUCCEEDED, 11:00) is ignored by contract §2. The Delivery-level
    // metrics read FAILED; the task must not read SUCCEEDED from the ignored summary. Expected: d-1 is
    // open for t-1 (OPEN_DELIVERY), never a comparable SUCCEEDED task.
    const facts = [
      snapshot({ tasks: [definedTask()] }),
      summary({ task_id: undefined, outcome: "FAILED", event_time: at(10 * HOUR) }),
      summary({ task_id: "t-1", outcome: "SUCCEEDED", event_time: at(11 * HOUR) }),
    ];
    const evaluated = evaluate(facts);
    expect(evaluated.get("delivery-terminal-outcome-rate", {}, WINDOW0).value).toEqual({ FAILED: 1 });
    const eligibility = evaluated.get("task-cohort-comparison-eligibility", {}, { snapshot: "snap-1" });
    expect(eligibility.exclusions).toEqual({ OPEN_DELIVERY: 1 });
  });
});
