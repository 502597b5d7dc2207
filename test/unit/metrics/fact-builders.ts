import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { canonicalJson } from "../../../src/contract/canonical-json.ts";
import { OBSERVATION_CONTRACT } from "../../../src/contract/fact-schema.ts";
import type { MetricFact } from "../../../src/contract/facts.ts";
import { isAgentEvent } from "../../../src/contract/facts.ts";
import { parseFact } from "../../../src/contract/parse-fact.ts";
import { DEFAULT_ENGINE_CONFIG, type EngineConfig } from "../../../src/metrics/engine-config.ts";
import { evaluateFacts } from "../../support/evaluate-facts.ts";
import type { Conflict } from "../../../src/metrics/fact-ledger.ts";
import type { Cohort, MetricResult, Scope } from "../../../src/contract/result-record.ts";
import type { MetricId } from "../../../src/catalog/metric-definitions.ts";

/**
 * Test support for the metric engine: builders of valid raw facts (the contract's JSON form) with
 * sensible defaults, run through parseFact so tests feed the engine exactly what production feeds
 * it. An override set to `undefined` removes the field (absent, not null). A builder that yields an
 * invalid record throws: a rule test must never pass because its input was silently rejected.
 */

export type Raw = Record<string, unknown>;
export type Overrides = Readonly<Record<string, unknown>>;

/** 2026-03-02T00:00:00Z: the start of the default one-day window. */
export const DAY0 = Date.UTC(2026, 2, 2);
export const HOUR = 3_600_000;
export const MINUTE = 60_000;
export const DAY = 86_400_000;

/** ISO-8601 UTC text of DAY0 + offset milliseconds. */
export function at(offsetMillis: number): string {
  return new Date(DAY0 + offsetMillis).toISOString();
}

/** The default event time of every builder: 10:00 on DAY0. */
export const T = at(10 * HOUR);
/** The default snapshot cutoff: 23:00 on DAY0. */
export const CUTOFF = at(23 * HOUR);

function apply(base: Raw, overrides: Overrides): Raw {
  const record: Raw = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete record[key];
    else record[key] = value;
  }
  return record;
}

/** A deterministic fact_id from the record's content: identical builds are redeliveries, different ones never collide. */
function contentId(record: Raw): string {
  const { fact_id: _ignored, ...rest } = record;
  return `f-${String(record["type"])}-${createHash("sha256").update(canonicalJson(rest)).digest("hex").slice(0, 16)}`;
}

function envelope(type: string): Raw {
  return {
    contract: OBSERVATION_CONTRACT,
    type,
    event_time: T,
    provenance: { basis: "DIRECT_HOST", source: "host-a" },
  };
}

/** The raw JSON record (unparsed), with a content-derived fact_id unless one is given. */
export function raw(type: string, defaults: Raw, overrides: Overrides): Raw {
  const record = apply({ ...envelope(type), ...defaults }, overrides);
  if (!("fact_id" in overrides)) record["fact_id"] = contentId(record);
  return record;
}

/** Parses a raw record as production does; throws when it is not an accepted metric fact. */
export function parsed(record: Raw): MetricFact {
  const result = parseFact(record);
  if (!result.ok)
    throw new Error(
      `builder produced an invalid ${String(record["type"])}: ${result.rejection.reason} ${result.rejection.detail}\n${JSON.stringify(record)}`,
    );
  if (result.invalidMeasures.length > 0)
    throw new Error(
      `builder produced invalid measures ${result.invalidMeasures.map((measure) => measure.field).join(", ")} (use parsedWithInvalidMeasures)\n${JSON.stringify(record)}`,
    );
  if (isAgentEvent(result.fact)) throw new Error("builder produced an agent event, not a metric fact");
  return result.fact;
}

/** Parses a raw record that is meant to carry invalid measures (revision 2: accepted without them). */
export function parsedWithInvalidMeasures(record: Raw): MetricFact {
  const result = parseFact(record);
  if (!result.ok || result.invalidMeasures.length === 0)
    throw new Error(`expected an accepted fact with invalid measures\n${JSON.stringify(record)}`);
  if (isAgentEvent(result.fact)) throw new Error("builder produced an agent event, not a metric fact");
  return result.fact;
}

