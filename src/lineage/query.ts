import { METRIC_IDS } from "../catalog/metric-definitions.ts";
import type { EngineLineage } from "../metrics/metric-engine.ts";
import type { Explanation } from "./explanation.ts";
import { groupKeyOfResult, matchingGroups } from "./group-keys.ts";
import { explainGroup } from "./lineage.ts";

/** What to explain: a result key as printed, or a metric with a scope filter and cohort coordinates. */
export type ExplainQuery =
  | { readonly key: string }
  | { readonly metric: string; readonly scope?: string; readonly cohort: Readonly<Record<string, string>> };

/** An explanation, or the groups a query matched when it matched none or several. */
export type ExplainAnswer =
  | { readonly kind: "explained"; readonly explanation: Explanation }
  | { readonly kind: "unmatched"; readonly matches: readonly string[] };

/** Reads a query from its wire form (HTTP query parameters): `key`, or `metric`, `scope`, `cohort=k=v`... */
export function queryOf(params: URLSearchParams): ExplainQuery | string {
  const key = params.get("key");
  if (key !== null)
    return isResultKey(key) ? { key } : "key is not a result key (the canonical JSON of {cohort, metric_id, scope})";
  const metric = params.get("metric");
  if (metric === null) return "give key, or metric (with scope and cohort to narrow it)";
  const cohort = cohortOf(params.getAll("cohort"));
  if (typeof cohort === "string") return cohort;
  const scope = params.get("scope") ?? undefined;
  return scope === undefined ? { metric, cohort } : { metric, scope, cohort };
}

/** The query's wire form (see queryOf). */
export function queryParams(query: ExplainQuery): URLSearchParams {
  const params = new URLSearchParams();
  if ("key" in query) {
    params.set("key", query.key);
    return params;
  }
  params.set("metric", query.metric);
  if (query.scope !== undefined) params.set("scope", query.scope);
  for (const [name, value] of Object.entries(query.cohort)) params.append("cohort", `${name}=${value}`);
  return params;
}

/** `k=v` pairs as cohort coordinates (a message when one is malformed or repeated). */
export function cohortOf(pairs: readonly string[]): Record<string, string> | string {
  const cohort: Record<string, string> = {};
  for (const pair of pairs) {
    const separator = pair.indexOf("=");
    if (separator <= 0) return `cohort "${pair}" is not name=value`;
    const name = pair.slice(0, separator);
    if (name in cohort) return `cohort coordinate ${name} is given twice`;
    cohort[name] = pair.slice(separator + 1);
  }
  return cohort;
}

/** Answers a query from an engine's state (which must be settled: see explainGroup). */
export function answer(lineage: EngineLineage, query: ExplainQuery): ExplainAnswer {
  const groups =
    "key" in query ? [groupKeyOfResult(query.key)] : matchingGroups(lineage, query.metric, query.scope, query.cohort);
  const [only] = groups;
  if (groups.length !== 1 || only === undefined) return { kind: "unmatched", matches: groups };
  const explanation = explainGroup(lineage, only);
  if (explanation.results.length === 0) return { kind: "unmatched", matches: [] };
  return { kind: "explained", explanation };
}

/** Whether a metric id is one of the catalog's. */
export function isMetricId(metric: string): boolean {
  return (METRIC_IDS as readonly string[]).includes(metric);
}

function isResultKey(key: string): boolean {
  try {
    const parsed = JSON.parse(key) as unknown;
    return (
      typeof parsed === "object" &&
      parsed !== null &&
      "metric_id" in parsed &&
      "scope" in parsed &&
      "cohort" in parsed &&
      isMetricId(String(parsed.metric_id))
    );
  } catch {
    return false;
  }
}
