import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import { deadLetterKey } from "../../../src/contract/dead-letter.ts";
import type { MetricFact } from "../../../src/contract/facts.ts";
import { asReported, parseDecodedFact, parseFact } from "../../../src/contract/parse-fact.ts";
import type { RejectionReason } from "../../../src/contract/rejection.ts";
import { plainData } from "../../../src/kafka/serde/wire-decoder.ts";
import { shapeForAvro } from "../../../src/kafka/serde/avro-shape.ts";
import { factSchema, loadSchemas } from "../../../src/kafka/serde/schemas.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { PartitionedEngine } from "../../../src/partitioned/partitioned-engine.ts";
import { replayFile } from "../../../src/stream/transports/embedded/embedded-replay.ts";
import {
  TUPLE,
  WINDOW0,
  cost,
  definedTask,
  evaluate,
  modelCall,
  parsedWithInvalidMeasures,
  rawCost,
  rawModelCall,
  rawSnapshot,
  snapshot,
  summary,
  type Raw,
} from "../metrics/fact-builders.ts";

/**
 * Contract revision 3 (shared/spec/observation-contract.md §7), the input side: changes 5, 8, 9,
 * 10, 11 and 12, one named test each. Each fails when its change is reverted.
 */

const SNAP = { snapshot: "snap-1" } as const;

/** A terminal summary of Delivery `deliveryId` joined to task `taskId`. */
const joined = (taskId: string, deliveryId: string): MetricFact =>
  summary({ task_id: taskId, delivery_id: deliveryId });

/** The partitioned engine (three partitions) reads the facts as the single engine does: same lines, same conflicts. */
function expectPartitionedSame(facts: readonly MetricFact[]): void {
  const engine = new PartitionedEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog(), { partitions: 3 });
  facts.forEach((fact, index) => engine.ingest(fact, index + 1));
  const expected = evaluate(facts);
  expect(engine.results().map((entry) => entry.json)).toEqual(expected.lines);
  expect(engine.conflicts().map((conflict) => conflict.factIds)).toEqual(
    expected.conflicts.map((conflict) => conflict.factIds),
  );
}

/** The Avro path: the record encoded with its schema and decoded again, as the facts topic carries it. */
function throughAvro(record: Raw): ReturnType<typeof parseDecodedFact> {
  const schema = factSchema(loadSchemas(), record["type"] as MetricFact["type"]);
  const epoch: Raw = { ...record, event_time: Date.parse(String(record["event_time"])) };
  if (typeof record["cutoff"] === "string") epoch["cutoff"] = Date.parse(record["cutoff"]);
  return parseDecodedFact(plainData(schema.type.fromBuffer(schema.type.toBuffer(shapeForAvro(epoch, schema.type)))));
}

