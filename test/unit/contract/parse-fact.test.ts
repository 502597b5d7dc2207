import { describe, expect, it } from "vitest";
import { parseDecodedFact, parseFact, parseFactJson, parseNormalizedFact } from "../../../src/contract/parse-fact.ts";
import type { RejectionReason } from "../../../src/contract/rejection.ts";

/**
 * Contract §1–§2, table-driven: each row breaks one rule of one record type and names the reason
 * (and field) the validator must give. Every base record is valid on its own (checked first).
 */
const envelope = (type: string, factId: string) => ({
  contract: "agentops.observation@1.0.0",
  type,
  fact_id: factId,
  event_time: "2026-10-01T10:00:00Z",
  provenance: { basis: "DIRECT_HOST", source: "host" },
});

const base: Record<string, Record<string, unknown>> = {
  model_call: {
    ...envelope("model_call", "f-call"),
    call_id: "c1",
    run_id: "r1",
    operational: true,
    provider: "p",
    model: "m",
    role: "writer",
    runtime: "rt",
    span_duration_ms: 12.5,
    input_tokens: 10,
    output_tokens: 2,
    usage_source: "PROVIDER",
  },
  cost: {
    ...envelope("cost", "f-cost"),
    cost_id: "k1",
    call_id: "c1",
    amount_minor: 120,
    currency: "USD",
    source: "PROVIDER",
    cost_basis: "list",
    attribution: "PROJECT",
    estimated: false,
  },
  delivery_summary: {
    ...envelope("delivery_summary", "f-sum"),
    delivery_id: "d1",
    task_id: "t1",
    status: "TERMINAL",
    outcome: "SUCCEEDED",
    requirement_changed: false,
    elapsed_ms: 1000,
    stage_reached: "merge",
  },
  packet: {
    ...envelope("packet", "f-packet"),
    packet_id: "p1",
    governance_revision: "0.2",
    repair_attribution: "AVAILABLE",
  },
  repair: {
    ...envelope("repair", "f-repair"),
    repair_id: "rp1",
    finding_id: "fd1",
    packet_id: "p1",
    attributable: true,
  },
  task_snapshot: {
    ...envelope("task_snapshot", "f-snap"),
    snapshot_id: "s1",
    cutoff: "2026-10-02T00:00:00Z",
    tasks: [{ task_id: "t1", members: ["d1"], role_template: "tpl", template_assignment: "EVENT_TIME" }],
  },
  agent_step: {
    ...envelope("agent_step", "f-step"),
    run_id: "r1",
    seq: 0,
    kind: "tool_call",
    tool: "bash",
    input: "{}",
    status: "ok",
  },
  sandbox_event: {
    ...envelope("sandbox_event", "f-sandbox"),
    run_id: "r1",
    seq: 1,
    kind: "exec",
    command: "ls",
    cwd: "/w",
    workspace_root: "/w",
    exit_code: 0,
  },
};

function variant(
  type: string,
  change: Record<string, unknown>,
  remove: readonly string[] = [],
): Record<string, unknown> {
  const record: Record<string, unknown> = { ...base[type], ...change };
  for (const field of remove) delete record[field];
  return record;
}

