import { formatTimestamp } from "../contract/timestamp.ts";
import type { MetricId } from "../catalog/metric-definitions.ts";
import type { Cohort, Scope, SnapshotScope, WindowScope } from "./result-record.ts";

/** The tumbling event-time window holding an anchoring time (epoch-aligned, so UTC-aligned). */
export function windowScopeOf(eventTime: number, windowMillis: number): WindowScope {
  const start = Math.floor(eventTime / windowMillis) * windowMillis;
  return { kind: "window", start: formatTimestamp(start), end: formatTimestamp(start + windowMillis) };
}

export function snapshotScopeOf(snapshotId: string, cutoff: number): SnapshotScope {
  return { kind: "snapshot", snapshot_id: snapshotId, cutoff: formatTimestamp(cutoff) };
}

/** Builds a cohort with its keys sorted, skipping nothing: callers pass only complete coordinates. */
export function cohortOf(entries: Readonly<Record<string, string>>): Cohort {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(entries).sort()) sorted[key] = entries[key] as string;
  return sorted;
}

/**
 * The result key: RFC 8785 canonical JSON of {metric_id, scope, cohort}. Keys are written in JCS
 * order by hand (cohort, metric_id, scope; scope's own keys sorted) because this runs for every
 * contribution and JSON.stringify is several times faster than a generic canonicaliser; a test
 * proves the two agree.
 */
export function resultKey(metricId: MetricId, scope: Scope, cohort: Cohort): string {
  const canonicalScope = scope.kind === "window" ? { end: scope.end, kind: scope.kind, start: scope.start } : { cutoff: scope.cutoff, kind: scope.kind, snapshot_id: scope.snapshot_id };
  return JSON.stringify({ cohort, metric_id: metricId, scope: canonicalScope });
}
