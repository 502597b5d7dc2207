import { describe, expect, it } from "vitest";
import { parseFact } from "../../../src/contract/parse-fact.ts";
import {
  HOUR,
  TUPLE,
  WINDOW0,
  at,
  evaluate,
  modelCall,
  parsedWithInvalidMeasures,
  rawModelCall,
  summary,
} from "./fact-builders.ts";

/** Seed §6.1: the three A-class metrics and the exact model-role tuple slicing. */

describe("seed §6.1 operational-latency-ms: absent/invalid duration excludes the call; never substitute C55 or zero", () => {
  it("a call without span duration is excluded from the sum and the contributing count, and is uncovered", () => {
    const result = evaluate([
      modelCall({ call_id: "a", span_duration_ms: 1000 }),
      modelCall({ call_id: "b", span_duration_ms: 3000 }),
      modelCall({ call_id: "c", span_duration_ms: undefined }),
    ]).get("operational-latency-ms", TUPLE, WINDOW0);
    expect(result.value).toBe(2000);
    expect(result.measures).toMatchObject({ sum: 4000, contributing: 2 });
    expect(result.eligible_units).toBe(2);
    expect(result.coverage).toMatchObject({ numerator: 2, denominator: 3, state: "PARTIAL" });
  });

  it("a reported 0 ms span is a duration and counts, unlike an absent one", () => {
    const result = evaluate([
      modelCall({ call_id: "a", span_duration_ms: 1000 }),
      modelCall({ call_id: "b", span_duration_ms: 0 }),
    ]).get("operational-latency-ms", TUPLE, WINDOW0);
    expect(result.value).toBe(500);
    expect(result.measures).toMatchObject({ contributing: 2 });
  });

  it("revision 2 change 1: an invalid (negative) duration excludes the call from latency only; its tokens still count", () => {
    const parsed = parseFact(rawModelCall({ call_id: "bad", span_duration_ms: -1 }));
    expect(parsed).toMatchObject({
      ok: true,
      invalidMeasures: [{ field: "span_duration_ms", reason: "OUT_OF_RANGE" }],
    });
    const evaluated = evaluate([
      modelCall({ call_id: "a", span_duration_ms: 1000 }),
      parsedWithInvalidMeasures(rawModelCall({ call_id: "bad", span_duration_ms: -1 })),
    ]);
    const latency = evaluated.get("operational-latency-ms", TUPLE, WINDOW0);
    expect(latency.value).toBe(1000);
    expect(latency.coverage).toMatchObject({ numerator: 1, denominator: 2 });
    expect(evaluated.get("operational-token-usage", { ...TUPLE, direction: "input" }, WINDOW0).value).toBe(200);
  });

  it("never substitutes C55: a call of a Delivery with elapsed_ms but no span duration leaves latency N/A", () => {
    const result = evaluate([
      modelCall({ delivery_id: "d-1", span_duration_ms: undefined }),
      summary({ delivery_id: "d-1", elapsed_ms: 5000 }),
    ]).get("operational-latency-ms", TUPLE, WINDOW0);
    expect(result.status).toBe("NOT_AVAILABLE");
    expect(result.value).toBeNull();
  });
});

describe("seed §6.1 delivery-cycle-time-ms: absent C55 excludes the Delivery from the numerator and contributing count; never derive from arrival time", () => {
  it("a missing C55 is excluded and never counted as 0: the mean is over contributing Deliveries only, contributing count published", () => {
    const result = evaluate([
      summary({ delivery_id: "a", elapsed_ms: 1000 }),
      summary({ delivery_id: "b", elapsed_ms: 3000 }),
      summary({ delivery_id: "c", elapsed_ms: undefined }),
    ]).get("delivery-cycle-time-ms", {}, WINDOW0);
    expect(result.value).toBe(2000);
    expect(result.measures).toMatchObject({ sum: 4000, contributing: 2 });
    expect(result.coverage).toMatchObject({ numerator: 2, denominator: 3 });
  });

  it("is never derived from the summaries' event times (OPEN at 10:00, TERMINAL at 12:00, no C55 → N/A)", () => {
    const result = evaluate([
      summary({ delivery_id: "a", status: "OPEN", elapsed_ms: undefined, event_time: at(10 * HOUR) }),
      summary({ delivery_id: "a", elapsed_ms: undefined, event_time: at(12 * HOUR) }),
    ]).get("delivery-cycle-time-ms", {}, WINDOW0);
    expect(result.status).toBe("NOT_AVAILABLE");
    expect(result.value).toBeNull();
  });

  it("an OPEN Delivery is not a unit (explicitly terminated Deliveries only)", () => {
    const result = evaluate([
      summary({ delivery_id: "a", elapsed_ms: 1000 }),
      summary({ delivery_id: "b", status: "OPEN", elapsed_ms: 9000 }),
    ]).get("delivery-cycle-time-ms", {}, WINDOW0);
    expect(result.coverage.denominator).toBe(1);
    expect(result.value).toBe(1000);
  });
});

