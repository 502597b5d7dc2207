import type { MetricId } from "../catalog/metric-definitions.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import type { Scope } from "../contract/result-record.ts";
import type { EngineLineage } from "../metrics/metric-engine.ts";
import { FORMULA_SHAPES } from "../metrics/metric-formula.ts";

const MONEY_COORDINATES = ["currency", "source", "cost_basis"] as const;

/** The result key of a group: a money slice's key without its slice coordinates. */
export function groupKeyOfResult(key: string): string {
  const parsed = JSON.parse(key) as { cohort: Record<string, string>; metric_id: MetricId; scope: unknown };
  if (FORMULA_SHAPES[parsed.metric_id] !== "money") return key;
  const cohort: Record<string, string> = {};
  for (const name of Object.keys(parsed.cohort).sort(byUtf8))
    if (!(MONEY_COORDINATES as readonly string[]).includes(name)) cohort[name] = parsed.cohort[name] as string;
  return JSON.stringify({ cohort, metric_id: parsed.metric_id, scope: parsed.scope });
}

/** The group keys of the published results matching a metric, a scope filter and cohort coordinates. */
export function matchingGroups(
  lineage: EngineLineage,
  metricId: string,
  scope: string | undefined,
  cohort: Readonly<Record<string, string>>,
): string[] {
  const found = new Set<string>();
  for (const key of lineage.resultKeys()) {
    const result = lineage.result(key);
    if (result === null || result.metric_id !== metricId) continue;
    if (scope !== undefined && !scopeMatches(result.scope, scope)) continue;
    if (Object.entries(cohort).some(([name, value]) => result.cohort[name] !== value)) continue;
    found.add(groupKeyOfResult(key));
  }
  return [...found].sort(byUtf8);
}

/**
 * `--scope`: a window by its start (a prefix of it, e.g. `2026-01-05`), or a snapshot by its id;
 * `window:` or `snapshot:` in front says which.
 */
export function scopeMatches(scope: Scope, filter: string): boolean {
  const [kind, value] = filter.startsWith("window:")
    ? ["window", filter.slice(7)]
    : filter.startsWith("snapshot:")
      ? ["snapshot", filter.slice(9)]
      : [undefined, filter];
  if (scope.kind === "window") return (kind === undefined || kind === "window") && scope.start.startsWith(value);
  return (kind === undefined || kind === "snapshot") && scope.snapshot_id === value;
}