const cases: readonly { rule: string; record: unknown; reason: RejectionReason; field?: string }[] = [
  // §1 envelope
  { rule: "a record must be an object", record: [1, 2], reason: "NOT_AN_OBJECT" },
  {
    rule: "contract must be agentops.observation@1.0.0",
    record: variant("cost", { contract: "agentops.observation@0.9.0" }),
    reason: "UNSUPPORTED_CONTRACT",
    field: "contract",
  },
  {
    rule: "a record without a contract is unsupported",
    record: variant("cost", {}, ["contract"]),
    reason: "UNSUPPORTED_CONTRACT",
    field: "contract",
  },
  {
    rule: "type must be one of the eight",
    record: variant("cost", { type: "invoice" }),
    reason: "UNKNOWN_TYPE",
    field: "type",
  },
  {
    rule: "fact_id is required",
    record: variant("packet", {}, ["fact_id"]),
    reason: "MISSING_FIELD",
    field: "fact_id",
  },
  {
    rule: "fact_id is 1..256 characters",
    record: variant("packet", { fact_id: "" }),
    reason: "OUT_OF_RANGE",
    field: "fact_id",
  },
  {
    rule: "fact_id is at most 256 characters",
    record: variant("packet", { fact_id: "x".repeat(257) }),
    reason: "OUT_OF_RANGE",
    field: "fact_id",
  },
  {
    rule: "event_time is a UTC timestamp",
    record: variant("packet", { event_time: "yesterday" }),
    reason: "INVALID_TIMESTAMP",
    field: "event_time",
  },
  {
    rule: "event_time needs an explicit zone",
    record: variant("packet", { event_time: "2026-10-01T10:00:00" }),
    reason: "INVALID_TIMESTAMP",
    field: "event_time",
  },
  {
    rule: "event_time in epoch milliseconds is an integer",
    record: variant("packet", { event_time: 1.5 }),
    reason: "INVALID_TIMESTAMP",
    field: "event_time",
  },
  // revision 2 §1: real calendar instants only, and a number is not a timestamp
  {
    rule: "revision 2: 2026-02-30 is no date (it would roll over to March 2)",
    record: variant("packet", { event_time: "2026-02-30T10:00:00Z" }),
    reason: "INVALID_TIMESTAMP",
    field: "event_time",
  },
  {
    rule: "revision 2: 2026-11-31 is no date",
    record: variant("packet", { event_time: "2026-11-31T10:00:00Z" }),
    reason: "INVALID_TIMESTAMP",
    field: "event_time",
  },
  {
    rule: "revision 2: 24:00 is no time of day",
    record: variant("packet", { event_time: "2026-10-01T24:00:00Z" }),
    reason: "INVALID_TIMESTAMP",
    field: "event_time",
  },
  {
    rule: "revision 2: second 60 is not read",
    record: variant("packet", { event_time: "2026-10-01T23:59:60Z" }),
    reason: "INVALID_TIMESTAMP",
    field: "event_time",
  },
  {
    rule: "revision 2: an offset of +24:00 is no zone",
    record: variant("packet", { event_time: "2026-10-01T10:00:00+24:00" }),
    reason: "INVALID_TIMESTAMP",
    field: "event_time",
  },
  {
    rule: "revision 2: a numeric epoch is not a timestamp in JSON",
    record: variant("packet", { event_time: Date.parse("2026-10-01T10:00:00Z") }),
    reason: "INVALID_TIMESTAMP",
    field: "event_time",
  },
  {
    rule: "revision 2: a rolled-over cutoff is rejected too",
    record: variant("task_snapshot", { cutoff: "2026-02-29T00:00:00Z" }),
    reason: "INVALID_TIMESTAMP",
    field: "cutoff",
  },
  {
    rule: "provenance is an object with a basis",
    record: variant("packet", { provenance: { source: "x" } }),
    reason: "MISSING_FIELD",
    field: "provenance.basis",
  },
  {
    rule: "records are closed: unknown fields are rejected",
    record: variant("packet", { colour: "blue" }),
    reason: "UNKNOWN_FIELD",
    field: "colour",
  },
  // A lone surrogate has no canonical form (RFC 8785 needs I-JSON), so the record has no identity.
  {
    rule: "a lone surrogate in an identity rejects the record",
    record: variant("packet", { packet_id: "p\ud800" }),
    reason: "ILL_FORMED_UNICODE",
    field: "packet_id",
  },
  {
    rule: "a lone surrogate in a measure rejects the record too",
    record: variant("model_call", { model: "m\udc00" }),
    reason: "ILL_FORMED_UNICODE",
    field: "model",
  },
  {
    rule: "a lone surrogate in a task entry rejects the snapshot",
    record: variant("task_snapshot", { tasks: [{ task_id: "t1", members: ["d1"], role_template: "\udbcb" }] }),
    reason: "ILL_FORMED_UNICODE",
    field: "tasks.0.role_template",
  },
  {
    rule: "a lone surrogate in a key rejects the record",
    record: variant("agent_step", { "\udfff": 1 }),
    reason: "ILL_FORMED_UNICODE",
    field: "\udfff",
  },
  // §2 model_call
  {
    rule: "model_call needs call_id",
    record: variant("model_call", {}, ["call_id"]),
    reason: "MISSING_FIELD",
    field: "call_id",
  },
  {
    rule: "model_call needs run_id",
    record: variant("model_call", {}, ["run_id"]),
    reason: "MISSING_FIELD",
    field: "run_id",
  },
  {
    rule: "model_call.operational is a boolean",
    record: variant("model_call", { operational: "yes" }),
    reason: "WRONG_TYPE",
    field: "operational",
  },
  // §2 cost
  {
    rule: "cost links by exactly one of call_id / delivery_id (not both)",
    record: variant("cost", { delivery_id: "d1" }),
    reason: "COST_LINK_NOT_EXACTLY_ONE",
  },
  {
    rule: "cost links by exactly one of call_id / delivery_id (not none)",
    record: variant("cost", {}, ["call_id"]),
    reason: "COST_LINK_NOT_EXACTLY_ONE",
  },
  // §2 delivery_summary
  {
    rule: "status is OPEN or TERMINAL",
    record: variant("delivery_summary", { status: "DONE" }),
    reason: "INVALID_ENUM",
    field: "status",
  },
  {
    rule: "outcome is required iff TERMINAL (missing)",
    record: variant("delivery_summary", {}, ["outcome"]),
    reason: "OUTCOME_REQUIRED",
    field: "outcome",
  },
  {
    rule: "outcome is required iff TERMINAL (present on OPEN)",
    record: variant("delivery_summary", { status: "OPEN" }),
    reason: "OUTCOME_NOT_ALLOWED",
    field: "outcome",
  },
  {
    rule: "outcome is one of the four",
    record: variant("delivery_summary", { outcome: "PARTIAL" }),
    reason: "INVALID_ENUM",
    field: "outcome",
  },
  {
    rule: "requirement_changed is required",
    record: variant("delivery_summary", {}, ["requirement_changed"]),
    reason: "MISSING_FIELD",
    field: "requirement_changed",
  },
  // §2 packet, repair
  {
    rule: "packet needs governance_revision",
    record: variant("packet", {}, ["governance_revision"]),
    reason: "MISSING_FIELD",
    field: "governance_revision",
  },
  {
    rule: "repair needs finding_id",
    record: variant("repair", {}, ["finding_id"]),
    reason: "MISSING_FIELD",
    field: "finding_id",
  },
  {
    rule: "repair.attributable is a boolean",
    record: variant("repair", { attributable: 1 }),
    reason: "WRONG_TYPE",
    field: "attributable",
  },
  // §2 task_snapshot
  {
    rule: "cutoff is a timestamp",
    record: variant("task_snapshot", { cutoff: "soon" }),
    reason: "INVALID_TIMESTAMP",
    field: "cutoff",
  },
  {
    rule: "revision 3: a blank snapshot_id rejects the snapshot",
    record: variant("task_snapshot", { snapshot_id: " \t" }),
    reason: "BLANK_VALUE",
    field: "snapshot_id",
  },
  // §2 agent_step, sandbox_event
  {
    rule: "agent_step.seq is an integer ≥ 0",
    record: variant("agent_step", { seq: -1 }),
    reason: "OUT_OF_RANGE",
    field: "seq",
  },
  {
    rule: "agent_step.kind is tool_call, message or plan",
    record: variant("agent_step", { kind: "thought" }),
    reason: "INVALID_ENUM",
    field: "kind",
  },
  {
    rule: "agent_step.status is ok or error",
    record: variant("agent_step", { status: "fine" }),
    reason: "INVALID_ENUM",
    field: "status",
  },
  {
    rule: "sandbox_event.kind is one of the seven",
    record: variant("sandbox_event", { kind: "reboot" }),
    reason: "INVALID_ENUM",
    field: "kind",
  },
  {
    rule: "sandbox_event.argv is a list of strings",
    record: variant("sandbox_event", { argv: "ls -la" }),
    reason: "WRONG_TYPE",
    field: "argv",
  },
  {
    rule: "sandbox_event.exit_code is an integer",
    record: variant("sandbox_event", { exit_code: 0.5 }),
    reason: "WRONG_TYPE",
    field: "exit_code",
  },
];

