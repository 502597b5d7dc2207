import { describe, expect, it } from "vitest";
import { jsonLine } from "../../../src/contract/json-form.ts";

describe("NDJSON time form: alerts carry RFC 3339 times like facts and results (Avro keeps timestamp-millis)", () => {
  it("an alert's epoch-millisecond event_time is written as RFC 3339 UTC text; nothing else changes", () => {
    const alert = {
      alert_id: "a1",
      run_id: "r1",
      event_time: Date.parse("2026-10-01T10:00:01.500Z"),
      evidence: { seq_from: 1, seq_to: 3 },
    };
    expect(JSON.parse(jsonLine(alert))).toEqual({ ...alert, event_time: "2026-10-01T10:00:01.500Z" });
  });

  it("records without a numeric event_time are written as they are", () => {
    expect(jsonLine({ a: 1 })).toBe('{"a":1}');
    expect(jsonLine({ event_time: "2026-10-01T10:00:00.000Z" })).toBe('{"event_time":"2026-10-01T10:00:00.000Z"}');
  });
});
