import { describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import type { MetricFact } from "../../../src/contract/facts.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { MetricEngine } from "../../../src/metrics/metric-engine.ts";
import {
  DAY0,
  HOUR,
  TUPLE,
  WINDOW0,
  cost,
  definedTask,
  evaluate,
  modelCall,
  packet,
  parsed,
  rawCost,
  rawModelCall,
  repair,
  snapshot,
  summary,
} from "./fact-builders.ts";

/** Contract §1: redelivery is a no-op; two different records under one identity are a conflict, all versions quarantined. */

const lines = (facts: readonly MetricFact[]) => evaluate(facts).lines;

/** Unrelated facts that share windows and cohorts with the conflicting ones, so a leak would show. */
const background: MetricFact[] = [
  modelCall({ call_id: "bg-call", span_duration_ms: 400 }),
  cost({ cost_id: "bg-cost", call_id: "bg-call", amount_minor: 11 }),
  summary({ delivery_id: "bg-d", task_id: undefined, elapsed_ms: 1234 }),
  packet({ packet_id: "bg-p" }),
];

describe("contract §1 redelivery of a byte-identical record is a no-op", () => {
  it("the same record twice (or three times) gives the same results and no conflict", () => {
    const call = modelCall();
    const once = evaluate([...background, call]);
    const thrice = evaluate([...background, call, call, call]);
    expect(thrice.lines).toEqual(once.lines);
    expect(thrice.conflicts).toEqual([]);
  });

  it("the engine reports a redelivery as such", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    const call = modelCall();
    expect(engine.ingest(call).kind).toBe("accepted");
    expect(engine.ingest(modelCall()).kind).toBe("redelivery");
  });

  it("same fact, different spelling (null vs absent, one instant in two zones, key order) is a redelivery, not a conflict (docs decision 3)", () => {
    const rawCall = rawModelCall({
      fact_id: "same",
      event_time: new Date(DAY0 + 10 * HOUR).toISOString(),
      task_id: undefined,
    });
    const respelled: Record<string, unknown> = Object.fromEntries(
      Object.entries({ ...rawCall, event_time: "2026-03-02T11:30:00+01:30", task_id: null }).reverse(),
    );
    const evaluated = evaluate([parsed(rawCall), parsed(respelled)]);
    expect(evaluated.conflicts).toEqual([]);
    expect(evaluated.lines).toEqual(lines([parsed(rawCall)]));
  });
});

describe("contract §1 two different records with one fact_id → both quarantined whatever their order", () => {
  const first = summary({ fact_id: "dup", delivery_id: "d-x", outcome: "SUCCEEDED" });
  const second = summary({ fact_id: "dup", delivery_id: "d-x", outcome: "FAILED" });

  it("in order A, B: results equal the input without either, and the conflict is published", () => {
    const evaluated = evaluate([...background, first, second]);
    expect(evaluated.lines).toEqual(lines(background));
    expect(evaluated.conflicts).toMatchObject([
      { reason: "CONFLICT", identity: "fact\u0000dup", factIds: ["dup", "dup"] },
    ]);
  });

  it("in order B, A: the same", () => {
    expect(lines([second, ...background, first])).toEqual(lines(background));
  });

  it("a fact_id shared by records of different types is a conflict too", () => {
    const call = modelCall({ fact_id: "shared-id", call_id: "c-shared" });
    const pkt = packet({ fact_id: "shared-id", packet_id: "p-shared" });
    expect(lines([...background, call, pkt])).toEqual(lines(background));
    expect(lines([pkt, ...background, call])).toEqual(lines(background));
  });

  it("quarantine is final: a third version (or a redelivery of the first) revives none", () => {
    const third = summary({ fact_id: "dup", delivery_id: "d-x", outcome: "CANCELLED" });
    expect(lines([...background, first, second, third, first])).toEqual(lines(background));
  });
});

describe("contract §1 two different model_calls with one call_id → both quarantined", () => {
  const a = modelCall({ call_id: "c-dup", span_duration_ms: 10 });
  const b = modelCall({ call_id: "c-dup", span_duration_ms: 99_000 });

  it("whatever their order; results equal the input without either (also for direct-evidence-basis-rate)", () => {
    expect(a.fact_id).not.toBe(b.fact_id);
    expect(lines([...background, a, b])).toEqual(lines(background));
    expect(lines([b, ...background, a])).toEqual(lines(background));
    expect(evaluate([...background, a, b]).conflicts).toMatchObject([
      { reason: "CONFLICT", identity: "call\u0000c-dup", factIds: [a.fact_id, b.fact_id].sort() },
    ]);
  });

  it("a cost linked to a quarantined call is in no call's or Delivery's sum", () => {
    const linked = [
      modelCall({ call_id: "c-dup", delivery_id: "bg-d", span_duration_ms: 10 }),
      modelCall({ call_id: "c-dup", delivery_id: "bg-d", span_duration_ms: 20 }),
    ];
    const theCost = cost({ cost_id: "k", call_id: "c-dup" });
    const evaluated = evaluate([...background, ...linked, theCost]);
    expect(evaluated.records("operational-attributable-cost").map((result) => result.value)).toEqual([11]);
    expect(evaluated.records("trajectory-partial-cost").map((result) => result.status)).toEqual(["NOT_AVAILABLE"]);
  });
});

