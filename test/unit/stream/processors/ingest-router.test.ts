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
    expect(routeRecord({ ok: true, fact: event })).toEqual({ to: "run-monitor", event });
    const fact = modelCall();
    expect(routeRecord({ ok: true, fact })).toEqual({ to: "engine", fact });
  });
});

describe("the conflict dead letter (one wording for the Kafka engine and the embedded replay)", () => {
  it("names the identity's kind as the field, and every fact id involved", () => {
    const rejection = conflictRejection({ identity: "call\u0000c-1", factIds: ["f-1", "f-2"] });
    expect(rejection).toEqual({ reason: "CONFLICT", field: "call", detail: "2 distinct records share call c-1 (fact ids f-1, f-2); all are quarantined and none contributes" });
  });
});
