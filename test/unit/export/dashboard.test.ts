import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COHORT_LABELS, FAMILIES, sampleNames } from "../../../src/export/openmetrics.ts";

const DASHBOARD = new URL("../../../ops/grafana/agentops-dashboard.json", import.meta.url);

interface Target {
  readonly expr?: string;
}
interface Panel {
  readonly title: string;
  readonly targets?: readonly Target[];
}
interface Dashboard {
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly { readonly query?: unknown }[] };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as Dashboard;

/** Every PromQL expression the dashboard runs: panel targets and template variable queries. */
function expressions(): string[] {
  const fromPanels = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr ?? ""));
  const fromVariables = dashboard.templating.list.flatMap((variable) => {
    const query = variable.query;
    if (typeof query === "object" && query !== null && "query" in query) return [String(query.query)];
    return [];
  });
  return [...fromPanels, ...fromVariables].filter((expr) => expr !== "");
}

/** Label names the exporter writes: identity, cohort coordinates, category, reason and the statesets' own. */
const LABELS = new Set([
  "metric",
  "scope_kind",
  "snapshot",
  "category",
  "reason",
  ...COHORT_LABELS,
  FAMILIES.status.name,
  FAMILIES.coverageState.name,
]);

describe("ops/grafana/agentops-dashboard.json", () => {
  const all = expressions();

  it("queries only series the exporter serves", () => {
    const served = new Set(sampleNames());
    const queried = all.flatMap((expr) => expr.match(/\bagentops_[a-z0-9_]+\b/g) ?? []);
    expect(queried.length).toBeGreaterThan(10);
    expect(queried.filter((name) => !served.has(name))).toEqual([]);
  });

  it("selects and groups only by labels the exporter writes", () => {
    const matches = (pattern: RegExp): string[] =>
      all.flatMap((expr) => [...expr.matchAll(pattern)].map((match) => match[1] ?? ""));
    const selected = matches(/\{([^}]*)\}/g).flatMap((body) =>
      [...body.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((match) => match[1] ?? ""),
    );
    const grouped = matches(/\b(?:by|without)\s*\(([^)]*)\)/g).flatMap((list) =>
      list.split(",").map((name) => name.trim()),
    );
    const used = [...selected, ...grouped].filter((name) => name !== "");
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((name) => !LABELS.has(name))).toEqual([]);
  });

  it("never aggregates values, so money is never summed across currency, source or cost basis", () => {
    const operators = "sum|avg|min|max|count|group|topk|bottomk|quantile|stddev|stdvar";
    const aggregation = new RegExp(`\\b(?:${operators})\\b\\s*(?:by|without)?\\s*\\(`);
    const overValues = all.filter((expr) => expr.includes(FAMILIES.value.name));
    expect(overValues.length).toBeGreaterThan(0);
    expect(overValues.filter((expr) => aggregation.test(expr))).toEqual([]);
  });
});
