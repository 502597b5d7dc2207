import fc from "fast-check";
import type { MetricFact } from "../../src/contract/facts.ts";
import { parseFact } from "../../src/contract/parse-fact.ts";
import { domainIdentity } from "../../src/metrics/fact-ledger.ts";
import {
  DAY,
  HOUR,
  at,
  definedTask,
  parsed,
  raw,
  rawCost,
  rawModelCall,
  rawPacket,
  rawRepair,
  rawSummary,
  type Raw,
} from "../unit/metrics/fact-builders.ts";

/**
 * Arbitraries of metric fact sets for the engine's property tests (engine.property.test.ts, and the
 * on-disk state's): small, rich fact sets from a tiny id space, so links (costs to calls and
 * Deliveries, repairs to packets and tasks, members to summaries), conflicts (shared fact_id,
 * call_id, snapshot_id, cost_id, ...) and redeliveries actually happen. Every fact goes through
 * parseFact, exactly as in production.
 */

// PROPERTY_RUNS raises the count for a long local soak (e.g. PROPERTY_RUNS=5000); CI uses 200.
export const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);
export const CALLS = ["a", "b", "c"];
export const DELIVERIES = ["d1", "d2", "d3", "d4"];
export const TASKS = ["t1", "t2", "t3"];
/** Which task a Delivery usually belongs to, so members, summaries and calls usually agree (and sometimes do not). */
export const OWNER: Readonly<Record<string, string>> = { d1: "t1", d2: "t1", d3: "t2", d4: "t3" };
export const OWNED: Readonly<Record<string, string[]>> = { t1: ["d1", "d2"], t2: ["d3"], t3: ["d4"] };
export const TIMES = [-25 * HOUR, 0, 10 * HOUR, 23 * HOUR, 23 * HOUR + 1, DAY + 2 * HOUR, 2 * DAY + 5].map(at);
export const CUTOFFS = [10 * HOUR, 23 * HOUR, DAY + 6 * HOUR].map(at);

export const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
/** A measure: usually a valid value, sometimes one at its range, sometimes invalid (revision 2: read as unavailable, the fact still counts). */
export const measure = <T>(valid: fc.Arbitrary<T>, atRange: readonly unknown[], invalid: readonly unknown[]) =>
  opt(
    fc.oneof(
      { arbitrary: valid as fc.Arbitrary<unknown>, weight: 8 },
      { arbitrary: fc.constantFrom(...atRange), weight: 1 },
      { arbitrary: fc.constantFrom(...invalid), weight: 1 },
    ),
  );

/** parseFact as production runs it: an accepted fact, with or without invalid measures. */
export function accepted(record: Raw): MetricFact {
  const result = parseFact(record);
  if (!result.ok || result.fact.type === "agent_step" || result.fact.type === "sandbox_event")
    throw new Error(`generator produced a rejected record: ${JSON.stringify(record)}`);
  return result.fact;
}
export const time = fc.constantFrom(...TIMES);
export const provenance = fc.constantFrom<unknown>(
  { basis: "DIRECT_HOST", source: "h" },
  { basis: "DIRECT_PROVIDER" },
  { basis: "DERIVED" },
  { basis: "MANUAL" },
  null,
  { basis: "WEIRD" },
);
/** Mostly content-derived fact ids; rarely a shared one, so records of different types collide. (fc.option's freq is 1/freq for nil.) */
export const factId = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 25 },
  { arbitrary: fc.constantFrom("X", "Y"), weight: 1 },
);
/** A Delivery and, usually, its owning task; sometimes another task or none. */
export const deliveryAndTask = fc.constantFrom(...DELIVERIES).chain((delivery) =>
  fc.record({
    delivery_id: fc.constant(delivery),
    task_id: fc.constantFrom<string | undefined>(
      OWNER[delivery],
      OWNER[delivery],
      OWNER[delivery],
      OWNER[delivery],
      "t3",
      undefined,
    ),
  }),
);

export function withFactId(overrides: Record<string, unknown>, id: string | undefined): Record<string, unknown> {
  return id === undefined ? overrides : { ...overrides, fact_id: id };
}