describe("seed §6.1 delivery-stage-reach: absent C56 excludes the Delivery from the reached-stage numerator; never infer a stage", () => {
  it("absent C56 is not a reached stage and stays in the denominator", () => {
    const result = evaluate([
      summary({ delivery_id: "a", stage_reached: "merged" }),
      summary({ delivery_id: "b", stage_reached: "merged" }),
      summary({ delivery_id: "c", stage_reached: undefined }),
      summary({ delivery_id: "d", stage_reached: "review" }),
    ]).get("delivery-stage-reach", {}, WINDOW0);
    expect(result.status).toBe("PUBLISHED");
    expect(result.measures).toMatchObject({ denominator: 4, categories: { merged: 2, review: 1 } });
    expect(result.value).toEqual({ merged: 0.5, review: 0.25 });
    expect(result.coverage).toMatchObject({ numerator: 3, denominator: 4, state: "PARTIAL" });
  });

  it("publishes exact stage identities separately: no name parsing, case folding or ordering", () => {
    const result = evaluate([
      summary({ delivery_id: "a", stage_reached: "Review" }),
      summary({ delivery_id: "b", stage_reached: "review" }),
      summary({ delivery_id: "c", stage_reached: "review " }),
    ]).get("delivery-stage-reach", {}, WINDOW0);
    expect(result.measures?.categories).toEqual({ Review: 1, review: 1, "review ": 1 });
  });

  it("no terminal Delivery with C56 → NO_COVERAGE and N/A, never a 0 rate", () => {
    const result = evaluate([summary({ stage_reached: undefined })]).get("delivery-stage-reach", {}, WINDOW0);
    expect(result.coverage.state).toBe("NO_COVERAGE");
    expect(result.status).toBe("NOT_AVAILABLE");
    expect(result.value).toBeNull();
  });
});

describe("seed §6.1 the model-role metrics slice only by the exact provider+C57+C30+C06 tuple", () => {
  const MODEL_ROLE_CALL_METRICS = [
    "operational-latency-ms",
    "operational-token-usage",
    "operational-attributable-cost",
    "operational-usage-availability",
  ] as const;

  it("tuples differing in any coordinate (even by case) are separate cohorts; nothing is merged", () => {
    const evaluated = evaluate([
      modelCall({ call_id: "a", provider: "openai" }),
      modelCall({ call_id: "b", provider: "OpenAI" }),
      modelCall({ call_id: "c", runtime: "other-runtime" }),
    ]);
    const latency = evaluated.records("operational-latency-ms");
    expect(latency.map((result) => result.cohort)).toEqual(
      expect.arrayContaining([TUPLE, { ...TUPLE, provider: "OpenAI" }, { ...TUPLE, runtime: "other-runtime" }]),
    );
    expect(latency).toHaveLength(3);
    for (const result of latency) expect(result.eligible_units).toBe(1);
  });

  it.each(["provider", "model", "role", "runtime"])(
    "a call missing %s enters no slice of any model-role call metric",
    (coordinate) => {
      const evaluated = evaluate([modelCall({ call_id: "x", [coordinate]: undefined })]);
      for (const metricId of MODEL_ROLE_CALL_METRICS) {
        const records = evaluated.records(metricId);
        expect(records.map((result) => result.cohort)).toEqual([{}]);
      }
    },
  );

  it("an empty-string coordinate (an invalid measure since revision 2) does not complete the tuple", () => {
    const evaluated = evaluate([parsedWithInvalidMeasures(rawModelCall({ call_id: "x", role: "" }))]);
    expect(evaluated.records("operational-latency-ms").map((result) => result.cohort)).toEqual([{}]);
  });
});