describe("contract 1.0.0 validation (table-driven)", () => {
  it.each(Object.keys(base))("the base %s record is valid", (type) => {
    expect(parseFact(base[type])).toMatchObject({ ok: true });
  });

  it.each(cases)("$rule → $reason", ({ record, reason, field }) => {
    const parsed = parseFact(record);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.rejection.reason).toBe(reason);
    if (field !== undefined) expect(parsed.rejection.field).toBe(field);
    expect(parsed.rejection.detail.length).toBeGreaterThan(0);
  });

  it("revision 2 (DUPLICATE_FIELD): a key repeated in one JSON object rejects the line; the last one does not silently win", () => {
    const line = JSON.stringify(base["cost"]).replace('"amount_minor":120', '"amount_minor":5,"amount_minor":500');
    expect(parseFactJson(line)).toMatchObject({
      ok: false,
      rejection: { reason: "DUPLICATE_FIELD", field: "amount_minor" },
    });
    const nested = JSON.stringify(base["cost"]).replace(
      '"basis":"DIRECT_HOST"',
      '"basis":"DIRECT_HOST","b\\u0061sis":"MANUAL"',
    );
    expect(parseFactJson(nested)).toMatchObject({
      ok: false,
      rejection: { reason: "DUPLICATE_FIELD", field: "basis" },
    });
    // Equal keys in different objects, and a value that looks like a key, are not duplicates.
    const snapshotLine = JSON.stringify(
      variant("task_snapshot", { tasks: [{ task_id: "t1" }, { task_id: "t2", role_template: "task_id:" }] }),
    );
    expect(parseFactJson(snapshotLine)).toMatchObject({ ok: true });
  });

  it("malformed JSON is a rejection with a reason, not a crash", () => {
    expect(parseFactJson("{not json")).toMatchObject({ ok: false, rejection: { reason: "MALFORMED_JSON" } });
  });

  it("an unknown provenance basis is accepted (it is unreadable provenance, a metric matter)", () => {
    expect(parseFact(variant("cost", { provenance: { basis: "HEARSAY", source: null } }))).toMatchObject({ ok: true });
  });

  it("an unsupported governance revision is accepted (it is a metric exclusion, not a parse error)", () => {
    expect(parseFact(variant("packet", { governance_revision: "0.3" }))).toMatchObject({ ok: true });
  });

  it("null and absent optional fields are the same fact; the same instant in two zones is the same time", () => {
    const withNulls = parseFact(variant("model_call", { delivery_id: null, event_time: "2026-10-01T10:00:00.000Z" }));
    const withOffset = parseFact(variant("model_call", { event_time: "2026-10-01T12:00:00+02:00" }));
    expect(withNulls.ok && withOffset.ok).toBe(true);
    if (withNulls.ok && withOffset.ok) expect(JSON.stringify(withNulls.fact)).toBe(JSON.stringify(withOffset.fact));
  });

  it("revision 2: a leap day is a real date (2024-02-29), and Avro's timestamp-millis (epoch numbers) still reads", () => {
    expect(parseFact(variant("packet", { event_time: "2024-02-29T23:59:59.999Z" }))).toMatchObject({
      ok: true,
      fact: { event_time: Date.parse("2024-02-29T23:59:59.999Z") },
    });
    expect(parseDecodedFact(variant("packet", { event_time: Date.parse("2026-10-01T10:00:00Z") }))).toMatchObject({
      ok: true,
      fact: { event_time: Date.parse("2026-10-01T10:00:00Z") },
    });
  });

  // Task entries are read one at a time (revision 3 change 5): a malformed one is reported, the snapshot accepted.
  it.each([
    {
      rule: "template_assignment is EVENT_TIME or BACKFILLED",
      tasks: [{ task_id: "t1", template_assignment: "LATER" }],
      reason: "INVALID_ENUM",
      field: "tasks.0.template_assignment",
    },
    {
      rule: "a task is defined once per snapshot",
      tasks: [{ task_id: "t1" }, { task_id: "t1" }],
      reason: "DUPLICATE_TASK_IN_SNAPSHOT",
      field: "tasks.1",
    },
    {
      rule: "defined tasks are closed records",
      tasks: [{ task_id: "t1", owner: "me" }],
      reason: "UNKNOWN_FIELD",
      field: "tasks.0.owner",
    },
  ])("$rule → accepted, $field reported as $reason", ({ tasks, reason, field }) => {
    expect(parseFact(variant("task_snapshot", { tasks }))).toMatchObject({
      ok: true,
      invalidMeasures: [{ reason, field }],
    });
  });

  it("leap years are the proleptic Gregorian calendar's, as Date.parse reads them: 2000 and 0400 are, 1900 and 0100 are not", () => {
    for (const leap of ["2000", "0400", "0004"])
      expect(parseFact(variant("packet", { event_time: `${leap}-02-29T00:00:00Z` }))).toMatchObject({
        ok: true,
        fact: { event_time: Date.parse(`${leap}-02-29T00:00:00Z`) },
      });
    for (const common of ["1900", "0100", "2026"])
      expect(parseFact(variant("packet", { event_time: `${common}-02-29T00:00:00Z` }))).toMatchObject({
        ok: false,
        rejection: { reason: "INVALID_TIMESTAMP" },
      });
  });

  it("field order in the input does not change the normalised fact", () => {
    const reversed = Object.fromEntries(Object.entries(base["cost"] as Record<string, unknown>).reverse());
    const a = parseFact(base["cost"]);
    const b = parseFact(reversed);
    expect(a.ok && b.ok && JSON.stringify(a.fact) === JSON.stringify(b.fact)).toBe(true);
  });
});