export const modelCallArb = fc
  .record({
    call_id: fc.constantFrom(...CALLS),
    link: fc.option(deliveryAndTask, { nil: undefined, freq: 4 }),
    operational: fc.constantFrom(true, true, true, false),
    provider: fc.constantFrom<string | undefined>("openai", "openai", "anthropic", undefined, ""),
    model: fc.constantFrom<string | undefined>("m1", "m1", undefined),
    role: fc.constantFrom("writer", "reviewer"),
    runtime: fc.constant("rt"),
    span_duration_ms: measure(fc.constantFrom(0, 0.5, 120, 1000.25), [1e10], [-5, 1e10 + 1, 1e306, "fast"]),
    input_tokens: measure(fc.nat({ max: 500 }), [1e12], [-1, 1.5, 1e12 + 1]),
    output_tokens: measure(fc.nat({ max: 500 }), [1e12], [-1, 1e12 + 1]),
    usage_source: opt(fc.constantFrom("PROVIDER", "HOST", "NONE", "GUESS")),
    provenance,
    event_time: time,
  })
  .chain(({ link, ...fields }) =>
    factId.map((id) =>
      accepted(rawModelCall(withFactId({ ...fields, delivery_id: link?.delivery_id, task_id: link?.task_id }, id))),
    ),
  );

export const costArb = fc
  .record({
    cost_id: fc.constantFrom("k1", "k2", "k3", "k4", "k5"),
    link: fc.oneof(
      fc.record({ call_id: fc.constantFrom(...CALLS) }),
      fc.record({ delivery_id: fc.constantFrom(...DELIVERIES) }),
    ),
    amount_minor: fc.oneof(
      { arbitrary: fc.nat({ max: 1000 }), weight: 8 },
      { arbitrary: fc.constantFrom<unknown>(1e15, -5, 1e15 + 1, "12"), weight: 1 },
    ),
    currency: fc.constantFrom("USD", "USD", "EUR", "usd"),
    source: fc.constantFrom("PROVIDER", "PROVIDER", "PROVIDER", "HOST", "ESTIMATE"),
    cost_basis: fc.constantFrom("list", "list", "negotiated"),
    attribution: fc.constantFrom("PROJECT", "PROJECT", "PROJECT", "PROJECT", "SHARED", "UNATTRIBUTED"),
    estimated: fc.constantFrom(false, false, false, false, true),
    provenance,
    event_time: time,
  })
  .chain(({ link, ...fields }) => factId.map((id) => accepted(rawCost(withFactId({ ...fields, ...link }, id)))));

export const summaryArb = fc
  .record({
    link: deliveryAndTask,
    terminal: fc.constantFrom(true, true, false),
    outcome: fc.constantFrom("SUCCEEDED", "SUCCEEDED", "FAILED", "FAILED", "CANCELLED", "INFRASTRUCTURE_FAILURE"),
    requirement_changed: fc.constantFrom(false, false, false, true),
    elapsed_ms: measure(fc.nat({ max: 100_000 }), [1e11], [-1, 1e11 + 1, 2.5]),
    stage_reached: opt(fc.constantFrom("review", "merged", "")),
    provenance,
    event_time: time,
  })
  .chain(({ link, terminal, outcome, ...fields }) =>
    factId.map((id) =>
      accepted(
        rawSummary(
          withFactId(
            { ...fields, ...link, status: terminal ? "TERMINAL" : "OPEN", outcome: terminal ? outcome : undefined },
            id,
          ),
        ),
      ),
    ),
  );

export const packetArb = fc
  .record({
    packet_id: fc.constantFrom("p1", "p2"),
    task_id: opt(fc.constantFrom(...TASKS)),
    governance_revision: fc.constantFrom("0.2", "0.2", "0.1"),
    repair_attribution: fc.constantFrom("AVAILABLE", "AVAILABLE", "UNAVAILABLE"),
    event_time: time,
  })
  .map((fields) => parsed(rawPacket(fields)));

export const repairArb = fc
  .record({
    repair_id: fc.constantFrom("r1", "r2", "r3"),
    finding_id: fc.constantFrom("f1", "f2"),
    packet_id: opt(fc.constantFrom("p1", "p2")),
    task_id: opt(fc.constantFrom(...TASKS)),
    delivery_id: opt(fc.constantFrom(...DELIVERIES)),
    attributable: fc.constantFrom(true, true, false),
    event_time: time,
  })
  .map((fields) => parsed(rawRepair(fields)));

