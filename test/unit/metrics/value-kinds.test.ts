import { describe, expect, it } from "vitest";
import {
  TUPLE,
  WINDOW0,
  cost,
  evaluate,
  modelCall,
  packet,
  repair,
  summary,
  terminalDeliveries,
} from "./fact-builders.ts";

/** Seed §4: metric value kinds, their units and their missing rules. */

describe("seed §4 rate: a ratio of eligible units meeting a condition; rates report numerator and denominator", () => {
  it("packet-rework-rate publishes numerator, denominator and their quotient", () => {
    const result = evaluate([
      packet({ packet_id: "p-1" }),
      packet({ packet_id: "p-2" }),
      repair({ packet_id: "p-1" }),
    ]).get("packet-rework-rate", {}, WINDOW0);
    expect(result.status).toBe("PUBLISHED");
    expect(result.value).toBe(0.5);
    expect(result.measures).toMatchObject({ numerator: 1, denominator: 2, unit: "ratio" });
  });

  it("rate: N/A when no eligible units exist (never 0)", () => {
    const result = evaluate([packet({ repair_attribution: "UNAVAILABLE" })]).get("packet-rework-rate", {}, WINDOW0);
    expect(result.status).toBe("NOT_AVAILABLE");
    expect(result.value).toBeNull();
    expect(result.measures).toBeNull();
    expect(result.na_reason).toBe("N/A: 1 candidate packet, none covered");
  });

  it("a rate with no unit meeting the condition is a published 0, not N/A (an ordinary negative)", () => {
    const result = evaluate([packet()]).get("packet-rework-rate", {}, WINDOW0);
    expect(result.status).toBe("PUBLISHED");
    expect(result.value).toBe(0);
    expect(result.measures).toMatchObject({ numerator: 0, denominator: 1 });
  });
});

describe("seed §4 duration: an elapsed time in milliseconds; N/A when start or end is unavailable; unavailable is never zero", () => {
  it("delivery-cycle-time-ms of a Delivery without C55 is N/A, not 0", () => {
    const result = evaluate([summary({ elapsed_ms: undefined })]).get("delivery-cycle-time-ms", {}, WINDOW0);
    expect(result.status).toBe("NOT_AVAILABLE");
    expect(result.value).toBeNull();
    expect(result.na_reason).toBe("N/A: 1 candidate Delivery, none covered");
  });

  it("a reported duration of 0 ms is a value, distinct from an absent one", () => {
    const result = evaluate([summary({ elapsed_ms: 0 })]).get("delivery-cycle-time-ms", {}, WINDOW0);
    expect(result.status).toBe("PUBLISHED");
    expect(result.value).toBe(0);
    expect(result.measures).toMatchObject({ sum: 0, contributing: 1, unit: "milliseconds" });
  });

  it("fractional span durations sum exactly (integer microseconds): 0.1 + 0.2 + 0.3 ms = 0.6 ms, not 0.6000000000000001", () => {
    const result = evaluate([
      modelCall({ call_id: "a", span_duration_ms: 0.1 }),
      modelCall({ call_id: "b", span_duration_ms: 0.2 }),
      modelCall({ call_id: "c", span_duration_ms: 0.3 }),
    ]).get("operational-latency-ms", TUPLE, WINDOW0);
    expect(result.measures).toMatchObject({ sum: 0.6, contributing: 3 });
    expect(result.value).toBe(0.2);
  });

  it("a mean is the double nearest the exact quotient: 196,609 ms over 3 Deliveries is 65536.33333333333 (found by the property test)", () => {
    const facts = [67_828, 63_020, 65_761].map((elapsed_ms, index) =>
      summary({ delivery_id: `d-${index}`, elapsed_ms }),
    );
    const result = evaluate(facts).get("delivery-cycle-time-ms", {}, WINDOW0);
    expect(result.measures).toMatchObject({ sum: 196_609, contributing: 3 });
    expect(result.value).toBe(196_609 / 3);
    expect(result.value).toBe(65536.33333333333);
  });
});

describe("seed §4 quantity: a sum of reported quantities in tokens; N/A when unavailable; unavailable is never zero", () => {
  it("absent input_tokens make the input direction N/A, not 0", () => {
    const evaluated = evaluate([modelCall({ input_tokens: undefined, output_tokens: 7 })]);
    const input = evaluated.get("operational-token-usage", { ...TUPLE, direction: "input" }, WINDOW0);
    expect(input.status).toBe("NOT_AVAILABLE");
    expect(input.value).toBeNull();
    expect(input.coverage).toMatchObject({ numerator: 0, denominator: 1 });
    expect(evaluated.get("operational-token-usage", { ...TUPLE, direction: "output" }, WINDOW0).value).toBe(7);
  });

  it("a reported 0 tokens is a published 0", () => {
    const result = evaluate([modelCall({ input_tokens: 0 })]).get(
      "operational-token-usage",
      { ...TUPLE, direction: "input" },
      WINDOW0,
    );
    expect(result.status).toBe("PUBLISHED");
    expect(result.value).toBe(0);
  });

  it("quantity sums reported tokens with their contributing count", () => {
    const result = evaluate([
      modelCall({ call_id: "a", output_tokens: 5 }),
      modelCall({ call_id: "b", output_tokens: 11 }),
    ]).get("operational-token-usage", { ...TUPLE, direction: "output" }, WINDOW0);
    expect(result.value).toBe(16);
    expect(result.measures).toMatchObject({ sum: 16, contributing: 2, unit: "tokens" });
  });
});

describe("seed §4 money: a same-currency sum of reported cost; N/A when no attributable same-currency cost", () => {
  it("money sums minor units within one currency and names the currency", () => {
    const result = evaluate([
      modelCall(),
      cost({ cost_id: "c-1", amount_minor: 120 }),
      cost({ cost_id: "c-2", amount_minor: 30 }),
    ]).get(
      "operational-attributable-cost",
      { ...TUPLE, cost_basis: "list-price", currency: "USD", source: "PROVIDER" },
      WINDOW0,
    );
    expect(result.value).toBe(150);
    expect(result.measures).toMatchObject({ sum: 150, contributing: 1, currency: "USD", unit: "source currency" });
  });

  it("money: N/A when no attributable cost exists (never 0)", () => {
    const result = evaluate([modelCall()]).get("operational-attributable-cost", TUPLE, WINDOW0);
    expect(result.status).toBe("NOT_AVAILABLE");
    expect(result.value).toBeNull();
    expect(result.na_reason).toBe("N/A: 1 candidate call, none covered");
  });

  it("trajectory-partial-cost publishes a same-currency sum once 20 Deliveries have eligible money", () => {
    const deliveries = terminalDeliveries(20);
    const costs = deliveries.map((_, i) =>
      cost({ cost_id: `c-${i}`, call_id: undefined, delivery_id: `dd-${i}`, amount_minor: i + 1 }),
    );
    const result = evaluate([...deliveries, ...costs]).get(
      "trajectory-partial-cost",
      { cost_basis: "list-price", currency: "USD", source: "PROVIDER" },
      WINDOW0,
    );
    expect(result.status).toBe("PUBLISHED");
    expect(result.value).toBe(210);
    expect(result.measures).toMatchObject({ sum: 210, contributing: 20, currency: "USD" });
  });
});
