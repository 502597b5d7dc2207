import type { Rng } from "./prng.ts";
import { ANOMALY_MIX } from "./anomaly-mix.ts";
import { HOUR, UNSUPPORTED_CONTRACT, type BatchSink, type TimedLine } from "./records.ts";

export interface StreamAnomalyCounts {
  /** Second versions under an existing fact_id (cost) or call_id (model_call): conflicts. */
  readonly conflictingVersions: number;
  readonly unsupportedContract: number;
  /** Lines parseFactJson must reject: invalid JSON, a bad currency, a missing required field. */
  readonly malformed: number;
  /** Byte-identical copies of earlier lines, arriving later. */
  readonly redeliveries: number;
}

const UNSUPPORTED_PER_BATCH = 3;

function keptOf(sink: BatchSink, type: string): TimedLine[] {
  return sink.lines.filter((line) => line.record !== undefined && line.record["type"] === type);
}

/**
 * What goes wrong on the wire, per batch: a cost re-reported under its fact_id with a different
 * amount, a model call reported twice under one call_id, a few records of an older contract, three
 * malformed lines (invalid JSON, a currency that is not ISO 4217, a missing required field) and
 * about one percent exact redeliveries.
 */
export function injectStreamAnomalies(sink: BatchSink, rng: Rng): StreamAnomalyCounts {
  const costs = keptOf(sink, "cost");
  const calls = keptOf(sink, "model_call").filter((line) => line.record?.["operational"] === true);
  let conflictingVersions = 0;
  let unsupportedContract = 0;
  let malformed = 0;

  if (costs.length > 0 && calls.length > 0) {
    const cost = rng.pick(costs);
    const costRecord = cost.record ?? {};
    sink.emit(cost.time + HOUR, { ...costRecord, amount_minor: Number(costRecord["amount_minor"]) + 7 });
    const call = rng.pick(calls);
    const callRecord = call.record ?? {};
    sink.emit(call.time + 30_000, { ...callRecord, fact_id: `${String(callRecord["fact_id"])}-dup`, output_tokens: Number(callRecord["output_tokens"] ?? 0) + 13 });
    conflictingVersions += 2;

    for (let n = 0; n < UNSUPPORTED_PER_BATCH; n += 1) {
      const old = rng.pick(n % 2 === 0 ? calls : costs);
      const record = old.record ?? {};
      sink.raw(old.time + 1000, JSON.stringify({ ...record, contract: UNSUPPORTED_CONTRACT, fact_id: `${String(record["fact_id"])}-v09` }), false);
      unsupportedContract += 1;
    }

    const truncated = rng.pick(calls);
    sink.raw(truncated.time + 2000, truncated.line.slice(0, Math.floor(truncated.line.length * 0.6)), false);
    const badCurrency = rng.pick(costs).record ?? {};
    const badTime = rng.pick(costs).time;
    sink.raw(badTime, JSON.stringify({ ...badCurrency, fact_id: `${String(badCurrency["fact_id"])}-cur`, cost_id: `${String(badCurrency["cost_id"])}-cur`, currency: "usd" }), false);
    const missing: Record<string, unknown> = { ...(rng.pick(costs).record ?? {}) };
    delete missing["amount_minor"];
    sink.raw(badTime + 1000, JSON.stringify({ ...missing, fact_id: `${String(missing["fact_id"])}-nf`, cost_id: `${String(missing["cost_id"])}-nf` }), false);
    malformed += 3;
  }

  let redeliveries = 0;
  for (const line of [...sink.lines]) {
    if (!line.valid || !rng.chance(ANOMALY_MIX.redelivery)) continue;
    sink.raw(line.time + rng.int(1, 7200) * 1000, line.line, true);
    redeliveries += 1;
  }
  return { conflictingVersions, unsupportedContract, malformed, redeliveries };
}
