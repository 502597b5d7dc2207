import type { Rng } from "./prng.ts";
import { ANOMALY_MIX } from "./anomaly-mix.ts";
import { HOUR, UNSUPPORTED_CONTRACT, iso, type BatchSink, type TimedLine } from "./records.ts";

export interface StreamAnomalyCounts {
  /** Second versions under an existing fact_id (cost) or call_id (model_call): conflicts. */
  readonly conflictingVersions: number;
  readonly unsupportedContract: number;
  /**
   * Lines parseFactJson must reject: invalid JSON, a rolled-over date (02-30), an epoch number as
   * event_time, a key repeated in one object.
   */
  readonly malformed: number;
  /** Accepted facts carrying invalid measures (contract revision 2 §1), one per kind of invalidity and range. */
  readonly invalidMeasureFacts: number;
  /** Identical re-reports of a cost under a new fact_id and provenance.source: they count once. */
  readonly reReports: number;
  /** Byte-identical copies of earlier lines, arriving later. */
  readonly redeliveries: number;
}

const UNSUPPORTED_PER_BATCH = 3;

function keptOf(sink: BatchSink, type: string): TimedLine[] {
  return sink.lines.filter((line) => line.record !== undefined && line.record["type"] === type);
}

/**
 * What goes wrong on the wire, per batch: a cost re-reported under its fact_id with a different
 * amount, a model call reported twice under one call_id, a few records of an older contract, four
 * malformed lines (invalid JSON, a rolled-over date, an epoch number as a time, a repeated key),
 * facts with invalid measures of every kind and values at and past the ranges (accepted, the
 * measure reported), an identical re-report of a cost under a new fact_id, an OPEN summary that
 * names no task, and about one percent exact redeliveries.
 */
export function injectStreamAnomalies(sink: BatchSink, rng: Rng): StreamAnomalyCounts {
  const costs = keptOf(sink, "cost");
  const calls = keptOf(sink, "model_call").filter((line) => line.record?.["operational"] === true);
  let conflictingVersions = 0;
  let unsupportedContract = 0;
  let malformed = 0;
  let invalidMeasureFacts = 0;
  let reReports = 0;

  if (costs.length > 0 && calls.length > 0) {
    const cost = rng.pick(costs);
    const costRecord = cost.record ?? {};
    sink.emit(cost.time + HOUR, { ...costRecord, amount_minor: Number(costRecord["amount_minor"]) + 7 });
    const call = rng.pick(calls);
    const callRecord = call.record ?? {};
    sink.emit(call.time + 30_000, {
      ...callRecord,
      fact_id: `${String(callRecord["fact_id"])}-dup`,
      output_tokens: Number(callRecord["output_tokens"] ?? 0) + 13,
    });
    conflictingVersions += 2;

    for (let n = 0; n < UNSUPPORTED_PER_BATCH; n += 1) {
      const old = rng.pick(n % 2 === 0 ? calls : costs);
      const record = old.record ?? {};
      sink.raw(
        old.time + 1000,
        JSON.stringify({ ...record, contract: UNSUPPORTED_CONTRACT, fact_id: `${String(record["fact_id"])}-v09` }),
        false,
      );
      unsupportedContract += 1;
    }

    const truncated = rng.pick(calls);
    sink.raw(truncated.time + 2000, truncated.line.slice(0, Math.floor(truncated.line.length * 0.6)), false);
    malformed += 1 + rejectedTimesAndKeys(sink, rng, calls, costs);
    invalidMeasureFacts += emitInvalidMeasures(sink, rng, calls, costs, keptOf(sink, "delivery_summary"));
    reReports += emitReReport(sink, rng, costs, String(costRecord["cost_id"]));
    emitUnjoinedSummary(sink, rng, keptOf(sink, "delivery_summary"));
  }

  let redeliveries = 0;
  for (const line of [...sink.lines]) {
    if (!line.valid || !rng.chance(ANOMALY_MIX.redelivery)) continue;
    sink.raw(line.time + rng.int(1, 7200) * 1000, line.line, true);
    redeliveries += 1;
  }
  return { conflictingVersions, unsupportedContract, malformed, invalidMeasureFacts, reReports, redeliveries };
}

/** Contract revision 2 §1 rejections: a rolled-over date, an epoch number as event_time, a repeated key. */
function rejectedTimesAndKeys(
  sink: BatchSink,
  rng: Rng,
  calls: readonly TimedLine[],
  costs: readonly TimedLine[],
): number {
  const rolled = rng.pick(calls);
  const rolledRecord = rolled.record ?? {};
  sink.raw(
    rolled.time + 3000,
    JSON.stringify({
      ...rolledRecord,
      fact_id: `${String(rolledRecord["fact_id"])}-0230`,
      call_id: `${String(rolledRecord["call_id"])}-0230`,
      event_time: "2026-02-30T10:00:00.000Z",
    }),
    false,
  );
  const epoch = rng.pick(calls);
  const epochRecord = epoch.record ?? {};
  sink.raw(
    epoch.time + 4000,
    JSON.stringify({
      ...epochRecord,
      fact_id: `${String(epochRecord["fact_id"])}-epoch`,
      call_id: `${String(epochRecord["call_id"])}-epoch`,
      event_time: epoch.time,
    }),
    false,
  );
  const repeated = rng.pick(costs);
  const repeatedRecord = repeated.record ?? {};
  const text = JSON.stringify({
    ...repeatedRecord,
    fact_id: `${String(repeatedRecord["fact_id"])}-dupkey`,
    cost_id: `${String(repeatedRecord["cost_id"])}-dupkey`,
  });
  sink.raw(
    repeated.time + 5000,
    text.replace('"amount_minor":', `"amount_minor":${Number(repeatedRecord["amount_minor"]) * 100},"amount_minor":`),
    false,
  );
  return 3;
}

