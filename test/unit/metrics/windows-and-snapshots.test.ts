import { describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import type { MetricFact } from "../../../src/contract/facts.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { MetricEngine } from "../../../src/metrics/metric-engine.ts";
import {
  CUTOFF,
  DAY,
  HOUR,
  TUPLE,
  WINDOW0,
  at,
  cost,
  definedTask,
  evaluate,
  modelCall,
  packet,
  repair,
  snapshot,
  summary,
} from "./fact-builders.ts";

/** Contract §3: window and snapshot scopes, anchoring times, late facts and streaming behaviour. */

const SNAP = { snapshot: "snap-1" } as const;
const TPL = { role_template: "tpl-a" };

describe("contract §3 window scope: tumbling, UTC-aligned event-time windows (default 1 day)", () => {
  it("a unit falls in the window of its anchoring event time; the boundary belongs to the next window", () => {
    const evaluated = evaluate([
      modelCall({ call_id: "a", event_time: at(DAY - 1) }),
      modelCall({ call_id: "b", event_time: at(DAY) }),
    ]);
    const latency = evaluated.records("operational-latency-ms");
    expect(latency.map((result) => result.scope)).toEqual([
      { kind: "window", start: at(0), end: at(DAY) },
      { kind: "window", start: at(DAY), end: at(2 * DAY) },
    ]);
  });

  it("the window size is configurable (1 hour)", () => {
    const evaluated = evaluate(
      [
        modelCall({ call_id: "a", event_time: at(10 * HOUR + 5) }),
        modelCall({ call_id: "b", event_time: at(11 * HOUR) }),
      ],
      { windowMillis: HOUR },
    );
    expect(evaluated.records("operational-latency-ms").map((result) => result.scope)).toEqual([
      { kind: "window", start: at(10 * HOUR), end: at(11 * HOUR) },
      { kind: "window", start: at(11 * HOUR), end: at(12 * HOUR) },
    ]);
  });

  it("revision 2 change 8: every Delivery metric, trajectory-partial-cost included, anchors at the terminal summary; an open Delivery is no unit", () => {
    const evaluated = evaluate([
      summary({ status: "OPEN", event_time: at(-2 * HOUR) }),
      summary({ event_time: at(10 * HOUR) }),
      cost({ call_id: undefined, delivery_id: "d-1" }),
    ]);
    expect(evaluated.records("delivery-cycle-time-ms").map((result) => result.scope)).toEqual([
      { kind: "window", start: at(0), end: at(DAY) },
    ]);
    expect(evaluated.records("trajectory-partial-cost").map((result) => result.scope)).toEqual([
      { kind: "window", start: at(0), end: at(DAY) },
    ]);
    const open = evaluate([
      summary({ delivery_id: "d-open", status: "OPEN" }),
      cost({ cost_id: "k-open", call_id: undefined, delivery_id: "d-open" }),
    ]);
    expect(open.records("trajectory-partial-cost")).toEqual([]);
  });

  it("direct-evidence-basis-rate uses each fact's own event_time", () => {
    const evaluated = evaluate([modelCall({ event_time: at(10 * HOUR) }), cost({ event_time: at(DAY + HOUR) })]);
    expect(
      evaluated
        .records("direct-evidence-basis-rate")
        .map((result) => [result.scope.kind === "window" ? result.scope.start : "", result.eligible_units]),
    ).toEqual([
      [at(0), 1],
      [at(DAY), 1],
    ]);
  });

  it("linked facts count wherever their own event_time falls: a cost two days later is in the call's window", () => {
    const result = evaluate([modelCall(), cost({ event_time: at(2 * DAY + HOUR) })]).get(
      "operational-attributable-cost",
      { ...TUPLE, cost_basis: "list-price", currency: "USD", source: "PROVIDER" },
      WINDOW0,
    );
    expect(result.value).toBe(250);
    expect(result.as_of).toBe(at(2 * DAY + HOUR));
  });
});

describe("contract §3 snapshot scope: one per task_snapshot; only facts with event_time ≤ cutoff are read", () => {
  it("facts after a snapshot cutoff are not read (summary, cost, repair, call)", () => {
    const after = at(23 * HOUR + 1);
    const tasks = [
      definedTask({ task_id: "t-1", members: ["d-1"] }),
      definedTask({ task_id: "t-2", members: ["d-2"] }),
    ];
    const facts: MetricFact[] = [
      snapshot({ tasks }),
      summary({ delivery_id: "d-1", task_id: "t-1" }),
      summary({ delivery_id: "d-2", task_id: "t-2", event_time: after }),
      cost({ call_id: undefined, delivery_id: "d-1", event_time: after }),
      repair({ packet_id: undefined, task_id: "t-1", event_time: after }),
      modelCall({ call_id: "late-call", task_id: "t-1", event_time: after }),
    ];
    const evaluated = evaluate(facts);
    expect(evaluated.get("task-cohort-comparison-eligibility", {}, SNAP).exclusions).toEqual({ OPEN_DELIVERY: 1 });
    const rework = evaluated.get("role-template-rework-rate", TPL, SNAP);
    expect(rework.eligible_units).toBe(1);
    expect(evaluated.records("role-template-trajectory-partial-cost").map((result) => result.status)).toEqual([
      "NOT_AVAILABLE",
    ]);
    // The call after the cutoff is not read: t-1 is attributed to no tuple (revision 3 change 4).
    const outcome = evaluated.records("role-model-task-outcome-rate");
    expect(outcome.map((result) => [result.cohort, result.exclusions])).toEqual([[{}, { INCOMPLETE_ATTRIBUTION: 1 }]]);
    // Nothing after the cutoff is in as_of either.
    for (const result of evaluated.results.filter((record) => record.scope.kind === "snapshot"))
      expect(result.as_of).toBe(CUTOFF);
  });

  it("two snapshots are two scopes, each read at its own cutoff", () => {
    const facts = [
      snapshot({ snapshot_id: "early", cutoff: at(9 * HOUR), event_time: at(9 * HOUR) }),
      snapshot({ snapshot_id: "late" }),
      summary({ event_time: at(10 * HOUR) }),
    ];
    const evaluated = evaluate(facts);
    expect(evaluated.get("task-cohort-comparison-eligibility", {}, { snapshot: "early" }).exclusions).toEqual({
      OPEN_DELIVERY: 1,
    });
    expect(evaluated.get("task-cohort-comparison-eligibility", {}, { snapshot: "late" }).exclusions).toEqual({});
    expect(evaluated.get("task-cohort-comparison-eligibility", {}, { snapshot: "late" }).scope).toEqual({
      kind: "snapshot",
      snapshot_id: "late",
      cutoff: CUTOFF,
    });
  });

  it("the snapshot is never completed from other facts: a summary naming the task does not add a member", () => {
    const evaluated = evaluate([
      snapshot({ tasks: [definedTask({ members: ["d-1"] })] }),
      summary({ delivery_id: "d-1" }),
      summary({ delivery_id: "d-extra", outcome: "FAILED" }),
    ]);
    expect(evaluated.get("task-cohort-comparison-eligibility", {}, SNAP).exclusions).toEqual({});
  });
});

describe("contract §3 late records update results (an upsert of the result key); nothing is dropped for lateness", () => {
  it("evaluating with and without a late cost: the late cost changes the Delivery's money", () => {
    const base = [summary({ delivery_id: "d-1", task_id: undefined })];
    const late = cost({ call_id: undefined, delivery_id: "d-1", event_time: at(5 * DAY) });
    expect(
      evaluate(base)
        .records("trajectory-partial-cost")
        .map((result) => [result.cohort, result.status]),
    ).toEqual([[{}, "NOT_AVAILABLE"]]);
    const withLate = evaluate([...base, late]).records("trajectory-partial-cost");
    expect(withLate.map((result) => [result.cohort, result.status, result.eligible_units])).toEqual([
      [{ cost_basis: "list-price", currency: "USD", source: "PROVIDER" }, "BELOW_MINIMUM_SAMPLE", 1],
    ]);
  });

  it("streaming: a late cost after a flush upserts the money key and tombstones the NOT_AVAILABLE one", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    engine.ingest(modelCall());
    const first = engine.flush();
    const naKey = first.find((change) => change.result?.metric_id === "operational-attributable-cost")?.key;
    expect(naKey).toBeDefined();
    engine.ingest(cost({ event_time: at(3 * DAY) }));
    const changes = engine.flush();
    expect(changes).toContainEqual({ key: naKey, result: null });
    const money = changes.find((change) => change.result?.metric_id === "operational-attributable-cost");
    expect(money?.result).toMatchObject({ status: "PUBLISHED", value: 250 });
  });

  it("a late earlier TERMINAL summary moves the Delivery to its window and retracts it from the old one", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    engine.ingest(summary({ event_time: at(DAY + HOUR), outcome: "FAILED" }));
    const before = engine.flush().filter((change) => change.result?.metric_id === "delivery-terminal-outcome-rate");
    expect(before).toHaveLength(1);
    engine.ingest(summary({ event_time: at(HOUR), outcome: "SUCCEEDED" }));
    const changes = engine.flush().filter((change) => change.key.includes("delivery-terminal-outcome-rate"));
    expect(changes).toContainEqual({ key: before[0]?.key, result: null });
    expect(changes.find((change) => change.result !== null)?.result).toMatchObject({
      value: { SUCCEEDED: 1 },
      exclusions: {},
    });
  });
});

