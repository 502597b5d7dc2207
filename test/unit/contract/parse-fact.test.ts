import { describe, expect, it } from "vitest";
import { parseFact, parseFactJson } from "../../../src/contract/parse-fact.ts";
import type { RejectionReason } from "../../../src/contract/rejection.ts";

/**
 * Contract §1–§2, table-driven: each row breaks one rule of one record type and names the reason
 * (and field) the validator must give. Every base record is valid on its own (checked first).
 */
const envelope = (type: string, factId: string) => ({ contract: "agentops.observation@1.0.0", type, fact_id: factId, event_time: "2026-10-01T10:00:00Z", provenance: { basis: "DIRECT_HOST", source: "host" } });

const base: Record<string, Record<string, unknown>> = {
  model_call: { ...envelope("model_call", "f-call"), call_id: "c1", run_id: "r1", operational: true, provider: "p", model: "m", role: "writer", runtime: "rt", span_duration_ms: 12.5, input_tokens: 10, output_tokens: 2, usage_source: "PROVIDER" },
  cost: { ...envelope("cost", "f-cost"), cost_id: "k1", call_id: "c1", amount_minor: 120, currency: "USD", source: "PROVIDER", cost_basis: "list", attribution: "PROJECT", estimated: false },
  delivery_summary: { ...envelope("delivery_summary", "f-sum"), delivery_id: "d1", task_id: "t1", status: "TERMINAL", outcome: "SUCCEEDED", requirement_changed: false, elapsed_ms: 1000, stage_reached: "merge" },
  packet: { ...envelope("packet", "f-packet"), packet_id: "p1", governance_revision: "0.2", repair_attribution: "AVAILABLE" },
  repair: { ...envelope("repair", "f-repair"), repair_id: "rp1", finding_id: "fd1", packet_id: "p1", attributable: true },
  task_snapshot: { ...envelope("task_snapshot", "f-snap"), snapshot_id: "s1", cutoff: "2026-10-02T00:00:00Z", tasks: [{ task_id: "t1", members: ["d1"], role_template: "tpl", template_assignment: "EVENT_TIME" }] },
  agent_step: { ...envelope("agent_step", "f-step"), run_id: "r1", seq: 0, kind: "tool_call", tool: "bash", input: "{}", status: "ok" },
  sandbox_event: { ...envelope("sandbox_event", "f-sandbox"), run_id: "r1", seq: 1, kind: "exec", command: "ls", cwd: "/w", workspace_root: "/w", exit_code: 0 },
};

function variant(type: string, change: Record<string, unknown>, remove: readonly string[] = []): Record<string, unknown> {
  const record: Record<string, unknown> = { ...base[type], ...change };
  for (const field of remove) delete record[field];
  return record;
}