export function rawModelCall(overrides: Overrides = {}): Raw {
  return raw(
    "model_call",
    {
      call_id: "call-1",
      run_id: "run-1",
      operational: true,
      provider: "openai",
      model: "gpt-5",
      role: "writer",
      runtime: "codex-cli",
      span_duration_ms: 1000,
      input_tokens: 100,
      output_tokens: 50,
      usage_source: "PROVIDER",
    },
    overrides,
  );
}

export function rawCost(overrides: Overrides = {}): Raw {
  const base: Raw = {
    cost_id: "cost-1",
    amount_minor: 250,
    currency: "USD",
    source: "PROVIDER",
    cost_basis: "list-price",
    attribution: "PROJECT",
    estimated: false,
  };
  // Link to call-1 by default, unless the caller links by delivery_id.
  if (!("delivery_id" in overrides) && !("call_id" in overrides)) base["call_id"] = "call-1";
  return raw("cost", base, overrides);
}

export function rawSummary(overrides: Overrides = {}): Raw {
  const base: Raw = {
    delivery_id: "d-1",
    task_id: "t-1",
    run_id: "run-1",
    status: "TERMINAL",
    outcome: "SUCCEEDED",
    requirement_changed: false,
    elapsed_ms: 60_000,
    stage_reached: "merged",
  };
  if (overrides["status"] === "OPEN" && !("outcome" in overrides)) delete base["outcome"];
  return raw("delivery_summary", base, overrides);
}

export function rawPacket(overrides: Overrides = {}): Raw {
  return raw(
    "packet",
    { packet_id: "p-1", task_id: "t-1", governance_revision: "0.2", repair_attribution: "AVAILABLE" },
    overrides,
  );
}

export function rawRepair(overrides: Overrides = {}): Raw {
  return raw("repair", { repair_id: "r-1", finding_id: "finding-1", packet_id: "p-1", attributable: true }, overrides);
}

/** One defined task of a snapshot (not a fact by itself): task t-1 with member d-1, template tpl-a at event time. */
export function definedTask(overrides: Overrides = {}): Raw {
  return apply(
    { task_id: "t-1", members: ["d-1"], role_template: "tpl-a", template_assignment: "EVENT_TIME" },
    overrides,
  );
}

export function rawSnapshot(overrides: Overrides = {}): Raw {
  return raw(
    "task_snapshot",
    { snapshot_id: "snap-1", cutoff: CUTOFF, tasks: [definedTask()] },
    { event_time: CUTOFF, ...overrides },
  );
}

export const modelCall = (overrides: Overrides = {}): MetricFact => parsed(rawModelCall(overrides));
export const cost = (overrides: Overrides = {}): MetricFact => parsed(rawCost(overrides));
export const summary = (overrides: Overrides = {}): MetricFact => parsed(rawSummary(overrides));
export const packet = (overrides: Overrides = {}): MetricFact => parsed(rawPacket(overrides));
export const repair = (overrides: Overrides = {}): MetricFact => parsed(rawRepair(overrides));
export const snapshot = (overrides: Overrides = {}): MetricFact => parsed(rawSnapshot(overrides));

/**
 * A complete, eligible terminal task: a snapshot entry plus one TERMINAL summary per member, joined
 * by exact Delivery and Task identity. Returns the defined task and the summaries.
 */
export function terminalTask(
  taskId: string,
  options: { members?: readonly string[]; template?: string; outcome?: string; summary?: Overrides } = {},
): { task: Raw; facts: MetricFact[] } {
  const members = options.members ?? [`${taskId}-d`];
  const task = definedTask({ task_id: taskId, members: [...members], role_template: options.template ?? "tpl-a" });
  const facts = members.map((member) =>
    summary({ delivery_id: member, task_id: taskId, outcome: options.outcome ?? "SUCCEEDED", ...options.summary }),
  );
  return { task, facts };
}