describe("streaming behaviour of MetricEngine", () => {
  const facts: MetricFact[] = [
    snapshot({ tasks: [definedTask(), definedTask({ task_id: "t-2", members: ["d-2"] })] }),
    summary(),
    summary({ delivery_id: "d-2", task_id: "t-2", status: "OPEN" }),
    modelCall({ delivery_id: "d-1", task_id: "t-1" }),
    cost(),
    cost({ cost_id: "eur", currency: "EUR" }),
    packet(),
    repair(),
    repair({ repair_id: "r-2", packet_id: undefined, task_id: "t-1" }),
    summary({ delivery_id: "d-2", task_id: "t-2", event_time: at(12 * HOUR), outcome: "FAILED" }),
    modelCall({ call_id: "c-2", provider: undefined, event_time: at(DAY + 1) }),
    modelCall({ call_id: "c-2", provider: undefined, event_time: at(DAY + 2) }),
  ];

  it("flush() between every ingest gives the same final results() as one flush at the end", () => {
    const stepwise = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    for (const fact of facts) {
      stepwise.ingest(fact);
      stepwise.flush();
    }
    const once = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    for (const fact of facts) once.ingest(fact);
    expect(stepwise.results().map((entry) => entry.json)).toEqual(once.results().map((entry) => entry.json));
  });

  it("replaying the stream of changes (upserts and tombstones) into a compacted map reproduces results()", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    const compacted = new Map<string, string>();
    for (const fact of facts) {
      engine.ingest(fact);
      for (const change of engine.flush()) {
        if (change.result === null) compacted.delete(change.key);
        else compacted.set(change.key, JSON.stringify(change.result));
      }
    }
    const final = engine.results();
    expect([...compacted.keys()].sort()).toEqual(final.map((entry) => entry.key));
    for (const entry of final) expect(compacted.get(entry.key)).toBe(entry.json);
  });

  it("a tombstone (result null) is emitted when a key's last unit is retracted", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    engine.ingest(packet({ packet_id: "only", fact_id: "packet-fact" }));
    const [published] = engine.flush().filter((change) => change.result?.metric_id === "packet-rework-rate");
    expect(published?.result).not.toBeNull();
    engine.ingest(packet({ packet_id: "only", fact_id: "packet-fact", governance_revision: "0.9" }));
    expect(engine.flush()).toEqual([{ key: published?.key, result: null }]);
  });

  it("a money slice whose money is retracted is tombstoned, and the cohort's NOT_AVAILABLE record appears (docs decision 16)", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    engine.ingest(modelCall());
    engine.ingest(cost({ fact_id: "the-cost" }));
    const slice = engine.flush().find((change) => change.result?.metric_id === "operational-attributable-cost");
    expect(slice?.result?.cohort).toMatchObject({ currency: "USD" });
    engine.ingest(cost({ fact_id: "the-cost", amount_minor: 1 }));
    const changes = engine.flush().filter((change) => change.key.includes("operational-attributable-cost"));
    expect(changes).toContainEqual({ key: slice?.key, result: null });
    expect(changes.find((change) => change.result !== null)?.result).toMatchObject({
      cohort: TUPLE,
      status: "NOT_AVAILABLE",
      coverage: { numerator: 0, denominator: 1 },
    });
  });

  it("flush() with nothing new reports no change", () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    for (const fact of facts) engine.ingest(fact);
    engine.flush();
    expect(engine.flush()).toEqual([]);
    engine.ingest(facts[1] as MetricFact);
    expect(engine.flush()).toEqual([]);
  });
});
