import { TIMESTAMP_RANGE, formatTimestamp } from "../contract/timestamp.ts";
import type { MetricId } from "../catalog/metric-definitions.ts";
import { BoundedMemo, memoized } from "./memo-map.ts";
import type { Cohort, Scope, SnapshotScope, WindowScope } from "../contract/result-record.ts";
import { byUtf8 } from "../contract/code-point-order.ts";

/*
 * Scopes, cohorts and result keys are interned: every contribution names its group, and a million
 * facts name only a few thousand distinct groups. Sharing one object (and one key string) per
 * distinct value keeps memory proportional to groups, not facts, and turns key building into
 * identity lookups. Windows and snapshots keep coming for as long as the process runs, so their
 * caches are bounded (INTERNED, SNAPSHOTS_INTERNED: the recent ones kept); result keys hang off the
 * scope objects.
 */

/** Distinct windows or cohorts kept per cache generation (see BoundedMemo). */
const INTERNED = 8_192;
/**
 * Distinct snapshots kept per cache generation: fewer than windows, because every task snapshot
 * brings a new one and each keeps its result keys alive. A dropped snapshot scope is made again
 * equal to the first (nothing compares scopes by identity), so a miss costs time, never a result.
 */
const SNAPSHOTS_INTERNED = 1_024;

/** The cohort-less record's cohort. */
export const NO_COHORT: Cohort = Object.freeze({});

const windowScopes = new Map<number, BoundedMemo<number, WindowScope>>();

/**
 * Contract revision 3 change 12: every bound is written with a four-digit year. No fact is later
 * than TIMESTAMP_RANGE.max, so a window reaching past it ends, holding the same facts, one
 * millisecond after it (9999-12-31T00:00:00.000Z) instead of in year 10000.
 */
const LAST_WINDOW_END = TIMESTAMP_RANGE.max + 1;

/** The tumbling event-time window holding an anchoring time (epoch-aligned, so UTC-aligned). */
export function windowScopeOf(eventTime: number, windowMillis: number): WindowScope {
  const start = Math.floor(eventTime / windowMillis) * windowMillis;
  let bySize = windowScopes.get(windowMillis);
  if (bySize === undefined) windowScopes.set(windowMillis, (bySize = new BoundedMemo<number, WindowScope>(INTERNED)));
  let scope = bySize.get(start);
  if (scope === undefined) {
    const end = formatTimestamp(Math.min(start + windowMillis, LAST_WINDOW_END));
    bySize.set(start, (scope = Object.freeze({ kind: "window", start: formatTimestamp(start), end })));
  }
  return scope;
}

const snapshotScopes = new BoundedMemo<string, Map<number, SnapshotScope>>(SNAPSHOTS_INTERNED);

export function snapshotScopeOf(snapshotId: string, cutoff: number): SnapshotScope {
  const byCutoff = memoized(snapshotScopes, snapshotId, () => new Map<number, SnapshotScope>());
  return memoized(byCutoff, cutoff, () =>
    Object.freeze({ kind: "snapshot", snapshot_id: snapshotId, cutoff: formatTimestamp(cutoff) }),
  );
}

const cohorts = new BoundedMemo<string, Cohort>(INTERNED);

/** The shared cohort with these coordinates, keys sorted. Callers pass only complete coordinates. */
export function cohortOf(entries: Readonly<Record<string, string>>): Cohort {
  const keys = Object.keys(entries).sort(byUtf8);
  const identity = JSON.stringify(keys.map((key) => [key, entries[key]]));
  return memoized(cohorts, identity, () => {
    const sorted: Record<string, string> = {};
    for (const key of keys) sorted[key] = entries[key] as string;
    return Object.freeze(sorted);
  });
}

const cohortKeys = new WeakMap<Cohort, string>();

/** A cohort's canonical JSON (its keys are sorted), computed once per cohort object: it orders and compares tuples. */
export function cohortKey(cohort: Cohort): string {
  let key = cohortKeys.get(cohort);
  if (key === undefined) {
    key = JSON.stringify(cohort);
    cohortKeys.set(cohort, key);
  }
  return key;
}

/**
 * The result key: RFC 8785 canonical JSON of {metric_id, scope, cohort}. Keys are written in JCS
 * order by hand (cohort, metric_id, scope; scope's own keys sorted), and a test proves this equals
 * a generic canonicaliser's output.
 */
export function resultKey(metricId: MetricId, scope: Scope, cohort: Cohort): string {
  const canonicalScope =
    scope.kind === "window"
      ? { end: scope.end, kind: scope.kind, start: scope.start }
      : { cutoff: scope.cutoff, kind: scope.kind, snapshot_id: scope.snapshot_id };
  return JSON.stringify({ cohort, metric_id: metricId, scope: canonicalScope });
}

const groupKeys = new WeakMap<Scope, WeakMap<Cohort, Map<MetricId, string>>>();

/** resultKey for interned scopes and cohorts, computed once per distinct group and shared. */
export function groupKeyOf(metricId: MetricId, scope: Scope, cohort: Cohort): string {
  // Explicit lookups, not memoized(): this runs for every contribution, and a closure per lookup was
  // a measurable part of what the engine allocates.
  let byCohort = groupKeys.get(scope);
  if (byCohort === undefined) groupKeys.set(scope, (byCohort = new WeakMap()));
  let byMetric = byCohort.get(cohort);
  if (byMetric === undefined) byCohort.set(cohort, (byMetric = new Map()));
  let key = byMetric.get(metricId);
  if (key === undefined) byMetric.set(metricId, (key = resultKey(metricId, scope, cohort)));
  return key;
}
