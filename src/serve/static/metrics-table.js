// The metrics table: every published result record under its metric, and the result records the
// server could not show, each as an error row saying why.
import { el } from "./dom.js";
import { instantMillis } from "./format.js";
import { cohortNode, coverageNode, scopeNode, STATUS_TEXT, valueNode } from "./result-cells.js";

/** A row that says why a record is not shown, in place of the record, and which record (its key). */
function errorRow(attributes, columns, message, key) {
  const reason = el("span", { class: "reason" }, message);
  const cell = el("td", { colspan: columns, class: "error" }, reason, el("br"), el("span", { class: "muted" }, key));
  return el("tr", { class: "rejected", ...attributes }, cell);
}

function compareResults(a, b) {
  const scopeKey = (scope) => (scope.kind === "window" ? `w${instantMillis(scope.start)}` : `s${scope.snapshot_id}`);
  const left = `${scopeKey(a.scope)}\u0000${JSON.stringify(a.cohort)}`;
  const right = `${scopeKey(b.scope)}\u0000${JSON.stringify(b.cohort)}`;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Result records by metric id, metric ids in order. */
export function byMetric(results) {
  const groups = new Map();
  for (const [key, result] of results) {
    if (!groups.has(result.metric_id)) groups.set(result.metric_id, []);
    groups.get(result.metric_id).push([key, result]);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
}

/** Rejected result records by metric id ("no metric id" when they have none). */
function rejectedByMetric(rejected) {
  const groups = new Map();
  for (const record of rejected.values()) {
    if (record.kind !== "result") continue;
    const metricId = record.metric_id ?? "no metric id";
    if (!groups.has(metricId)) groups.set(metricId, []);
    groups.get(metricId).push(record);
  }
  return groups;
}

/** One result's row; a record that still cannot be drawn becomes an error row, never a blank page. */
function resultRow(key, metricId, result) {
  try {
    return el(
      "tr",
      { "data-key": key, "data-metric": metricId },
      scopeNode(result.scope),
      cohortNode(result.cohort),
      el("td", {}, el("span", { class: `badge ${result.status}` }, STATUS_TEXT[result.status] ?? result.status)),
      valueNode(result),
      coverageNode(result.coverage),
    );
  } catch (error) {
    return errorRow({ "data-rejected": key, "data-metric": metricId }, 5, `record not shown: ${error.message}`, key);
  }
}

export function renderMetrics(view) {
  const container = document.getElementById("metrics");
  const groups = new Map(byMetric(view.results));
  const rejected = rejectedByMetric(view.rejected);
  for (const metricId of rejected.keys()) if (!groups.has(metricId)) groups.set(metricId, []);
  const rejectedCount = [...rejected.values()].reduce((sum, records) => sum + records.length, 0);
  const notShown = rejectedCount > 0 ? `, ${rejectedCount} records not shown` : "";
  const counts = `${view.results.size} results, ${groups.size} metrics${notShown}`;
  document.getElementById("result-count").textContent = counts;
  container.replaceChildren(
    ...[...groups.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([metricId, entries]) => {
        entries.sort(([, a], [, b]) => compareResults(a, b));
        const statuses = new Map();
        for (const [, result] of entries) statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1);
        const errors = (rejected.get(metricId) ?? []).map((record) =>
          errorRow(
            { "data-rejected": record.key, "data-metric": metricId },
            5,
            `record not shown: ${record.reason}`,
            record.key,
          ),
        );
        if (errors.length > 0) statuses.set("not shown", errors.length);
        const rows = [...entries.map(([key, result]) => resultRow(key, metricId, result)), ...errors];
        return el(
          "details",
          { open: "", "data-metric": metricId },
          el(
            "summary",
            {},
            el("h3", {}, metricId),
            " ",
            el(
              "span",
              { class: "muted" },
              [...statuses].map(([status, count]) => `${count} ${STATUS_TEXT[status] ?? status}`).join(", "),
            ),
          ),
          el(
            "table",
            {},
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                ["scope", "cohort", "status", "value, or why there is none", "coverage"].map((title) =>
                  el("th", {}, title),
                ),
              ),
            ),
            el("tbody", {}, rows),
          ),
        );
      }),
  );
}
