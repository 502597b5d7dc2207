import { describe, expect, it } from "vitest";
import type { DeliverySummary } from "../../../src/contract/facts.ts";
import { cohortOf } from "../../../src/metrics/scope.ts";
import { decodeStageValue, encodeStageValue } from "../../../src/partitioned/stage-wire.ts";
import type { StageRecord } from "../../../src/partitioned/stage-records.ts";
import { EMPTY_MEMBER, EMPTY_TASK_ID, type MemberReading } from "../../../src/metrics/task-inputs.ts";
import { accepted } from "../../support/fact-arbitraries.ts";

type Response = Extract<StageRecord, { topic: "responses" }>;

const summary = accepted({
  contract: "agentops.observation@1.0.0",
  type: "delivery_summary",
  fact_id: "s-1",
  event_time: "2026-03-01T10:00:00Z",
  provenance: { basis: "DIRECT_HOST", source: "h" },
  delivery_id: "d1",
  task_id: "t1",
  run_id: "r",
  status: "TERMINAL",
  outcome: "SUCCEEDED",
  requirement_changed: false,
}) as DeliverySummary;

function roundTrip(value: Response["value"]): Response["value"] {
  const record: Response = { topic: "responses", partition: 0, key: "k", value };
  return decodeStageValue(record, encodeStageValue(record)).value;
}

describe("stage records on the wire", () => {
  it("a member reading comes back equal: facts, exact money past 2^53 − 1, exclusions, -Infinity times, interned tuples", () => {
    const tuple = cohortOf({ provider: "openai", model: "m1", role: "writer", runtime: "rt" });
    const reading: MemberReading = {
      summaries: [summary],
      money: {
        shares: [
          { currency: "USD", source: "PROVIDER", costBasis: "LIST", amountMinor: 2n ** 60n },
          { currency: "EUR", source: "HOST", costBasis: "NET", amountMinor: 12 },
        ],
        excluded: { ESTIMATED_COST: 2 },
        asOf: 1_772_359_200_000,
      },
      calls: { direct: 3, nondirect: 1, unreadable: 2, asOf: Number.NEGATIVE_INFINITY, tuples: [tuple] },
      repairs: {
        unnamed: { count: 1, asOf: 1_772_359_200_001, attributable: true },
        named: [{ taskId: "t1", count: 2, asOf: 1_772_359_200_002, attributable: false }],
      },
    };
    const back = roundTrip(reading) as MemberReading;
    expect(back).toEqual(reading);
    expect(back.calls.tuples[0]).toBe(tuple);
    expect(typeof back.money.shares[0]?.amountMinor).toBe("bigint");
  });

  it("empty readings and tombstones", () => {
    expect(roundTrip(EMPTY_MEMBER)).toEqual(EMPTY_MEMBER);
    expect(roundTrip(EMPTY_TASK_ID)).toEqual(EMPTY_TASK_ID);
    expect(roundTrip(null)).toBeNull();
  });
});