/**
 * Contract revision 2 §1, change 1: measure fields are read field by field. Each of these used to
 * reject its whole record; now the fact is accepted without that measure, and the measure is
 * reported (field and its own reason) for the INVALID_MEASURE dead letter.
 */
const invalidMeasureCases: readonly { rule: string; record: unknown; reason: RejectionReason; field?: string }[] = [
  {
    rule: "span_duration_ms is ≥ 0",
    record: variant("model_call", { span_duration_ms: -1 }),
    reason: "OUT_OF_RANGE",
    field: "span_duration_ms",
  },
  {
    rule: "input_tokens is an integer",
    record: variant("model_call", { input_tokens: 1.5 }),
    reason: "WRONG_TYPE",
    field: "input_tokens",
  },
  {
    rule: "output_tokens is ≥ 0",
    record: variant("model_call", { output_tokens: -3 }),
    reason: "OUT_OF_RANGE",
    field: "output_tokens",
  },
  {
    rule: "usage_source is PROVIDER, HOST or NONE",
    record: variant("model_call", { usage_source: "GUESS" }),
    reason: "INVALID_ENUM",
    field: "usage_source",
  },
  {
    rule: "amount_minor is an integer (minor units)",
    record: variant("cost", { amount_minor: 1.25 }),
    reason: "WRONG_TYPE",
    field: "amount_minor",
  },
  {
    rule: "amount_minor is ≥ 0",
    record: variant("cost", { amount_minor: -5 }),
    reason: "OUT_OF_RANGE",
    field: "amount_minor",
  },
  {
    rule: "currency is three upper-case letters",
    record: variant("cost", { currency: "usd" }),
    reason: "INVALID_CURRENCY",
    field: "currency",
  },
  {
    rule: "currency is an ISO 4217 code",
    record: variant("cost", { currency: "ABC" }),
    reason: "INVALID_CURRENCY",
    field: "currency",
  },
  {
    rule: "cost source is PROVIDER, HOST or ESTIMATE",
    record: variant("cost", { source: "VENDOR" }),
    reason: "INVALID_ENUM",
    field: "source",
  },
  {
    rule: "cost_basis is non-empty",
    record: variant("cost", { cost_basis: "" }),
    reason: "OUT_OF_RANGE",
    field: "cost_basis",
  },
  {
    rule: "attribution is PROJECT, SHARED or UNATTRIBUTED",
    record: variant("cost", { attribution: "TEAM" }),
    reason: "INVALID_ENUM",
    field: "attribution",
  },
  {
    rule: "estimated is required",
    record: variant("cost", {}, ["estimated"]),
    reason: "MISSING_FIELD",
    field: "estimated",
  },
  {
    rule: "elapsed_ms (C55) is an integer ≥ 0",
    record: variant("delivery_summary", { elapsed_ms: -1 }),
    reason: "OUT_OF_RANGE",
    field: "elapsed_ms",
  },
  {
    rule: "stage_reached (C56) is a non-empty id",
    record: variant("delivery_summary", { stage_reached: "" }),
    reason: "OUT_OF_RANGE",
    field: "stage_reached",
  },
  {
    rule: "repair_attribution is AVAILABLE or UNAVAILABLE",
    record: variant("packet", { repair_attribution: "MAYBE" }),
    reason: "INVALID_ENUM",
    field: "repair_attribution",
  },
  // revision 2 ranges and emptiness
  {
    rule: "span_duration_ms is at most 10^10 (1e306 is no duration)",
    record: variant("model_call", { span_duration_ms: 1e306 }),
    reason: "OUT_OF_RANGE",
    field: "span_duration_ms",
  },
  {
    rule: "input_tokens is at most 10^12",
    record: variant("model_call", { input_tokens: 1e12 + 1 }),
    reason: "OUT_OF_RANGE",
    field: "input_tokens",
  },
  {
    rule: "elapsed_ms is at most 10^11",
    record: variant("delivery_summary", { elapsed_ms: 1e11 + 1 }),
    reason: "OUT_OF_RANGE",
    field: "elapsed_ms",
  },
  {
    rule: "amount_minor is at most 10^15",
    record: variant("cost", { amount_minor: 1e15 + 1 }),
    reason: "OUT_OF_RANGE",
    field: "amount_minor",
  },
  {
    rule: "an empty provider is invalid",
    record: variant("model_call", { provider: "" }),
    reason: "OUT_OF_RANGE",
    field: "provider",
  },
  {
    rule: "a packet without repair_attribution lacks a required measure",
    record: variant("packet", {}, ["repair_attribution"]),
    reason: "MISSING_FIELD",
    field: "repair_attribution",
  },
];