// ---------------------------------------------------------------------------------------------
// Evaluation and lookup

export interface Evaluated {
  readonly lines: readonly string[];
  readonly results: readonly MetricResult[];
  readonly conflicts: readonly Conflict[];
  /** Every record of one metric (any cohort, any scope). */
  records(metricId: MetricId): MetricResult[];
  /** The one record of (metric, cohort, scope); scope may be omitted when the metric has one scope. Throws otherwise. */
  get(metricId: MetricId, cohort?: Cohort, scope?: ScopeSelector): MetricResult;
  /** Like get, but undefined when there is no such record. */
  find(metricId: MetricId, cohort?: Cohort, scope?: ScopeSelector): MetricResult | undefined;
}

/** A window by its start (ISO text) or a snapshot by its id. */
export type ScopeSelector = { readonly window: string } | { readonly snapshot: string };

function scopeMatches(scope: Scope, selector: ScopeSelector | undefined): boolean {
  if (selector === undefined) return true;
  if ("window" in selector) return scope.kind === "window" && scope.start === selector.window;
  return scope.kind === "snapshot" && scope.snapshot_id === selector.snapshot;
}

export function indexResults(lines: readonly string[], conflicts: readonly Conflict[] = []): Evaluated {
  const results = lines.map((line) => JSON.parse(line) as MetricResult);
  const matching = (metricId: MetricId, cohort: Cohort, scope: ScopeSelector | undefined): MetricResult[] =>
    results.filter(
      (result) =>
        result.metric_id === metricId && isDeepStrictEqual(result.cohort, cohort) && scopeMatches(result.scope, scope),
    );
  return {
    lines,
    results,
    conflicts,
    records: (metricId) => results.filter((result) => result.metric_id === metricId),
    find(metricId, cohort = {}, scope) {
      const found = matching(metricId, cohort, scope);
      if (found.length > 1)
        throw new Error(`${found.length} records for ${metricId} ${JSON.stringify(cohort)}; give a scope`);
      return found[0];
    },
    get(metricId, cohort = {}, scope) {
      const found = matching(metricId, cohort, scope);
      if (found.length !== 1) {
        const known = results
          .filter((result) => result.metric_id === metricId)
          .map((result) => `${JSON.stringify(result.cohort)} ${JSON.stringify(result.scope)}`);
        throw new Error(
          `expected one record for ${metricId} ${JSON.stringify(cohort)} ${JSON.stringify(scope ?? null)}, found ${found.length}; records of this metric:\n${known.join("\n")}`,
        );
      }
      return found[0] as MetricResult;
    },
  };
}

/** Runs facts through a fresh engine (evaluateFacts) and indexes the results. */
export function evaluate(facts: Iterable<MetricFact>, config: Partial<EngineConfig> = {}): Evaluated {
  const evaluation = evaluateFacts(facts, { ...DEFAULT_ENGINE_CONFIG, ...config });
  return indexResults(evaluation.lines, evaluation.conflicts);
}

/** The default window scope selector (DAY0). */
export const WINDOW0: ScopeSelector = { window: at(0) };

export function catalogMinimumSample(metricId: MetricId): number {
  const catalog = JSON.parse(
    readFileSync(new URL("../../../system-contracts/evaluation/metric-catalog.json", import.meta.url), "utf8"),
  ) as { metrics: { metric_id: string; minimum_sample: number }[] };
  const record = catalog.metrics.find((metric) => metric.metric_id === metricId);
  if (record === undefined) throw new Error(`catalog has no ${metricId}`);
  return record.minimum_sample;
}

/** The attribution tuple cohort of the default model call. */
export const TUPLE: Cohort = { model: "gpt-5", provider: "openai", role: "writer", runtime: "codex-cli" };

/** n distinct terminal Deliveries (no task), for window metrics with a minimum sample. */
export function terminalDeliveries(n: number, overrides: (i: number) => Overrides = () => ({})): MetricFact[] {
  return Array.from({ length: n }, (_, i) => summary({ delivery_id: `dd-${i}`, task_id: undefined, ...overrides(i) }));
}