describe("contract revision 3, the inputs", () => {
  it("revision 3 change 5: a snapshot is read task by task; one malformed entry no longer rejects it", async () => {
    const tasks = [
      definedTask({ task_id: "t-ok", members: ["d-ok"] }),
      definedTask({ task_id: "t-tpl", members: ["d-tpl"], role_template: "" }),
      definedTask({ task_id: "t-assign", members: ["d-assign"], template_assignment: "LATER" }),
      definedTask({ task_id: " \t", members: ["d-blank"] }),
      definedTask({ task_id: "t-members", members: ["d-m", " "] }),
      definedTask({ task_id: "t-dup", members: ["d-dup"] }),
      definedTask({ task_id: "t-dup", members: ["d-dup", "d-dup-2"] }),
      definedTask({ task_id: "t-same", members: ["d-same"] }),
      definedTask({ task_id: "t-same", members: ["d-same"] }),
    ];
    const raw = rawSnapshot({ tasks });
    const parsed = parseFact(raw);
    expect(parsed).toMatchObject({ ok: true });
    if (!parsed.ok || parsed.fact.type !== "task_snapshot") return;
    expect(parsed.invalidMeasures.map(({ field, reason }) => `${field} ${reason}`)).toEqual([
      "tasks.1.role_template OUT_OF_RANGE",
      "tasks.2.template_assignment INVALID_ENUM",
      "tasks.3.task_id BLANK_VALUE",
      "tasks.4.members BLANK_VALUE",
      "tasks.6 DUPLICATE_TASK_IN_SNAPSHOT",
      "tasks.8 DUPLICATE_TASK_IN_SNAPSHOT",
    ]);
    // The declared list travels with the fact: a producer forwards the snapshot as it was reported.
    expect(asReported(parsed.fact)).toMatchObject({ tasks });

    const members = ["t-ok:d-ok", "t-tpl:d-tpl", "t-assign:d-assign", "t-members:d-m", "t-dup:d-dup", "t-same:d-same"];
    const summaries = members.map((pair) => joined(...(pair.split(":") as [string, string])));
    const eligibility = evaluate([parsed.fact, ...summaries]).get("task-cohort-comparison-eligibility", {}, SNAP);
    // Seven defined tasks: t-dup and t-same are one task each. Only t-ok and t-same are comparable.
    expect(eligibility).toMatchObject({ eligible_units: 7, coverage: { numerator: 2, denominator: 7 } });
    expect(eligibility.exclusions).toEqual({
      INCOMPLETE_COHORT_COORDINATES: 2,
      MISSING_TASK_IDENTITY: 1,
      UNDEFINED_TASK_MEMBERSHIP: 2,
    });

    // End to end: the snapshot is accepted, each left-out field is a non-rejecting INVALID_TASK_ENTRY letter.
    const dir = mkdtempSync(join(tmpdir(), "revision-3-"));
    const input = join(dir, "facts.ndjson");
    writeFileSync(
      input,
      `${JSON.stringify(raw)}\n${JSON.stringify(rawSnapshot({ snapshot_id: "snap-2", cutoff: "soon" }))}\n`,
    );
    const outcome = await Effect.runPromise(
      replayFile({ input }, { engine: DEFAULT_ENGINE_CONFIG, tripwires: {} }, shippedCatalog()),
    );
    type Letter = { reason: RejectionReason; field: string; record_rejected: boolean };
    const letters = Array.from(outcome.sinks.deadLetterLines(), (line) => JSON.parse(line) as Letter);
    expect(letters.filter((letter) => letter.reason === "INVALID_TASK_ENTRY")).toHaveLength(6);
    expect(
      letters.filter((letter) => letter.reason === "INVALID_TASK_ENTRY").every((letter) => !letter.record_rejected),
    ).toBe(true);
    // On the dead-letter topic each letter of one record has its own key (the field is part of it).
    const source = { topic: "facts", partition: 0, offset: "7" };
    const keys = letters.map(({ reason, field }) => {
      return deadLetterKey({ reason, field, detail: "", source, factId: null, key: null, value: null });
    });
    expect(new Set(keys).size).toBe(letters.length);
    // Only an unusable snapshot_id or cutoff rejects a snapshot.
    expect(letters.filter((letter) => letter.record_rejected)).toMatchObject([
      { reason: "INVALID_TIMESTAMP", field: "cutoff" },
    ]);
    expect(outcome.counts.accepted).toBe(1);

    // A hole in the list (no JSON has one, a decoded object may) is an entry that declares nothing.
    const sparse: unknown[] = [definedTask({ task_id: "t-ok" })];
    sparse[2] = definedTask({ task_id: "t-after" });
    const holed = parseFact(rawSnapshot({ tasks: sparse }));
    expect(holed).toMatchObject({ ok: true, invalidMeasures: [{ field: "tasks.1", reason: "WRONG_TYPE" }] });

    // The Avro path reads the same snapshot the same way.
    const avro = throughAvro(
      rawSnapshot({ tasks: [definedTask({ task_id: "t-ok" }), definedTask({ task_id: "t-tpl", role_template: " " })] }),
    );
    expect(avro).toMatchObject({
      ok: true,
      invalidMeasures: [{ field: "tasks.1.role_template", reason: "BLANK_VALUE" }],
    });
  });

  it("revision 3 change 8: ISO 4217 is the project's list (current and historic), not the runtime's Intl", () => {
    const currency = (code: unknown): ReturnType<typeof parseFact> => parseFact(rawCost({ currency: code }));
    // VED, CLF, XAU, XAD are current codes (a fund, a precious metal, newer codes); HRK and ANG are withdrawn ones.
    for (const code of ["VED", "CLF", "XAU", "XAD", "XCG", "USD", "HRK", "ANG", "BGN"]) {
      expect(currency(code), code).toMatchObject({ ok: true, invalidMeasures: [] });
    }
    for (const code of ["ABC", "XXY", "usd", "Usd", "US", "USDX", " USD"]) {
      expect(currency(code), code).toMatchObject({
        ok: true,
        invalidMeasures: [{ field: "currency", reason: "INVALID_CURRENCY" }],
      });
    }
    // The Avro path applies the same list.
    expect(throughAvro(rawCost({ currency: "VED" }))).toMatchObject({ ok: true, invalidMeasures: [] });
    expect(throughAvro(rawCost({ currency: "XXY" }))).toMatchObject({
      ok: true,
      invalidMeasures: [{ field: "currency" }],
    });
  });

  it("revision 3 change 9: whitespace is not a value; other strings compare exactly (NFC and NFD are two cohorts)", () => {
    // A blank identifier rejects its record like an empty one.
    expect(parseFact(rawModelCall({ fact_id: " " }))).toMatchObject({
      ok: false,
      rejection: { reason: "BLANK_VALUE", field: "fact_id" },
    });
    expect(parseFact(rawModelCall({ delivery_id: "\u3000" }))).toMatchObject({
      ok: false,
      rejection: { reason: "BLANK_VALUE", field: "delivery_id" },
    });
    // A blank coordinate never completes a tuple: the call is counted as INCOMPLETE_ATTRIBUTION.
    const blankRole = parsedWithInvalidMeasures(rawModelCall({ call_id: "c-blank", role: " \u00a0" }));
    expect(blankRole).not.toHaveProperty("role", " \u00a0");
    const nfc = "caf\u00e9";
    const nfd = "cafe\u0301";
    const evaluated = evaluate([
      blankRole,
      modelCall({ call_id: "c-nfc", model: nfc }),
      modelCall({ call_id: "c-nfd", model: nfd }),
    ]);
    expect(evaluated.get("operational-latency-ms", {}, WINDOW0).exclusions).toEqual({ INCOMPLETE_ATTRIBUTION: 1 });
    expect(evaluated.get("operational-latency-ms", { ...TUPLE, model: nfc }, WINDOW0).measures).toMatchObject({
      contributing: 1,
    });
    expect(evaluated.get("operational-latency-ms", { ...TUPLE, model: nfd }, WINDOW0).measures).toMatchObject({
      contributing: 1,
    });
    // A blank cost basis is no money slice; a blank role_template names no cohort.
    expect(parseFact(rawCost({ cost_basis: "\t" }))).toMatchObject({
      ok: true,
      invalidMeasures: [{ field: "cost_basis", reason: "BLANK_VALUE" }],
    });
    const blankTemplate = parsedWithInvalidMeasures(rawSnapshot({ tasks: [definedTask({ role_template: "\u2003" })] }));
    const eligibility = evaluate([blankTemplate, joined("t-1", "d-1")]).get(
      "task-cohort-comparison-eligibility",
      {},
      SNAP,
    );
    expect(eligibility.exclusions).toEqual({ INCOMPLETE_COHORT_COORDINATES: 1 });
  });

  it("revision 3 change 10: string ties are broken by Unicode code point, not by UTF-16 code unit", () => {
    // U+FF01 comes before U+1F600 by code point; as UTF-16 the surrogate pair (0xD83D…) comes first.
    const fullwidth = "s-\uff01";
    const astral = "s-\u{1f600}";
    expect(fullwidth < astral).toBe(false);
    const facts = [
      summary({ fact_id: astral, task_id: undefined, outcome: "SUCCEEDED" }),
      summary({ fact_id: fullwidth, task_id: undefined, outcome: "FAILED" }),
    ];
    // Same Delivery, same event_time: the earliest TERMINAL summary by (event_time, fact_id) decides.
    for (const order of [facts, [...facts].reverse()]) {
      const evaluated = evaluate(order);
      expect(evaluated.get("delivery-terminal-outcome-rate", {}, WINDOW0).value).toEqual({ FAILED: 1 });
      expect(evaluated.conflicts.map((conflict) => conflict.factIds)).toEqual([[fullwidth, astral]]);
      expectPartitionedSame(order);
    }
    // Conflict versions are listed in the same order.
    const costs = [cost({ fact_id: astral, amount_minor: 1 }), cost({ fact_id: fullwidth, amount_minor: 2 })];
    for (const order of [costs, [...costs].reverse()]) {
      expect(evaluate(order).conflicts).toMatchObject([{ reason: "CONFLICT", factIds: [fullwidth, astral] }]);
      expectPartitionedSame(order);
    }
  });

  it("revision 3 change 11: a re-send that differs only in provenance source is a redelivery; a snapshot's provenance gates nothing", () => {
    const call = (source: string): MetricFact =>
      modelCall({ fact_id: "f-call", provenance: { basis: "DIRECT_HOST", source } });
    const calls = evaluate([call("host-a"), call("host-b")]);
    expectPartitionedSame([call("host-a"), call("host-b")]);
    expect(calls.conflicts).toEqual([]);
    expect(calls.get("operational-latency-ms", TUPLE, WINDOW0).measures).toMatchObject({ contributing: 1 });
    // A different basis is a different report: still a conflict, of the fact_id and of the call_id.
    const basis = evaluate([
      call("host-a"),
      modelCall({ fact_id: "f-call", provenance: { basis: "DERIVED", source: "host-a" } }),
    ]);
    expect(basis.conflicts.map((conflict) => conflict.identity.split("\u0000")[0])).toEqual(["call", "fact"]);

    const tasks = [definedTask()];
    const resent = [
      snapshot({ fact_id: "f-snap", provenance: { basis: "MANUAL", source: "owner" }, tasks }),
      snapshot({ fact_id: "f-snap", provenance: null, tasks }),
      snapshot({ fact_id: "f-snap-again", provenance: { basis: "DIRECT_HOST" }, tasks }),
    ];
    const snapshots = evaluate([...resent, joined("t-1", "d-1")]);
    expect(snapshots.conflicts).toEqual([]);
    expectPartitionedSame([...resent, joined("t-1", "d-1")]);
    expect(snapshots.get("task-cohort-comparison-eligibility", {}, SNAP)).toMatchObject({
      eligible_units: 1,
      exclusions: {},
    });
  });

  it("revision 3 change 12: event_time and cutoff lie in 0001-01-01T00:00:00Z..9999-12-30T23:59:59.999Z after the offset", () => {
    for (const outside of [
      "9999-12-31T23:00:00-05:00",
      "9999-12-31T00:00:00Z",
      "0001-01-01T00:59:59+01:00",
      "0000-12-31T23:59:59Z",
    ]) {
      expect(parseFact(rawModelCall({ event_time: outside })), outside).toMatchObject({
        ok: false,
        rejection: { reason: "INVALID_TIMESTAMP", field: "event_time" },
      });
      expect(parseFact(rawSnapshot({ cutoff: outside })), outside).toMatchObject({
        ok: false,
        rejection: { reason: "INVALID_TIMESTAMP", field: "cutoff" },
      });
    }
    // Avro's timestamp-millis is held to the same range.
    expect(throughAvro(rawModelCall({ event_time: "9999-12-30T23:59:59.999Z" }))).toMatchObject({ ok: true });
    const late = { ...rawModelCall(), event_time: Date.parse("9999-12-31T00:00:00Z") };
    expect(parseDecodedFact(late)).toMatchObject({ ok: false, rejection: { reason: "INVALID_TIMESTAMP" } });

    // The edges are accepted, and every bound the engine writes is a four-digit-year RFC 3339 string.
    const last = modelCall({ call_id: "c-last", event_time: "9999-12-31T04:59:59.999+05:00" });
    const first = modelCall({ call_id: "c-first", event_time: "0001-01-01T00:00:00Z" });
    const evaluated = evaluate([last, first, snapshot({ cutoff: "9999-12-30T23:59:59.999Z" })]);
    const written = evaluated.results.flatMap((result) => [JSON.stringify(result.scope), result.as_of ?? ""]).join(" ");
    expect(written).toContain("9999-12-31T00:00:00.000Z");
    expect(written).toContain("0001-01-01T00:00:00.000Z");
    expect(written).not.toMatch(/[+-]\d{6}-/);

    // A window size past the last day (here a week) still writes a four-digit year: the window that
    // would end in year 10000 ends at 9999-12-31T00:00:00.000Z, after every fact it can hold.
    const weekly = evaluate([last], { windowMillis: 7 * 86_400_000 });
    const scopes = weekly.results.map((result) => JSON.stringify(result.scope)).join(" ");
    expect(scopes).toContain('"end":"9999-12-31T00:00:00.000Z"');
    expect(scopes).not.toMatch(/[+-]\d{6}-/);
  });
});