export const definedTaskArb = fc.constantFrom<string | undefined>(...TASKS, ...TASKS, undefined).chain((taskId) =>
  fc.record({
    task_id: fc.constant(taskId),
    members: fc.option(
      fc.oneof(
        { arbitrary: fc.subarray(OWNED[taskId ?? "t1"] ?? [], { minLength: 1 }), weight: 4 },
        { arbitrary: fc.subarray(DELIVERIES), weight: 1 },
      ),
      { nil: undefined, freq: 8 },
    ),
    role_template: fc.constantFrom<string | undefined>("tpl-a", "tpl-a", "tpl-b", undefined),
    template_assignment: fc.constantFrom<string | undefined>(
      "EVENT_TIME",
      "EVENT_TIME",
      "EVENT_TIME",
      "EVENT_TIME",
      "BACKFILLED",
      undefined,
    ),
  }),
);

export const snapshotArb = fc
  .record({
    snapshot_id: fc.constantFrom("s1", "s2"),
    cutoff: fc.constantFrom(...CUTOFFS),
    tasks: fc.array(definedTaskArb, { maxLength: 5 }),
    event_time: time,
  })
  .map(({ tasks, ...fields }) => {
    // A snapshot defining a task twice is rejected whole (DUPLICATE_TASK_IN_SNAPSHOT): keep the first.
    const seen = new Set<string>();
    const unique = tasks.filter(
      (task) => task.task_id === undefined || (!seen.has(task.task_id) && seen.add(task.task_id) !== undefined),
    );
    return parsed(raw("task_snapshot", {}, { ...fields, tasks: unique.map((task) => definedTask(task)) }));
  });

export const factArb: fc.Arbitrary<MetricFact> = fc.oneof(
  { arbitrary: modelCallArb, weight: 4 },
  { arbitrary: costArb, weight: 3 },
  { arbitrary: summaryArb, weight: 4 },
  { arbitrary: packetArb, weight: 1 },
  { arbitrary: repairArb, weight: 2 },
  { arbitrary: snapshotArb, weight: 2 },
);

/** Every identity a fact claims, as the ledger keys them: its fact_id, then its domain identity if any. */
export function identitiesOf(fact: MetricFact): string[] {
  const domain = domainIdentity(fact);
  return [`fact\u0000${fact.fact_id}`, ...(domain === undefined ? [] : [`${domain[0]}\u0000${domain[1]}`])];
}

export const key = (fact: MetricFact): string => identitiesOf(fact).at(-1) as string;

/** Contract §1 (revision 2): the same report again under a new fact_id and provenance.source: it counts once. */
export function reReport(fact: MetricFact): MetricFact {
  return {
    ...fact,
    fact_id: `rr-${fact.fact_id}`,
    provenance: fact.provenance === null ? null : { ...fact.provenance, source: "again" },
  } as MetricFact;
}

/**
 * Mostly one record per identity (so facts link and contribute), plus a little noise drawn from
 * the same tiny id space (so conflicts, redeliveries and cross-type fact_id collisions happen too).
 */
export const factsArb: fc.Arbitrary<MetricFact[]> = fc
  .record({
    calls: fc.uniqueArray(modelCallArb, { selector: key, maxLength: 3 }),
    costs: fc.uniqueArray(costArb, { selector: key, maxLength: 4 }),
    summaries: fc.array(summaryArb, { maxLength: 8 }),
    packets: fc.uniqueArray(packetArb, { selector: key, maxLength: 2 }),
    repairs: fc.uniqueArray(repairArb, { selector: key, maxLength: 3 }),
    snapshots: fc.uniqueArray(snapshotArb, { selector: key, maxLength: 2 }),
    noise: fc.array(factArb, { maxLength: 3 }),
    reReports: fc.array(fc.nat(), { maxLength: 2 }),
  })
  .map(({ reReports, ...parts }) => {
    const facts = [
      ...parts.snapshots,
      ...parts.summaries,
      ...parts.calls,
      ...parts.costs,
      ...parts.packets,
      ...parts.repairs,
      ...parts.noise,
    ];
    const reportable = facts.filter((fact) => fact.type !== "delivery_summary");
    return [
      ...facts,
      ...(reportable.length === 0
        ? []
        : reReports.map((which) => reReport(reportable[which % reportable.length] as MetricFact))),
    ];
  });
