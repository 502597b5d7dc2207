import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shippedCatalog, type CatalogSummary } from "../../src/catalog/metric-definitions.ts";
import type { DeliverySummary, MetricFact, TaskSnapshot } from "../../src/contract/facts.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../src/metrics/engine-config.ts";
import { evaluateFacts } from "../support/evaluate-facts.ts";
import { RUNS, TIMES, identitiesOf, factsArb } from "../support/fact-arbitraries.ts";
import { MetricEngine } from "../../src/metrics/metric-engine.ts";
import type { MetricResult } from "../../src/contract/result-record.ts";
import { SUM_PAST_SAFE_INTEGER } from "../../src/metrics/exact-sum.ts";
import { parsed, rawCost, rawModelCall } from "../unit/metrics/fact-builders.ts";

/**
 * Property tests of the metric engine (contract §3 order independence; seed §6.2, §6.4, §7). The
 * arbitraries draw small, rich fact sets from a tiny id space, so links (costs to calls and
 * Deliveries, repairs to packets and tasks, members to summaries), conflicts (shared fact_id,
 * call_id, snapshot_id, cost_id, ...) and redeliveries actually happen. Every fact goes through
 * parseFact, exactly as in production.
 */

/**
 * The shipped catalog, and the same catalog with every minimum_sample lowered to 1: small fact
 * sets never reach the snapshot metrics' minimum of 20, and the formula properties must hold for
 * PUBLISHED records of every metric.
 */
const SHIPPED = shippedCatalog();
const MINIMUM_ONE: CatalogSummary = {
  ...SHIPPED,
  metrics: new Map([...SHIPPED.metrics].map(([id, definition]) => [id, { ...definition, minimumSample: 1 }])),
};
const CATALOGS = [SHIPPED, MINIMUM_ONE];

function lines(facts: readonly MetricFact[], catalog: CatalogSummary = SHIPPED): readonly string[] {
  return evaluateFacts(facts, DEFAULT_ENGINE_CONFIG, catalog).lines;
}

function results(facts: readonly MetricFact[], catalog: CatalogSummary = SHIPPED): MetricResult[] {
  return lines(facts, catalog).map((line) => JSON.parse(line) as MetricResult);
}

/** A list and a permutation of it. */
const shuffledArb = factsArb.chain((facts) =>
  fc.array(fc.nat(), { minLength: facts.length, maxLength: facts.length }).map((keys) => {
    const order = facts.map((_, i) => i).sort((i, j) => (keys[i] as number) - (keys[j] as number) || i - j);
    return { facts, shuffled: order.map((i) => facts[i] as MetricFact) };
  }),
);

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

// A property runs hundreds of engine evaluations: minutes on a loaded shared machine, not seconds.
describe("engine properties (contract §3 order independence)", { timeout: 300_000 }, () => {
  it("(a) shuffling the input gives byte-identical output", () => {
    fc.assert(
      fc.property(shuffledArb, ({ facts, shuffled }) => {
        expect(lines(shuffled)).toEqual(lines(facts));
      }),
      { numRuns: RUNS },
    );
  });

  it("(b) duplicating records (redelivery) gives identical output", () => {
    fc.assert(
      fc.property(factsArb, fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 10 }), (facts, copies) => {
        if (facts.length === 0) return;
        const redelivered = [...facts];
        for (const [which, where] of copies)
          redelivered.splice(where % (redelivered.length + 1), 0, facts[which % facts.length] as MetricFact);
        expect(lines(redelivered)).toEqual(lines(facts));
      }),
      { numRuns: RUNS },
    );
  });

  it("(c) k partitions (by hash of the fact's key) as interleaved batches with flush() between batches give identical output", () => {
    fc.assert(
      fc.property(
        factsArb,
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 3 })), { maxLength: 60 }),
        (facts, k, schedule) => {
          const partitions: MetricFact[][] = Array.from({ length: k }, () => []);
          // The Kafka key: the fact's primary identity, so all versions of one identity share a partition.
          for (const fact of facts) partitions[hash(identitiesOf(fact).at(-1) as string) % k]?.push(fact);
          const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
          const cursors = partitions.map(() => 0);
          const take = (p: number, n: number): void => {
            const partition = partitions[p] as MetricFact[];
            for (let i = 0; i < n && (cursors[p] as number) < partition.length; i += 1) {
              engine.ingest(partition[cursors[p] as number] as MetricFact);
              cursors[p] = (cursors[p] as number) + 1;
            }
            engine.flush();
          };
          for (const [p, n] of schedule) take(p % k, n);
          for (let p = 0; p < k; p += 1) take(p, Number.MAX_SAFE_INTEGER);
          expect(engine.results().map((entry) => entry.json)).toEqual(lines(facts));
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe("engine properties (flush granularity)", { timeout: 300_000 }, () => {
  it("(c2) a flush after every record gives the same output as one final flush", () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
        for (const fact of facts) {
          engine.ingest(fact);
          engine.flush();
        }
        expect(engine.results().map((entry) => entry.json)).toEqual(lines(facts));
      }),
      { numRuns: RUNS },
    );
  });
});