describe("contract §1 two different task_snapshots with one snapshot_id → both quarantined", () => {
  it("whatever their order; no snapshot-scope record remains", () => {
    const s1 = snapshot({ tasks: [definedTask()] });
    const s2 = snapshot({ tasks: [definedTask(), definedTask({ task_id: "t-2", members: ["d-2"] })] });
    expect(s1.fact_id).not.toBe(s2.fact_id);
    const facts = [...background, summary()];
    expect(lines([...facts, s1, s2])).toEqual(lines(facts));
    expect(lines([s2, ...facts, s1])).toEqual(lines(facts));
    expect(evaluate([...facts, s1, s2]).results.filter((result) => result.scope.kind === "snapshot")).toEqual([]);
  });
});

describe("docs decision 1: cost_id, packet_id and repair_id are identities too", () => {
  it("two different costs with one cost_id are both quarantined", () => {
    const base = [...background, modelCall()];
    expect(lines([...base, cost({ cost_id: "k", amount_minor: 1 }), cost({ cost_id: "k", amount_minor: 2 })])).toEqual(
      lines(base),
    );
  });

  it("two different packets with one packet_id are both quarantined, and so are two repairs with one repair_id", () => {
    const base = [...background];
    expect(
      lines([
        ...base,
        packet({ packet_id: "p", repair_attribution: "AVAILABLE" }),
        packet({ packet_id: "p", repair_attribution: "UNAVAILABLE" }),
      ]),
    ).toEqual(lines(base));
    const withPacket = [...background, packet({ packet_id: "p" })];
    expect(
      lines([
        ...withPacket,
        repair({ repair_id: "r", packet_id: "p" }),
        repair({ repair_id: "r", packet_id: "p", finding_id: "other" }),
      ]),
    ).toEqual(lines(withPacket));
  });
});

describe("contract §1 a conflict arriving after the first version was flushed retracts its contribution", () => {
  it("the call's keys are tombstoned or updated, and the final results equal the input without either", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    const call = modelCall({ call_id: "late-conflict", role: "reviewer", span_duration_ms: 10 });
    engine.ingest(call);
    const published = engine.flush();
    expect(
      published.some(
        (change) =>
          change.result?.metric_id === "operational-latency-ms" && change.result.cohort["role"] === "reviewer",
      ),
    ).toBe(true);

    const outcome = engine.ingest(modelCall({ call_id: "late-conflict", role: "reviewer", span_duration_ms: 20 }));
    expect(outcome.kind).toBe("quarantined");
    const changes = engine.flush();
    // Every key published for the call is gone: a tombstone (result null) for each.
    for (const change of published) expect(changes).toContainEqual({ key: change.key, result: null });
    expect(engine.results()).toEqual([]);
  });

  it("with other facts in the same groups, the shared keys are updated to the values without the conflicting fact", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    for (const fact of background) engine.ingest(fact);
    const call = modelCall({ call_id: "late", span_duration_ms: 5000 });
    engine.ingest(call);
    engine.flush();
    expect(engine.results().find((entry) => entry.result.metric_id === "operational-latency-ms")?.result.value).toBe(
      2700,
    );
    engine.ingest(modelCall({ call_id: "late", span_duration_ms: 1 }));
    const changes = engine.flush();
    const latency = changes.find((change) => change.result?.metric_id === "operational-latency-ms");
    expect(latency?.result?.value).toBe(400);
    expect(engine.results().map((entry) => entry.json)).toEqual(lines(background));
  });

  it("a conflicting snapshot after flush tombstones every snapshot-scope key", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    engine.ingest(summary());
    engine.ingest(snapshot());
    const snapshotKeys = engine
      .flush()
      .filter((change) => change.result?.scope.kind === "snapshot")
      .map((change) => change.key);
    expect(snapshotKeys.length).toBeGreaterThan(0);
    engine.ingest(snapshot({ tasks: [definedTask({ role_template: "tpl-b" })] }));
    const changes = engine.flush();
    for (const key of snapshotKeys) expect(changes).toContainEqual({ key, result: null });
    expect(engine.results().filter((entry) => entry.result.scope.kind === "snapshot")).toEqual([]);
  });
});

