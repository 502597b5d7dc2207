import type { FactType } from "../../src/contract/fact-schema.ts";
import type { OutputRecord } from "../../src/kafka/serde/schemas.ts";

/**
 * One representative record per Avro schema, in the shape avsc reads and writes: absent optionals
 * are null, timestamps epoch milliseconds, and the metric result's scope (a union of two records)
 * wrapped in its branch name, as avsc does for unions it cannot tell apart by value.
 */
const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const envelope = (type: FactType, factId: string) => ({
  contract: "agentops.observation@1.0.0",
  type,
  fact_id: factId,
  event_time: T0,
  provenance: { basis: "DIRECT_HOST", source: "otel-collector" },
});

export const sampleFacts: Readonly<Record<FactType, Record<string, unknown>>> = {
  model_call: { ...envelope("model_call", "f-call-1"), call_id: "call-1", run_id: "run-1", delivery_id: "d-1", task_id: null, operational: true, provider: "anthropic", model: "claude-x", role: "implementer", runtime: "claude-code", span_duration_ms: 1234.5, input_tokens: 1000, output_tokens: 250, usage_source: "PROVIDER" },
  cost: { ...envelope("cost", "f-cost-1"), provenance: { basis: "SOMETHING_NEW", source: null }, cost_id: "cost-1", call_id: "call-1", delivery_id: null, amount_minor: 4200, currency: "USD", source: "PROVIDER", cost_basis: "list-price-2026", attribution: "PROJECT", estimated: false },
  delivery_summary: { ...envelope("delivery_summary", "f-ds-1"), delivery_id: "d-1", task_id: "t-1", run_id: "run-1", status: "TERMINAL", outcome: "SUCCEEDED", requirement_changed: false, elapsed_ms: 3_600_000, stage_reached: "review" },
  packet: { ...envelope("packet", "f-packet-1"), provenance: null, packet_id: "p-1", task_id: "t-1", governance_revision: "0.2", repair_attribution: "AVAILABLE" },
  repair: { ...envelope("repair", "f-repair-1"), repair_id: "r-1", finding_id: "find-1", packet_id: "p-1", task_id: null, delivery_id: "d-1", attributable: true },
  task_snapshot: {
    ...envelope("task_snapshot", "f-snap-1"),
    snapshot_id: "snap-1",
    cutoff: T0 + 86_400_000,
    tasks: [
      { task_id: "t-1", members: ["d-1", "d-2"], role_template: "backend", template_assignment: "EVENT_TIME" },
      { task_id: null, members: null, role_template: null, template_assignment: null },
    ],
  },
  agent_step: { ...envelope("agent_step", "f-step-1"), run_id: "run-1", seq: 7, actor: "agent", kind: "tool_call", tool: "bash", input: '{"cmd":"ls"}', observation_digest: "sha256:abc", status: "ok", input_tokens: null, output_tokens: 12 },
  sandbox_event: { ...envelope("sandbox_event", "f-sbx-1"), run_id: "run-1", seq: 8, kind: "exec", command: "rm -rf build", argv: ["rm", "-rf", "build"], path: null, cwd: "/work", workspace_root: "/work", target: null, exit_code: 0 },
};

export const sampleOutputs: Readonly<Record<OutputRecord, Record<string, unknown>>> = {
  metricResult: {
    catalog: "agentops.evaluation.metric-catalog@1.0.0",
    metric_id: "delivery-terminal-outcome-rate",
    metric_version: "1.0.0",
    scope: { "agentops.v1.WindowScope": { kind: "window", start: T0, end: T0 + 86_400_000 } },
    cohort: {},
    status: "PUBLISHED",
    value: { SUCCEEDED: 0.75, FAILED: 0.25 },
    na_reason: null,
    measures: { numerator: null, denominator: 4, categories: { SUCCEEDED: 3, FAILED: 1 }, sum: null, contributing: null, unit: "ratio", currency: null },
    eligible_units: 4,
    minimum_sample: 3,
    coverage: { numerator: 4, denominator: 5, raw_ratio: 0.8, state: "PARTIAL", alert: false, threshold_hundredths: 10 },
    exclusions: { INFRASTRUCTURE_FAILURE: 1 },
    as_of: T0 + 3_600_000,
  },
  tripwireAlert: {
    alert_id: "run-1:loop@1:7-19",
    run_id: "run-1",
    rule_id: "loop",
    rule_version: "1",
    kind: "LOOP",
    severity: "warning",
    event_time: T0,
    evidence: { seq_from: 7, seq_to: 19, repetitions: 4, cycle_length: 3, command: null, path: null, detail: "same tool call repeated" },
    message: "run-1 repeats a 3-step cycle 4 times",
  },
  deadLetter: {
    reason: "UNSUPPORTED_CONTRACT",
    detail: "contract must be agentops.observation@1.0.0",
    source: { topic: "agentops.facts.v1", partition: 2, offset: "9007199254740993" },
    key: Buffer.from("f-1"),
    value: Buffer.from([0, 1, 2, 255]),
    fact_id: "f-1",
    rejected_at: T0,
  },
};

/** A snapshot-scoped result too, so both branches of the scope union travel. */
export const sampleSnapshotResult: Record<string, unknown> = {
  ...sampleOutputs.metricResult,
  metric_id: "role-template-rework-rate",
  scope: { "agentops.v1.SnapshotScope": { kind: "snapshot", snapshot_id: "snap-1", cutoff: T0 } },
  cohort: { role_template: "backend" },
  status: "NOT_AVAILABLE",
  value: null,
  na_reason: "N/A when no eligible tasks",
  measures: null,
  eligible_units: 0,
  coverage: { numerator: 0, denominator: 0, raw_ratio: null, state: "NO_POPULATION", alert: false, threshold_hundredths: 10 },
  exclusions: {},
  as_of: null,
};