const cases: readonly { rule: string; record: unknown; reason: RejectionReason; field?: string }[] = [
  // §1 envelope
  { rule: "a record must be an object", record: [1, 2], reason: "NOT_AN_OBJECT" },
  { rule: "contract must be agentops.observation@1.0.0", record: variant("cost", { contract: "agentops.observation@0.9.0" }), reason: "UNSUPPORTED_CONTRACT", field: "contract" },
  { rule: "a record without a contract is unsupported", record: variant("cost", {}, ["contract"]), reason: "UNSUPPORTED_CONTRACT", field: "contract" },
  { rule: "type must be one of the eight", record: variant("cost", { type: "invoice" }), reason: "UNKNOWN_TYPE", field: "type" },
  { rule: "fact_id is required", record: variant("packet", {}, ["fact_id"]), reason: "MISSING_FIELD", field: "fact_id" },
  { rule: "fact_id is 1..256 characters", record: variant("packet", { fact_id: "" }), reason: "OUT_OF_RANGE", field: "fact_id" },
  { rule: "fact_id is at most 256 characters", record: variant("packet", { fact_id: "x".repeat(257) }), reason: "OUT_OF_RANGE", field: "fact_id" },
  { rule: "event_time is a UTC timestamp", record: variant("packet", { event_time: "yesterday" }), reason: "INVALID_TIMESTAMP", field: "event_time" },
  { rule: "event_time needs an explicit zone", record: variant("packet", { event_time: "2026-10-01T10:00:00" }), reason: "INVALID_TIMESTAMP", field: "event_time" },
  { rule: "event_time in epoch milliseconds is an integer", record: variant("packet", { event_time: 1.5 }), reason: "INVALID_TIMESTAMP", field: "event_time" },
  { rule: "provenance is an object with a basis", record: variant("packet", { provenance: { source: "x" } }), reason: "MISSING_FIELD", field: "provenance.basis" },
  { rule: "records are closed: unknown fields are rejected", record: variant("packet", { colour: "blue" }), reason: "UNKNOWN_FIELD", field: "colour" },
  // §2 model_call
  { rule: "model_call needs call_id", record: variant("model_call", {}, ["call_id"]), reason: "MISSING_FIELD", field: "call_id" },
  { rule: "model_call needs run_id", record: variant("model_call", {}, ["run_id"]), reason: "MISSING_FIELD", field: "run_id" },
  { rule: "model_call.operational is a boolean", record: variant("model_call", { operational: "yes" }), reason: "WRONG_TYPE", field: "operational" },
  { rule: "span_duration_ms is ≥ 0", record: variant("model_call", { span_duration_ms: -1 }), reason: "OUT_OF_RANGE", field: "span_duration_ms" },
  { rule: "input_tokens is an integer", record: variant("model_call", { input_tokens: 1.5 }), reason: "WRONG_TYPE", field: "input_tokens" },
  { rule: "output_tokens is ≥ 0", record: variant("model_call", { output_tokens: -3 }), reason: "OUT_OF_RANGE", field: "output_tokens" },
  { rule: "usage_source is PROVIDER, HOST or NONE", record: variant("model_call", { usage_source: "GUESS" }), reason: "INVALID_ENUM", field: "usage_source" },
  // §2 cost
  { rule: "cost links by exactly one of call_id / delivery_id (not both)", record: variant("cost", { delivery_id: "d1" }), reason: "COST_LINK_NOT_EXACTLY_ONE" },
  { rule: "cost links by exactly one of call_id / delivery_id (not none)", record: variant("cost", {}, ["call_id"]), reason: "COST_LINK_NOT_EXACTLY_ONE" },
  { rule: "amount_minor is an integer (minor units)", record: variant("cost", { amount_minor: 1.25 }), reason: "WRONG_TYPE", field: "amount_minor" },
  { rule: "amount_minor is ≥ 0", record: variant("cost", { amount_minor: -5 }), reason: "OUT_OF_RANGE", field: "amount_minor" },
  { rule: "currency is three upper-case letters", record: variant("cost", { currency: "usd" }), reason: "INVALID_CURRENCY", field: "currency" },
  { rule: "currency is an ISO 4217 code", record: variant("cost", { currency: "ABC" }), reason: "INVALID_CURRENCY", field: "currency" },
  { rule: "cost source is PROVIDER, HOST or ESTIMATE", record: variant("cost", { source: "VENDOR" }), reason: "INVALID_ENUM", field: "source" },
  { rule: "cost_basis is non-empty", record: variant("cost", { cost_basis: "" }), reason: "OUT_OF_RANGE", field: "cost_basis" },
  { rule: "attribution is PROJECT, SHARED or UNATTRIBUTED", record: variant("cost", { attribution: "TEAM" }), reason: "INVALID_ENUM", field: "attribution" },
  { rule: "estimated is required", record: variant("cost", {}, ["estimated"]), reason: "MISSING_FIELD", field: "estimated" },
  // §2 delivery_summary
  { rule: "status is OPEN or TERMINAL", record: variant("delivery_summary", { status: "DONE" }), reason: "INVALID_ENUM", field: "status" },
  { rule: "outcome is required iff TERMINAL (missing)", record: variant("delivery_summary", {}, ["outcome"]), reason: "OUTCOME_REQUIRED", field: "outcome" },
  { rule: "outcome is required iff TERMINAL (present on OPEN)", record: variant("delivery_summary", { status: "OPEN" }), reason: "OUTCOME_NOT_ALLOWED", field: "outcome" },
  { rule: "outcome is one of the four", record: variant("delivery_summary", { outcome: "PARTIAL" }), reason: "INVALID_ENUM", field: "outcome" },
  { rule: "requirement_changed is required", record: variant("delivery_summary", {}, ["requirement_changed"]), reason: "MISSING_FIELD", field: "requirement_changed" },
  { rule: "elapsed_ms (C55) is an integer ≥ 0", record: variant("delivery_summary", { elapsed_ms: -1 }), reason: "OUT_OF_RANGE", field: "elapsed_ms" },
  { rule: "stage_reached (C56) is a non-empty id", record: variant("delivery_summary", { stage_reached: "" }), reason: "OUT_OF_RANGE", field: "stage_reached" },
  // §2 packet, repair
  { rule: "repair_attribution is AVAILABLE or UNAVAILABLE", record: variant("packet", { repair_attribution: "MAYBE" }), reason: "INVALID_ENUM", field: "repair_attribution" },
  { rule: "packet needs governance_revision", record: variant("packet", {}, ["governance_revision"]), reason: "MISSING_FIELD", field: "governance_revision" },
  { rule: "repair needs finding_id", record: variant("repair", {}, ["finding_id"]), reason: "MISSING_FIELD", field: "finding_id" },
  { rule: "repair.attributable is a boolean", record: variant("repair", { attributable: 1 }), reason: "WRONG_TYPE", field: "attributable" },
  // §2 task_snapshot
  { rule: "cutoff is a timestamp", record: variant("task_snapshot", { cutoff: "soon" }), reason: "INVALID_TIMESTAMP", field: "cutoff" },
  { rule: "template_assignment is EVENT_TIME or BACKFILLED", record: variant("task_snapshot", { tasks: [{ task_id: "t1", template_assignment: "LATER" }] }), reason: "INVALID_ENUM", field: "tasks.0.template_assignment" },
  { rule: "a task is defined once per snapshot", record: variant("task_snapshot", { tasks: [{ task_id: "t1" }, { task_id: "t1" }] }), reason: "DUPLICATE_TASK_IN_SNAPSHOT", field: "tasks.1.task_id" },
  { rule: "defined tasks are closed records", record: variant("task_snapshot", { tasks: [{ task_id: "t1", owner: "me" }] }), reason: "UNKNOWN_FIELD", field: "tasks.0.owner" },
  // §2 agent_step, sandbox_event
  { rule: "agent_step.seq is an integer ≥ 0", record: variant("agent_step", { seq: -1 }), reason: "OUT_OF_RANGE", field: "seq" },
  { rule: "agent_step.kind is tool_call, message or plan", record: variant("agent_step", { kind: "thought" }), reason: "INVALID_ENUM", field: "kind" },
  { rule: "agent_step.status is ok or error", record: variant("agent_step", { status: "fine" }), reason: "INVALID_ENUM", field: "status" },
  { rule: "sandbox_event.kind is one of the seven", record: variant("sandbox_event", { kind: "reboot" }), reason: "INVALID_ENUM", field: "kind" },
  { rule: "sandbox_event.argv is a list of strings", record: variant("sandbox_event", { argv: "ls -la" }), reason: "WRONG_TYPE", field: "argv" },
  { rule: "sandbox_event.exit_code is an integer", record: variant("sandbox_event", { exit_code: 0.5 }), reason: "WRONG_TYPE", field: "exit_code" },
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

  it("malformed JSON is a rejection with a reason, not a crash", () => {
    expect(parseFactJson("{not json")).toMatchObject({ ok: false, rejection: { reason: "MALFORMED_JSON" } });
  });

  it("an unknown provenance basis is accepted (it is unreadable provenance, a metric matter)", () => {
    expect(parseFact(variant("cost", { provenance: { basis: "HEARSAY", source: null } }))).toMatchObject({ ok: true });
  });

  it("an unsupported governance revision is accepted (it is a metric exclusion, not a parse error)", () => {
    expect(parseFact(variant("packet", { governance_revision: "0.3" }))).toMatchObject({ ok: true });
  });

  it("null and absent optional fields are the same fact; ISO and epoch-millisecond times are the same instant", () => {
    const withNulls = parseFact(variant("model_call", { delivery_id: null, event_time: "2026-10-01T10:00:00.000Z" }));
    const withEpoch = parseFact(variant("model_call", { event_time: Date.parse("2026-10-01T10:00:00Z") }));
    expect(withNulls.ok && withEpoch.ok).toBe(true);
    if (withNulls.ok && withEpoch.ok) expect(JSON.stringify(withNulls.fact)).toBe(JSON.stringify(withEpoch.fact));
  });

  it("field order in the input does not change the normalised fact", () => {
    const reversed = Object.fromEntries(Object.entries(base["cost"] as Record<string, unknown>).reverse());
    const a = parseFact(base["cost"]);
    const b = parseFact(reversed);
    expect(a.ok && b.ok && JSON.stringify(a.fact) === JSON.stringify(b.fact)).toBe(true);
  });
});