/**
 * Contract revision 2 §1: one accepted fact per kind of invalid measure (wrong type, out of range,
 * empty, unknown enum, bad currency), and values at and just past each range.
 * Each is a new call, cost or Delivery, so it conflicts with nothing.
 */
function emitInvalidMeasures(
  sink: BatchSink,
  rng: Rng,
  calls: readonly TimedLine[],
  costs: readonly TimedLine[],
  summaries: readonly TimedLine[],
): number {
  const callVariants: readonly [string, Readonly<Record<string, unknown>>][] = [
    ["neg-span", { span_duration_ms: -5 }],
    ["frac-tokens", { input_tokens: 1.5 }],
    ["empty-provider", { provider: "" }],
    ["bad-usage", { usage_source: "GUESS" }],
    ["span-at-range", { span_duration_ms: 1e10 }],
    ["span-past-range", { span_duration_ms: 1e10 + 1 }],
    ["tokens-at-range", { output_tokens: 1e12 }],
    ["tokens-past-range", { output_tokens: 1e12 + 1 }],
  ];
  let emitted = 0;
  for (const [tag, change] of callVariants) {
    const call = rng.pick(calls);
    const record = call.record ?? {};
    sink.emit(call.time + 6000, {
      ...record,
      fact_id: `${String(record["fact_id"])}-${tag}`,
      call_id: `${String(record["call_id"])}-${tag}`,
      ...change,
    });
    emitted += 1;
  }
  const costVariants: readonly [string, Readonly<Record<string, unknown>>][] = [
    // (A missing or wrong-typed money field cannot travel in Avro: those are unit-tested only.)
    ["lower-currency", { currency: "usd" }],
    ["negative-amount", { amount_minor: -5 }],
    ["amount-at-range", { amount_minor: 1e15 }],
    ["amount-past-range", { amount_minor: 1e15 + 1 }],
  ];
  for (const [tag, change] of costVariants) {
    const cost = rng.pick(costs);
    const record = cost.record ?? {};
    sink.emit(cost.time + 7000, {
      ...record,
      fact_id: `${String(record["fact_id"])}-${tag}`,
      cost_id: `${String(record["cost_id"])}-${tag}`,
      ...change,
    });
    emitted += 1;
  }
  const summaryVariants: readonly [string, Readonly<Record<string, unknown>>][] = [
    ["neg-elapsed", { elapsed_ms: -1 }],
    ["empty-stage", { stage_reached: "" }],
    ["elapsed-at-range", { elapsed_ms: 1e11 }],
    ["elapsed-past-range", { elapsed_ms: 1e11 + 1 }],
  ];
  if (summaries.length === 0) return emitted;
  for (const [tag, change] of summaryVariants) {
    const summary = rng.pick(summaries);
    const record = summary.record ?? {};
    // A Delivery of its own, so its only TERMINAL summary is this one.
    sink.emit(summary.time + 8000, {
      ...record,
      fact_id: `${String(record["fact_id"])}-${tag}`,
      delivery_id: `${String(record["delivery_id"])}-${tag}`,
      task_id: null,
      ...change,
    });
    emitted += 1;
  }
  return emitted;
}

/** Contract §1 (revision 2): a cost reported again under a new fact_id and source, otherwise identical: counts once. */
function emitReReport(sink: BatchSink, rng: Rng, costs: readonly TimedLine[], conflictedCostId: string): number {
  const candidates = costs.filter(
    (line) => line.record?.["cost_id"] !== conflictedCostId && line.record?.["provenance"] !== null,
  );
  if (candidates.length === 0) return 0;
  const cost = rng.pick(candidates);
  const record = cost.record ?? {};
  const provenance = record["provenance"] as Readonly<Record<string, unknown>>;
  sink.emit(cost.time + HOUR, {
    ...record,
    fact_id: `${String(record["fact_id"])}-rereport`,
    provenance: { ...provenance, source: "billing-replay" },
  });
  return 1;
}

/**
 * Seed §6.2 rule 2: an OPEN summary of a task's Delivery that names no task, and reports a
 * requirement change. It joins no task, so it changes no task reading.
 */
function emitUnjoinedSummary(sink: BatchSink, rng: Rng, summaries: readonly TimedLine[]): void {
  if (summaries.length === 0) return;
  const summary = rng.pick(summaries);
  const record = summary.record ?? {};
  const time = summary.time - 1000;
  sink.emit(time, {
    ...record,
    fact_id: `${String(record["fact_id"])}-notask`,
    event_time: iso(time),
    task_id: null,
    status: "OPEN",
    outcome: null,
    requirement_changed: true,
    elapsed_ms: null,
  });
}