describe("engine properties (contract §1 conflicts)", { timeout: 300_000 }, () => {
  it("(h) the output equals the output of the accepted facts alone: every version of a conflicting identity is quarantined, no winner", () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        expect(lines(facts)).toEqual(lines(acceptedFacts(facts)));
      }),
      { numRuns: RUNS },
    );
  });
});

describe("engine properties (seed §6.4, §7, contract §4)", { timeout: 300_000 }, () => {
  it("(d) 0 ≤ coverage.numerator ≤ coverage.denominator in every record, raw_ratio null iff denominator 0, state and alert as §6.4 says", () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        for (const { coverage } of results(facts)) {
          expect(coverage.numerator).toBeGreaterThanOrEqual(0);
          expect(coverage.numerator).toBeLessThanOrEqual(coverage.denominator);
          expect(coverage.raw_ratio === null).toBe(coverage.denominator === 0);
          if (coverage.raw_ratio !== null) expect(coverage.raw_ratio).toBe(coverage.numerator / coverage.denominator);
          const state =
            coverage.denominator === 0
              ? "NO_POPULATION"
              : coverage.numerator === 0
                ? "NO_COVERAGE"
                : coverage.numerator < coverage.denominator
                  ? "PARTIAL"
                  : "FULL";
          expect(coverage.state).toBe(state);
          expect(coverage.alert).toBe(coverage.denominator > 0 && 100 * coverage.numerator < 10 * coverage.denominator);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("(e) task-cohort-comparison-eligibility: numerator + Σ exclusions = defined tasks, against an independent reading of the input", () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        const { expected } = expectedEligibility(facts);
        const records = CATALOGS.flatMap((catalog) => results(facts, catalog)).filter(
          (result) => result.metric_id === "task-cohort-comparison-eligibility",
        );
        expect(records.map((result) => recordKey(result)).sort()).toEqual(
          [...expected.keys(), ...expected.keys()].sort(),
        );
        for (const result of records) {
          const oracle = expected.get(recordKey(result));
          const excluded = Object.values(result.exclusions).reduce((a, b) => a + b, 0);
          expect(result.eligible_units).toBe(oracle?.defined);
          expect(excluded).toBeLessThanOrEqual(result.eligible_units);
          expect(result.exclusions).toEqual(oracle?.reasons);
          expect(result.eligible_units - excluded).toBe(oracle?.comparable);
          if (result.status === "PUBLISHED") {
            expect((result.measures?.numerator ?? Number.NaN) + excluded).toBe(result.eligible_units);
            expect(result.measures?.denominator).toBe(result.eligible_units);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("(f) every NOT_AVAILABLE and BELOW_MINIMUM_SAMPLE value is null with measures null", () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        for (const result of CATALOGS.flatMap((catalog) => results(facts, catalog))) {
          if (result.status === "PUBLISHED") continue;
          expect(result.value).toBeNull();
          expect(result.measures).toBeNull();
          expect(result.na_reason === null).toBe(result.status === "BELOW_MINIMUM_SAMPLE");
          if (result.status === "BELOW_MINIMUM_SAMPLE")
            expect(result.eligible_units).toBeLessThan(result.minimum_sample);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("(g) PUBLISHED values are never null, and a rate's value equals numerator / denominator (per category too)", () => {
    const kinds = new Map(
      [...shippedCatalog().metrics.values()].map((definition) => [definition.metricId, definition.kind]),
    );
    fc.assert(
      fc.property(factsArb, (facts) => {
        for (const result of CATALOGS.flatMap((catalog) => results(facts, catalog))) {
          if (result.status !== "PUBLISHED") continue;
          expect(result.value).not.toBeNull();
          expect(result.eligible_units).toBeGreaterThanOrEqual(result.minimum_sample);
          const measures = result.measures;
          if (measures === null) throw new Error("PUBLISHED without measures");
          switch (kinds.get(result.metric_id)) {
            case "rate":
              if (typeof result.value === "number") {
                expect(result.value).toBe((measures.numerator as number) / (measures.denominator as number));
                expect(measures.numerator).toBeLessThanOrEqual(measures.denominator as number);
              } else {
                const categories = measures.categories ?? {};
                expect(Object.keys(result.value ?? {}).sort()).toEqual(Object.keys(categories).sort());
                for (const [category, count] of Object.entries(categories))
                  expect((result.value as Record<string, number>)[category]).toBe(
                    count / (measures.denominator as number),
                  );
                expect(Object.values(categories).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(
                  measures.denominator as number,
                );
              }
              expect(measures.denominator).toBe(result.eligible_units);
              break;
            case "duration":
              // The sum is published in ms; the engine keeps it in integer µs and divides once (semantics §25).
              expect(result.value).toBe(
                Math.round((measures.sum as number) * 1000) / ((measures.contributing as number) * 1000),
              );
              expect(measures.contributing).toBe(result.eligible_units);
              break;
            default:
              expect(result.value).toBe(measures.sum);
              expect(measures.contributing).toBe(result.eligible_units);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// An independent reading of seed §6.2 / contract §1 and §3 for task-cohort-comparison-eligibility.

function recordKey(result: { scope: MetricResult["scope"]; cohort: MetricResult["cohort"] }): string {
  const snapshotId = result.scope.kind === "snapshot" ? result.scope.snapshot_id : "?";
  return `${snapshotId}|${result.cohort["role_template"] ?? ""}`;
}

/** A report's content apart from fact_id and provenance.source (contract §1, revision 2). */
function reportContent(fact: MetricFact): string {
  return JSON.stringify({
    ...fact,
    fact_id: undefined,
    provenance: fact.provenance === null ? null : { ...fact.provenance, source: undefined },
  });
}

/**
 * Accepted facts (contract §1, revision 2): a fact counts when its fact_id carries one distinct
 * record and all records of its domain identity have one content apart from fact_id and
 * provenance.source; identical re-reports count once (the first by fact_id here: which one does
 * not change any result).
 */
function acceptedFacts(facts: readonly MetricFact[]): MetricFact[] {
  const distinct = new Map<string, MetricFact>();
  for (const fact of facts) distinct.set(JSON.stringify(fact), fact);
  const byFactId = new Map<string, number>();
  const contents = new Map<string, Set<string>>();
  for (const fact of distinct.values()) {
    byFactId.set(fact.fact_id, (byFactId.get(fact.fact_id) ?? 0) + 1);
    const domain = identitiesOf(fact)[1];
    if (domain !== undefined) contents.set(domain, (contents.get(domain) ?? new Set()).add(reportContent(fact)));
  }
  const live = [...distinct.values()].filter(
    (fact) => byFactId.get(fact.fact_id) === 1 && (contents.get(identitiesOf(fact)[1] ?? "")?.size ?? 1) === 1,
  );
  const counted = new Set<string>();
  return live
    .sort((a, b) => (a.fact_id < b.fact_id ? -1 : a.fact_id > b.fact_id ? 1 : 0))
    .filter((fact) => {
      const domain = identitiesOf(fact)[1];
      if (domain === undefined) return true;
      if (counted.has(domain)) return false;
      counted.add(domain);
      return true;
    });
}

function expectedEligibility(facts: readonly MetricFact[]): {
  expected: Map<string, { defined: number; comparable: number; reasons: Record<string, number> }>;
} {
  const accepted = acceptedFacts(facts);
  const summaries = accepted.filter((fact): fact is DeliverySummary => fact.type === "delivery_summary");
  const expected = new Map<string, { defined: number; comparable: number; reasons: Record<string, number> }>();
  for (const snap of accepted.filter((fact): fact is TaskSnapshot => fact.type === "task_snapshot")) {
    // One record per snapshot (revision 2 change 6), also for a snapshot declaring no task.
    if (!expected.has(`${snap.snapshot_id}|`))
      expected.set(`${snap.snapshot_id}|`, { defined: 0, comparable: 0, reasons: {} });
    for (const task of snap.tasks) {
      const eventTime = task.role_template !== undefined && task.template_assignment === "EVENT_TIME";
      const key = `${snap.snapshot_id}|`;
      const entry = expected.get(key) ?? { defined: 0, comparable: 0, reasons: {} };
      expected.set(key, entry);
      entry.defined += 1;
      const reason = reasonFor(task, snap, summaries, eventTime);
      if (reason === undefined) entry.comparable += 1;
      else entry.reasons[reason] = (entry.reasons[reason] ?? 0) + 1;
    }
  }
  for (const entry of expected.values())
    entry.reasons = Object.fromEntries(Object.entries(entry.reasons).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { expected };
}

function earliestTerminal(summaries: readonly DeliverySummary[]): DeliverySummary | undefined {
  return summaries
    .filter((s) => s.status === "TERMINAL")
    .sort((x, y) => x.event_time - y.event_time || (x.fact_id < y.fact_id ? -1 : x.fact_id > y.fact_id ? 1 : 0))[0];
}

/**
 * Seed §6.2 for one defined task. A member's terminal summary is the Delivery's earliest TERMINAL
 * summary up to the cutoff (contract §2); it joins the task only when it names the task and is
 * direct evidence (contract §3), else the member is open.
 */
function reasonFor(
  task: TaskSnapshot["tasks"][number],
  snap: TaskSnapshot,
  summaries: readonly DeliverySummary[],
  eventTime: boolean,
): string | undefined {
  if (task.task_id === undefined) return "MISSING_TASK_IDENTITY";
  if (task.members === undefined || task.members.length === 0) return "UNDEFINED_TASK_MEMBERSHIP";
  if (!eventTime) return "INCOMPLETE_COHORT_COORDINATES";
  let open = false;
  let changed = false;
  const outcomes = new Set<string>();
  const direct = (s: DeliverySummary): boolean =>
    s.provenance?.basis === "DIRECT_HOST" || s.provenance?.basis === "DIRECT_PROVIDER";
  for (const member of new Set(task.members)) {
    const read = summaries.filter((s) => s.delivery_id === member && s.event_time <= snap.cutoff);
    const terminal = earliestTerminal(read);
    // Joined (revision 2 change 4) and direct (change 7) summaries only; later TERMINAL ones are never read.
    const joined = read.filter(
      (s) => s.task_id === task.task_id && direct(s) && (s.status === "OPEN" || s === terminal),
    );
    if (joined.some((s) => s.requirement_changed)) changed = true;
    if (terminal?.outcome === undefined || terminal.task_id !== task.task_id || !direct(terminal)) open = true;
    else outcomes.add(terminal.outcome);
  }
  return open
    ? "OPEN_DELIVERY"
    : outcomes.size > 1
      ? "MIXED_DELIVERY_OUTCOMES"
      : changed
        ? "REQUIREMENT_CHANGED"
        : outcomes.has("INFRASTRUCTURE_FAILURE")
          ? "INFRASTRUCTURE_FAILURE"
          : undefined;
}

// ---------------------------------------------------------------------------------------------
// Extreme values (contract revision 2 §1: ranges; sums are exact, and past 2^53 − 1 NOT_AVAILABLE).

describe("engine properties (revision 2 change 2: extreme values, exact sums)", { timeout: 300_000 }, () => {
  /** Costs of one operational call, all eligible money of one slice; amounts at and near the range, ids from a small space so conflicts retract. */
  const extremeCostArb = fc
    .record({
      cost_id: fc.integer({ min: 0, max: 29 }).map((n) => `k${n}`),
      amount_minor: fc.oneof(
        { arbitrary: fc.constantFrom(1e15, 1e15 - 1), weight: 4 },
        { arbitrary: fc.constantFrom(0, 1, 999, 500_000_000_000_001), weight: 1 },
      ),
      event_time: fc.constantFrom(...TIMES.slice(1, 4)),
    })
    .map((fields) =>
      parsed(rawCost({ ...fields, call_id: "big", provenance: { basis: "DIRECT_PROVIDER", source: "billing" } })),
    );
  const theCall = parsed(
    rawModelCall({
      call_id: "big",
      span_duration_ms: 1e10,
      input_tokens: 1e12,
      output_tokens: 1e12,
      event_time: TIMES[1],
    }),
  );

  /** The exact sum of the accepted costs (distinct content per cost_id, else quarantined), as a bigint. */
  function exactSum(costs: readonly MetricFact[]): bigint {
    const byId = new Map<string, Set<string>>();
    const amount = new Map<string, number>();
    for (const fact of costs) {
      if (fact.type !== "cost") continue;
      byId.set(fact.cost_id, (byId.get(fact.cost_id) ?? new Set()).add(reportContent(fact)));
      amount.set(fact.cost_id, fact.amount_minor ?? 0);
    }
    let total = 0n;
    for (const [costId, contents] of byId) if (contents.size === 1) total += BigInt(amount.get(costId) ?? 0);
    return total;
  }

  it("(x) money sums are exact integers; past 2^53 − 1 the result is NOT_AVAILABLE with the reason; per-record flushes equal one flush", () => {
    const seen = { past: 0, exact: 0 };
    fc.assert(
      fc.property(fc.array(extremeCostArb, { maxLength: 24, size: "max" }), (costs) => {
        const facts = [theCall, ...costs];
        const single = lines(facts);
        const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
        for (const fact of facts) {
          engine.ingest(fact);
          engine.flush();
        }
        expect(engine.results().map((entry) => entry.json)).toEqual(single);
        expect(lines([...facts].reverse())).toEqual(single);

        const expected = exactSum(costs);
        const money = single
          .map((line) => JSON.parse(line) as MetricResult)
          .filter((result) => result.metric_id === "operational-attributable-cost");
        expect(money).toHaveLength(1);
        const [result] = money as [MetricResult];
        if (expected === 0n && !costs.some((fact) => fact.type === "cost")) return;
        if (expected > BigInt(Number.MAX_SAFE_INTEGER)) {
          seen.past += 1;
          expect(result).toMatchObject({ status: "NOT_AVAILABLE", value: null, na_reason: SUM_PAST_SAFE_INTEGER });
        } else if (result.status === "PUBLISHED") {
          seen.exact += 1;
          expect(BigInt(result.value as number)).toBe(expected);
          expect(Number.isSafeInteger(result.value)).toBe(true);
        } else {
          // No eligible money left (every cost quarantined): the cohort's NOT_AVAILABLE record, never a zero.
          expect(result.value).toBeNull();
        }
        // Tokens and durations at their ranges stay exact too.
        const tokens = single
          .map((line) => JSON.parse(line) as MetricResult)
          .find((entry) => entry.metric_id === "operational-token-usage");
        expect(tokens?.value).toBe(1e12);
        const latency = single
          .map((line) => JSON.parse(line) as MetricResult)
          .find((entry) => entry.metric_id === "operational-latency-ms");
        expect(latency?.value).toBe(1e10);
      }),
      { numRuns: RUNS },
    );
    // Both sides of 2^53 − 1 were reached.
    expect(seen.past).toBeGreaterThan(0);
    expect(seen.exact).toBeGreaterThan(0);
  });
});
