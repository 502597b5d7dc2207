import { describe, expect, it } from "vitest";
import { parseFactJson } from "../../../../src/contract/parse-fact.ts";
import { conflictRejection } from "../../../../src/stream/processors/conflict-rejection.ts";
import { routeRecord } from "../../../../src/stream/processors/ingest-router.ts";
import { exec } from "../../tripwires/events.ts";
import { modelCall } from "../../metrics/fact-builders.ts";

describe("the ingest router (one rule for the Kafka ingest, the embedded replay and the audit rebuild)", () => {
  it("sends a record the contract rejects to the dead letters, with the contract's reason", () => {
    const route = routeRecord(parseFactJson("{not json"));
    expect(route).toMatchObject({ to: "dead-letters", rejection: { reason: "MALFORMED_JSON" } });
  });

  it("sends an agent event to the run monitor and a metric fact to the engine", () => {
    const event = exec("run-1", 1, "ls");
    expect(routeRecord({ ok: true, fact: event, invalidMeasures: [] })).toEqual({
      to: "run-monitor",
      event,
      invalidMeasures: [],
    });
    const fact = modelCall();
    expect(routeRecord({ ok: true, fact, invalidMeasures: [] })).toEqual({ to: "engine", fact, invalidMeasures: [] });
  });

  it("keeps an accepted fact's invalid measures with it, to be reported without rejecting it (contract revision 2 §1)", () => {
    const measure = { reason: "INVALID_MEASURE" as const, field: "span_duration_ms", detail: "-5 is below 0" };
    const fact = modelCall();
    expect(routeRecord({ ok: true, fact, invalidMeasures: [measure] })).toEqual({
      to: "engine",
      fact,
      invalidMeasures: [measure],
    });
  });
});

describe("the conflict dead letter (one wording for the Kafka engine and the embedded replay)", () => {
  it("names the identity's kind as the field, and where every version was read", () => {
    const rejection = conflictRejection({
      reason: "CONFLICT",
      identity: "call\u0000c-1",
      factIds: ["f-1", "f-2"],
      versions: [
        { factId: "f-1", origin: 3 },
        { factId: "f-2", origin: "facts/0/17" },
      ],
    });
    expect(rejection).toEqual({
      reason: "CONFLICT",
      field: "call",
      detail:
        "2 distinct records share call c-1 (versions: f-1 at 3, f-2 at facts/0/17); all are quarantined and none contributes",
      recordRejected: true,
    });
  });

  it("reports a later TERMINAL summary without rejecting it", () => {
    const rejection = conflictRejection({
      reason: "LATER_TERMINAL_SUMMARY",
      identity: "delivery\u0000d-1",
      factIds: ["s-1", "s-2"],
      versions: [
        { factId: "s-1", origin: 4 },
        { factId: "s-2", origin: 9 },
      ],
    });
    expect(rejection).toMatchObject({ reason: "LATER_TERMINAL_SUMMARY", field: "delivery", recordRejected: false });
    expect(rejection.detail).toContain("s-2 at 9");
  });
});