describe("revision 2 change 1: an invalid measure no longer rejects the fact", () => {
  it.each(invalidMeasureCases)("$rule → accepted, $field reported as $reason", ({ record, reason, field }) => {
    const parsed = parseFact(record);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.invalidMeasures.map((measure) => [measure.field, measure.reason])).toEqual([[field, reason]]);
    const fact = parsed.fact as unknown as Record<string, unknown>;
    expect(fact[field as string]).toBeUndefined();
    expect(Object.keys(fact["invalid_measures"] as object)).toEqual([field]);
  });

  it("values at the ranges are valid measures", () => {
    const atRange = parseFact(variant("model_call", { span_duration_ms: 1e10, input_tokens: 1e12, output_tokens: 0 }));
    expect(atRange).toMatchObject({
      ok: true,
      invalidMeasures: [],
      fact: { span_duration_ms: 1e10, input_tokens: 1e12 },
    });
    expect(parseFact(variant("cost", { amount_minor: 1e15 }))).toMatchObject({ ok: true, invalidMeasures: [] });
    expect(parseFact(variant("delivery_summary", { elapsed_ms: 1e11 }))).toMatchObject({
      ok: true,
      invalidMeasures: [],
    });
  });

  it("several invalid measures are each reported; the other fields of the fact are kept", () => {
    const parsed = parseFact(variant("model_call", { span_duration_ms: -5, output_tokens: "many" }));
    expect(parsed).toMatchObject({
      ok: true,
      fact: { call_id: "c1", input_tokens: 10, invalid_measures: { output_tokens: '"many"', span_duration_ms: "-5" } },
    });
    if (parsed.ok)
      expect(parsed.invalidMeasures.map((measure) => measure.field)).toEqual(["output_tokens", "span_duration_ms"]);
  });

  it("an invalid identity, link or envelope field still rejects, whatever measures are invalid too", () => {
    expect(parseFact(variant("model_call", { span_duration_ms: -5, call_id: "" }))).toMatchObject({
      ok: false,
      rejection: { field: "call_id" },
    });
    expect(parseFact(variant("cost", { amount_minor: -5, delivery_id: "d1" }))).toMatchObject({
      ok: false,
      rejection: { reason: "COST_LINK_NOT_EXACTLY_ONE" },
    });
    expect(parseFact(variant("delivery_summary", { elapsed_ms: -1 }, ["outcome"]))).toMatchObject({
      ok: false,
      rejection: { reason: "OUTCOME_REQUIRED" },
    });
  });

  it("agent events have no measure fields: their invalid token counts still reject", () => {
    expect(parseFact(variant("agent_step", { input_tokens: -1 }))).toMatchObject({
      ok: false,
      rejection: { reason: "OUT_OF_RANGE", field: "input_tokens" },
    });
  });

  it("the engine topic's normalised form carries the invalid measures through unchanged", () => {
    const parsed = parseFact(variant("cost", { amount_minor: -5 }));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const again = parseNormalizedFact(JSON.parse(JSON.stringify(parsed.fact)));
    expect(again.ok && JSON.stringify(again.fact)).toBe(JSON.stringify(parsed.fact));
  });
});