describe("revision 2 change 10: later TERMINAL summaries are conflicts, not exclusions", () => {
  const earliest = summary({ outcome: "FAILED", elapsed_ms: 10 });
  const later = summary({ outcome: "SUCCEEDED", elapsed_ms: 99, event_time: new Date(DAY0 + 11 * HOUR).toISOString() });

  it("the earliest TERMINAL summary by (event_time, fact_id) is read; the later one is in no result's exclusions", () => {
    const evaluated = evaluate([later, earliest]);
    for (const metricId of [
      "delivery-terminal-outcome-rate",
      "delivery-cycle-time-ms",
      "delivery-stage-reach",
    ] as const) {
      const result = evaluated.get(metricId, {}, WINDOW0);
      expect(result.exclusions, metricId).toEqual({});
      expect(result.eligible_units, metricId).toBe(1);
    }
    expect(evaluated.get("delivery-terminal-outcome-rate", {}, WINDOW0).value).toEqual({ FAILED: 1 });
  });

  it("it is published with the conflicts (LATER_TERMINAL_SUMMARY), naming every version and where it was read", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    engine.ingest(earliest, 3);
    expect(engine.laterTerminalConflict(earliest)).toBeUndefined();
    engine.ingest(later, 7);
    const conflict = engine.laterTerminalConflict(later);
    expect(conflict).toMatchObject({ reason: "LATER_TERMINAL_SUMMARY", identity: "delivery\u0000d-1" });
    expect(conflict?.versions.map((version) => version.origin).sort()).toEqual([3, 7]);
    expect(engine.conflicts()).toEqual([conflict]);
  });
});

describe("revision 2 change 5: domain identities conflict like call_id; an identical re-report under a new fact_id counts once", () => {
  const report = (factId: string, source: string) =>
    parsed(
      rawCost({
        fact_id: factId,
        cost_id: "k-re",
        amount_minor: 700,
        provenance: { basis: "DIRECT_PROVIDER", source },
      }),
    );
  const base = [...background, modelCall()];

  it("two costs differing only in fact_id and provenance.source: one report, counted once, no conflict, in any order", () => {
    const once = evaluate([...base, report("r-1", "billing-a")]);
    const twice = evaluate([...base, report("r-1", "billing-a"), report("r-2", "billing-b")]);
    const reversed = evaluate([report("r-2", "billing-b"), ...base, report("r-1", "billing-a")]);
    expect(twice.lines).toEqual(once.lines);
    expect(reversed.lines).toEqual(once.lines);
    expect(twice.conflicts).toEqual([]);
    expect(
      once.get(
        "operational-attributable-cost",
        { ...TUPLE, currency: "USD", source: "PROVIDER", cost_basis: "list-price" },
        WINDOW0,
      ).value,
    ).toBe(711); // 700 once, plus the background cost of 11
  });

  it("the same holds for packets, repairs, calls and snapshots", () => {
    const pair = <T extends MetricFact>(make: (factId: string, source: string) => T) =>
      [make("x-1", "a"), make("x-2", "b")] as const;
    const cases: (readonly [MetricFact, MetricFact])[] = [
      pair((factId, source) => packet({ fact_id: factId, packet_id: "p-re", provenance: { basis: "MANUAL", source } })),
      pair((factId, source) =>
        repair({ fact_id: factId, repair_id: "r-re", packet_id: "bg-p", provenance: { basis: "MANUAL", source } }),
      ),
      pair((factId, source) =>
        modelCall({ fact_id: factId, call_id: "c-re", provenance: { basis: "DIRECT_HOST", source } }),
      ),
      pair((factId, source) => snapshot({ fact_id: factId, provenance: { basis: "MANUAL", source } })),
    ];
    for (const [first, second] of cases) {
      const once = evaluate([...background, summary(), first]);
      expect(evaluate([...background, summary(), first, second]).lines).toEqual(once.lines);
      expect(evaluate([second, ...background, summary(), first]).conflicts).toEqual([]);
    }
  });

  it("a re-report that differs in anything else (here the basis) is a conflict: every version quarantined", () => {
    const other = parsed(
      rawCost({
        fact_id: "r-3",
        cost_id: "k-re",
        amount_minor: 700,
        provenance: { basis: "DIRECT_HOST", source: "billing-a" },
      }),
    );
    expect(evaluate([...base, report("r-1", "billing-a"), other]).lines).toEqual(evaluate(base).lines);
  });

  it("when the counted version's fact_id turns out to be in conflict, the identical re-report counts instead", () => {
    const clash = summary({ fact_id: "r-1", delivery_id: "elsewhere" });
    const expected = evaluate([...base, report("r-2", "billing-b"), ...[]]).lines;
    const results = evaluate([...base, report("r-1", "billing-a"), report("r-2", "billing-b"), clash]);
    expect(results.lines).toEqual(expected);
    expect(evaluate([clash, ...base, report("r-2", "billing-b"), report("r-1", "billing-a")]).lines).toEqual(expected);
  });
});
