import { describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import { METRIC_IDS } from "../../../src/catalog/metric-ids.ts";
import {
  isAgentEvent,
  type AgentStep,
  type Cost,
  type DeliverySummary,
  type MetricFact,
  type ModelCall,
  type Packet,
  type Repair,
  type SandboxEvent,
  type TaskSnapshot,
} from "../../../src/contract/facts.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { MetricEngine } from "../../../src/metrics/metric-engine.ts";
import { evaluateFacts } from "../../support/evaluate-facts.ts";
import type { MetricResult } from "../../../src/contract/result-record.ts";
import { parseFactJson } from "../../../src/contract/parse-fact.ts";
import { countBy, defaultSample, parseAll } from "./workload-support.ts";

const sample = defaultSample();
const { facts, rejections } = parseAll(sample.lines);
const ofType = <T extends { type: string }>(type: T["type"]): T[] =>
  facts.filter((fact) => fact.type === type) as unknown as T[];
const calls = ofType<ModelCall>("model_call");
const costs = ofType<Cost>("cost");
const summaries = ofType<DeliverySummary>("delivery_summary");
const packets = ofType<Packet>("packet");
const repairs = ofType<Repair>("repair");
const snapshots = ofType<TaskSnapshot>("task_snapshot");
const steps = ofType<AgentStep>("agent_step");
const sandbox = ofType<SandboxEvent>("sandbox_event");
const metricFacts = facts.filter((fact): fact is MetricFact => !isAgentEvent(fact));

describe("default sample: every line parses or is an intentional bad line", () => {
  it("rejects exactly the malformed and unsupported-contract lines", () => {
    expect(sample.stats.malformed).toBe(4);
    expect(sample.stats.unsupportedContract).toBe(3);
    expect(rejections).toHaveLength(sample.stats.malformed + sample.stats.unsupportedContract);
    expect(countBy(rejections, (rejection) => rejection.reason)).toEqual({
      UNSUPPORTED_CONTRACT: 3,
      MALFORMED_JSON: 1,
      INVALID_TIMESTAMP: 2,
      DUPLICATE_FIELD: 1,
    });
  });

  it("holds exact redeliveries: byte-identical repeated lines, about one percent", () => {
    const repeats = sample.lines.length - new Set(sample.lines).size;
    expect(repeats).toBe(sample.stats.redeliveries);
    expect(repeats / sample.lines.length).toBeGreaterThan(0.003);
    expect(repeats / sample.lines.length).toBeLessThan(0.03);
  });

  it("writes ISO-8601 UTC timestamps with Z", () => {
    const times = sample.lines
      .slice(0, 500)
      .flatMap((line) => [...line.matchAll(/"(?:event_time|cutoff)":"([^"]+)"/g)].map((match) => match[1] ?? ""));
    expect(times.length).toBeGreaterThan(400);
    for (const time of times) expect(time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});

describe("default sample: exercises every rule of contract revision 2", () => {
  const parsedLines = sample.lines.map((line) => parseFactJson(line));
  const invalid = parsedLines.flatMap((parsed) => (parsed.ok ? parsed.invalidMeasures : []));

  it("invalid measures of each kind are accepted with the measure reported", () => {
    expect(sample.stats.invalidMeasureFacts).toBeGreaterThanOrEqual(16);
    expect(new Set(invalid.map((measure) => measure.reason))).toEqual(
      new Set(["OUT_OF_RANGE", "WRONG_TYPE", "INVALID_ENUM", "INVALID_CURRENCY"]),
    );
    for (const field of [
      "span_duration_ms",
      "input_tokens",
      "output_tokens",
      "usage_source",
      "provider",
      "amount_minor",
      "currency",
      "elapsed_ms",
      "stage_reached",
    ]) {
      expect(
        invalid.some((measure) => measure.field === field),
        field,
      ).toBe(true);
    }
  });

  it("values at the ranges are accepted, and just past them are invalid", () => {
    expect(calls.some((call) => call.span_duration_ms === 1e10)).toBe(true);
    expect(calls.some((call) => call.output_tokens === 1e12)).toBe(true);
    expect(costs.some((cost) => cost.amount_minor === 1e15)).toBe(true);
    expect(summaries.some((summary) => summary.elapsed_ms === 1e11)).toBe(true);
    for (const past of ["10000000001", "1000000000001", "1000000000000001", "100000000001"])
      expect(
        metricFacts.some(
          (fact) => "invalid_measures" in fact && Object.values(fact.invalid_measures ?? {}).includes(past),
        ),
        past,
      ).toBe(true);
  });

  it("summaries without task_id, re-reports under a new fact_id, and rejected rolled-over dates and repeated keys", () => {
    expect(
      summaries.some(
        (summary) => summary.task_id === undefined && summary.status === "OPEN" && summary.requirement_changed,
      ),
    ).toBe(true);
    expect(sample.stats.reReports).toBeGreaterThan(0);
    expect(
      costs.some((cost) => cost.fact_id.endsWith("-rereport") && cost.provenance?.source === "billing-replay"),
    ).toBe(true);
    expect(rejections.filter((rejection) => rejection.reason === "INVALID_TIMESTAMP")).toHaveLength(2);
    expect(rejections.filter((rejection) => rejection.reason === "DUPLICATE_FIELD")).toHaveLength(1);
  });
});

describe("default sample: exercises every rule", () => {
  it("money: three currencies, several bases, ineligible costs, both links", () => {
    // undefined: the costs whose currency is an invalid measure (revision 2).
    expect(new Set(costs.map((cost) => cost.currency))).toEqual(new Set(["USD", "EUR", "JPY", undefined]));
    expect(new Set(costs.map((cost) => cost.cost_basis)).size).toBeGreaterThanOrEqual(4);
    expect(costs.some((cost) => cost.source === "ESTIMATE" && cost.estimated)).toBe(true);
    expect(costs.some((cost) => cost.source !== "ESTIMATE" && cost.estimated)).toBe(true);
    expect(costs.some((cost) => cost.attribution === "SHARED")).toBe(true);
    expect(costs.some((cost) => cost.attribution === "UNATTRIBUTED")).toBe(true);
    expect(costs.filter((cost) => cost.delivery_id !== undefined).length).toBeGreaterThan(50);
    expect(costs.filter((cost) => cost.call_id !== undefined).length).toBeGreaterThan(1000);
    const ineligible = costs.filter(
      (cost) => cost.source === "ESTIMATE" || cost.estimated || cost.attribution !== "PROJECT",
    ).length;
    expect(ineligible / costs.length).toBeGreaterThan(0.05);
    expect(ineligible / costs.length).toBeLessThan(0.25);
  });

  it("calls: incomplete tuples, judges, missing durations and tokens, every usage source", () => {
    const incomplete = calls.filter((call) => !call.provider || !call.model || !call.role || !call.runtime);
    expect(incomplete.length / calls.length).toBeGreaterThan(0.01);
    expect(incomplete.length / calls.length).toBeLessThan(0.1);
    for (const coordinate of ["provider", "model", "role", "runtime"] as const)
      expect(incomplete.some((call) => !call[coordinate])).toBe(true);
    expect(calls.some((call) => !call.operational)).toBe(true);
    expect(calls.some((call) => call.span_duration_ms === undefined)).toBe(true);
    expect(calls.some((call) => call.input_tokens === undefined && call.usage_source !== "NONE")).toBe(true);
    expect(new Set(calls.map((call) => call.usage_source))).toEqual(new Set(["PROVIDER", "HOST", "NONE", undefined]));
    const tuples = new Set(
      calls
        .filter((call) => call.operational && call.provider && call.model && call.role && call.runtime)
        .map((call) => `${call.provider}/${call.model}/${call.role}/${call.runtime}`),
    );
    expect(tuples.size).toBe(4);
  });

  it("provenance: direct, derived, estimated, manual and unreadable", () => {
    const bases = new Set([...calls, ...costs, ...summaries].map((fact) => fact.provenance?.basis ?? "null"));
    for (const basis of ["DIRECT_HOST", "DIRECT_PROVIDER", "DERIVED", "ESTIMATED", "MANUAL", "null", "SCRAPED"])
      expect(bases).toContain(basis);
  });

  it("deliveries: open ones, TERMINAL after OPEN, second TERMINAL, missing C55/C56, every outcome", () => {
    const byDelivery = new Map<string, DeliverySummary[]>();
    for (const summary of summaries)
      byDelivery.set(summary.delivery_id, [...(byDelivery.get(summary.delivery_id) ?? []), summary]);
    const kinds = [...byDelivery.values()].map(
      (list) => list.filter((summary) => summary.status === "TERMINAL").length,
    );
    expect(kinds.filter((terminal) => terminal === 0).length).toBeGreaterThan(5);
    expect(kinds.filter((terminal) => terminal === 2).length).toBeGreaterThan(3);
    expect(
      [...byDelivery.values()].some(
        (list) =>
          list.some((summary) => summary.status === "OPEN") && list.some((summary) => summary.status === "TERMINAL"),
      ),
    ).toBe(true);
    const callDeliveries = new Set(calls.map((call) => call.delivery_id));
    expect([...callDeliveries].some((id) => id !== undefined && !byDelivery.has(id))).toBe(true);
    const terminal = summaries.filter((summary) => summary.status === "TERMINAL");
    expect(terminal.some((summary) => summary.elapsed_ms === undefined)).toBe(true);
    expect(terminal.some((summary) => summary.stage_reached === undefined)).toBe(true);
    expect(new Set(terminal.map((summary) => summary.outcome))).toEqual(
      new Set(["SUCCEEDED", "FAILED", "CANCELLED", "INFRASTRUCTURE_FAILURE"]),
    );
    expect(summaries.some((summary) => summary.requirement_changed)).toBe(true);
  });

  it("packets and repairs: unsupported revision, unavailable attribution, (non-)attributable repairs", () => {
    expect(new Set(packets.map((packet) => packet.governance_revision))).toEqual(new Set(["0.2", "0.1"]));
    expect(packets.some((packet) => packet.repair_attribution === "UNAVAILABLE")).toBe(true);
    expect(new Set(repairs.map((repair) => repair.attributable))).toEqual(new Set([true, false]));
  });

  it("snapshots: several cutoffs, undeclared parts, backfilled templates, facts after a cutoff", () => {
    expect(new Set(snapshots.map((snapshot) => snapshot.cutoff)).size).toBeGreaterThanOrEqual(2);
    const tasks = snapshots.flatMap((snapshot) => snapshot.tasks);
    expect(tasks.some((task) => task.task_id === undefined)).toBe(true);
    expect(tasks.some((task) => task.members === undefined)).toBe(true);
    expect(tasks.some((task) => task.members?.length === 0)).toBe(true);
    expect(tasks.some((task) => task.role_template === undefined)).toBe(true);
    expect(tasks.some((task) => task.template_assignment === "BACKFILLED")).toBe(true);
    expect(new Set(tasks.map((task) => task.role_template).filter((template) => template !== undefined)).size).toBe(2);
    const earliest = Math.min(...snapshots.map((snapshot) => snapshot.cutoff));
    expect(summaries.filter((summary) => summary.event_time > earliest).length).toBeGreaterThan(100);
  });

  it("agent runs: tool calls with canonical input, every sandbox kind, loops, redundancy, destructive commands", () => {
    const toolCalls = steps.filter((step) => step.kind === "tool_call");
    expect(new Set(steps.map((step) => step.kind))).toEqual(new Set(["tool_call", "message", "plan"]));
    for (const step of toolCalls) {
      const input = JSON.parse(step.input ?? "") as Record<string, unknown>;
      expect(step.input).toBe(
        JSON.stringify(Object.fromEntries(Object.entries(input).sort(([a], [b]) => (a < b ? -1 : 1)))),
      );
    }
    expect(new Set(toolCalls.map((step) => step.status))).toEqual(new Set(["ok", "error"]));
    expect(new Set(sandbox.map((event) => event.kind))).toEqual(
      new Set(["exec", "file_read", "file_write", "file_delete", "network", "git", "sql"]),
    );
    const commands = sandbox.map((event) => event.command);
    for (const destructive of ["rm -rf /", "git push --force origin main", "DROP TABLE users"])
      expect(commands).toContain(destructive);
    expect(
      commands.filter(
        (command) =>
          command === "rm -rf /" || command === "git push --force origin main" || command === "DROP TABLE users",
      ).length / sandbox.length,
    ).toBeLessThan(0.02);

    // A loop: some run has a cycle of 2–3 tool calls repeated 4 times back to back.
    const byRun = new Map<string, string[]>();
    for (const step of toolCalls.sort((a, b) => a.seq - b.seq))
      byRun.set(step.run_id, [
        ...(byRun.get(step.run_id) ?? []),
        `${step.tool}${step.input}${step.observation_digest}`,
      ]);
    const hasLoop = (actions: readonly string[]): boolean =>
      [2, 3].some((length) =>
        actions.some(
          (_, start) =>
            start + 4 * length <= actions.length &&
            [1, 2, 3].every((repeat) =>
              actions
                .slice(start, start + length)
                .every((action, offset) => actions[start + repeat * length + offset] === action),
            ),
        ),
      );
    const looping = [...byRun.values()].filter(hasLoop).length;
    expect(looping).toBeGreaterThan(0);
    expect(looping / byRun.size).toBeLessThan(0.1);
    expect(
      [...byRun.values()].some((actions) =>
        actions.some((action, index) => index > 0 && actions[index - 1] === action && !hasLoop(actions)),
      ),
    ).toBe(true);
  });
});

describe("default sample through the metric engine", () => {
  const evaluation = evaluateFacts(metricFacts);
  const results = evaluation.lines.map((line) => JSON.parse(line) as MetricResult);

  it("publishes a value for each of the 14 metrics", () => {
    const published = new Set(
      results.filter((result) => result.status === "PUBLISHED").map((result) => result.metric_id),
    );
    expect([...published].sort()).toEqual([...METRIC_IDS].sort());
  });

  it("also yields NOT_AVAILABLE and BELOW_MINIMUM_SAMPLE records", () => {
    const statuses = countBy(results, (result) => result.status);
    expect(statuses["NOT_AVAILABLE"]).toBeGreaterThan(0);
    expect(statuses["BELOW_MINIMUM_SAMPLE"]).toBeGreaterThan(0);
    expect(results.some((result) => result.exclusions["INCOMPLETE_ATTRIBUTION"] !== undefined)).toBe(true);
    for (const reason of [
      "MISSING_TASK_IDENTITY",
      "UNDEFINED_TASK_MEMBERSHIP",
      "INCOMPLETE_COHORT_COORDINATES",
      "OPEN_DELIVERY",
      "MIXED_DELIVERY_OUTCOMES",
      "REQUIREMENT_CHANGED",
      "INFRASTRUCTURE_FAILURE",
    ]) {
      expect(
        results.some(
          (result) => result.metric_id === "task-cohort-comparison-eligibility" && (result.exclusions[reason] ?? 0) > 0,
        ),
      ).toBe(true);
    }
  });

  it("detects the injected conflicts (fact_id, call_id and snapshot_id) and the later TERMINAL summaries", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    for (const fact of metricFacts) engine.ingest(fact);
    const identities = engine.conflicts().map((conflict) => conflict.identity.split("\u0000")[0]);
    expect(identities).toEqual(expect.arrayContaining(["fact", "call", "snapshot", "delivery"]));
    expect(
      engine.conflicts().filter((conflict) => conflict.reason === "LATER_TERMINAL_SUMMARY").length,
    ).toBeGreaterThan(0);
    expect(evaluation.conflicts).toEqual(engine.conflicts());
  });

  it("most results are PUBLISHED (what npm start shows)", () => {
    const published = evaluation.lines
      .map((line) => JSON.parse(line) as MetricResult)
      .filter((result) => result.status === "PUBLISHED").length;
    expect(published / evaluation.lines.length).toBeGreaterThan(0.5);
  });
});
