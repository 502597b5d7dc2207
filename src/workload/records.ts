import { ANOMALY_MIX } from "./anomaly-mix.ts";
import type { Rng } from "./prng.ts";

export const WORKLOAD_CONTRACT = "agentops.observation@1.0.0";
export const UNSUPPORTED_CONTRACT = "agentops.observation@0.9.0";
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** ISO-8601 UTC with milliseconds and Z: the contract's JSON form. */
export function iso(millis: number): string {
  return new Date(millis).toISOString();
}

/** One output line with the event time it sorts by; `order` keeps ties in creation order. */
export interface TimedLine {
  readonly time: number;
  readonly order: number;
  readonly line: string;
  /** False for the intentionally bad lines (malformed or unsupported contract). */
  readonly valid: boolean;
  /** The record object for valid lines of conflict-able kinds, kept so anomalies can derive variants. */
  readonly record?: Readonly<Record<string, unknown>>;
}

/** Collects one batch's lines; sorted by event time before they are written. */
export class BatchSink {
  readonly lines: TimedLine[] = [];
  private order = 0;

  emit(time: number, record: Readonly<Record<string, unknown>>, keep = false): void {
    this.lines.push({
      time,
      order: this.order++,
      line: JSON.stringify(record),
      valid: true,
      ...(keep ? { record } : {}),
    });
  }

  raw(time: number, line: string, valid: boolean): void {
    this.lines.push({ time, order: this.order++, line, valid });
  }

  sorted(): TimedLine[] {
    return [...this.lines].sort((a, b) => a.time - b.time || a.order - b.order);
  }
}

/** The envelope, in the contract's field order, followed by the type's own fields. */
export function fact(
  type: string,
  factId: string,
  time: number,
  provenance: unknown,
  fields: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return { contract: WORKLOAD_CONTRACT, type, fact_id: factId, event_time: iso(time), provenance, ...fields };
}

/**
 * Provenance as hosts report it: mostly direct, a few derived/estimated/manual ones, and a few
 * unreadable ones (null, or a basis the contract does not know).
 */
export function provenanceFor(
  rng: Rng,
  source: string,
  direct: "DIRECT_PROVIDER" | "DIRECT_HOST" | undefined = undefined,
): unknown {
  const basis = rng.weighted(ANOMALY_MIX.provenance);
  if (basis === "NULL") return null;
  if (basis === "UNKNOWN") return { basis: "SCRAPED", source };
  if ((basis === "DIRECT_PROVIDER" || basis === "DIRECT_HOST") && direct !== undefined)
    return { basis: direct, source };
  return { basis, source };
}

/** An absent optional field: left out, or (sometimes) written as an explicit null. Both mean absent. */
export function absent(rng: Rng): null | undefined {
  return rng.chance(ANOMALY_MIX.explicitNull) ? null : undefined;
}
