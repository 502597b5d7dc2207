// The live view. It shows the records the server streams — result records, tripwire alerts and
// run-state summaries — as they were published: every figure on the page is a field of a record,
// formatted for reading; no metric is computed here.
import { el } from "./dom.js";
import { formatInstant, instantMillis } from "./format.js";
import { openLineage } from "./lineage.js";
import { cohortNode, coverageNode, scopeNode, STATUS_TEXT, valueNode } from "./result-cells.js";

// `rejected`: records the server could not show (its record checks), by kind and key, each with why.
const view = {
  results: new Map(),
  alerts: new Map(),
  runs: new Map(),
  rejected: new Map(),
  fresh: new Set(),
  limits: { maxAlerts: 5000, maxRuns: 5000 },
  folded: { alerts: 0, runs: 0 },
};

/** Keeps a map within its bound as the server does (view-state.ts): the first entries are the oldest. */
function trimOldest(map, max, onDrop = () => {}) {
  while (map.size > max) {
    const oldest = map.keys().next().value;
    map.delete(oldest);
    onDrop(oldest);
  }
}
const rejectedId = (kind, key) => `${kind}\u0000${key}`;

/** A row that says why a record is not shown, in place of the record, and which record (its key). */
function errorRow(attributes, columns, message, key) {
  const reason = el("span", { class: "reason" }, message);
  const cell = el("td", { colspan: columns, class: "error" }, reason, el("br"), el("span", { class: "muted" }, key));
  return el("tr", { class: "rejected", ...attributes }, cell);
}

// ---------- metrics ----------

function compareResults(a, b) {
  const scopeKey = (scope) => (scope.kind === "window" ? `w${instantMillis(scope.start)}` : `s${scope.snapshot_id}`);
  const left = `${scopeKey(a.scope)}\u0000${JSON.stringify(a.cohort)}`;
  const right = `${scopeKey(b.scope)}\u0000${JSON.stringify(b.cohort)}`;
  return left < right ? -1 : left > right ? 1 : 0;
}

function byMetric() {
  const groups = new Map();
  for (const [key, result] of view.results) {
    if (!groups.has(result.metric_id)) groups.set(result.metric_id, []);
    groups.get(result.metric_id).push([key, result]);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
}

/** Rejected result records by metric id ("no metric id" when they have none). */
function rejectedByMetric() {
  const groups = new Map();
  for (const record of view.rejected.values()) {
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

function renderMetrics() {
  const container = document.getElementById("metrics");
  const groups = new Map(byMetric());
  const rejected = rejectedByMetric();
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

// ---------- trends ----------

const charts = [];

/** Axis labels only (the values themselves are in the metrics table): 3835953 → 3.8M. */
function compactNumber(value) {
  return new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 2 }).format(value);
}

/** One chart per (window metric, cohort): x = window start, one series per value (or category). */
function renderTrends() {
  for (const chart of charts.splice(0)) chart.destroy();
  const container = document.getElementById("trends");
  const sections = [];
  for (const [metricId, entries] of byMetric()) {
    const windows = entries.filter(([, result]) => result.scope.kind === "window");
    if (windows.length === 0) continue;
    const cohorts = new Map();
    for (const [, result] of windows) {
      const cohortKey = JSON.stringify(result.cohort);
      if (!cohorts.has(cohortKey)) cohorts.set(cohortKey, []);
      cohorts.get(cohortKey).push(result);
    }
    const boxes = [];
    for (const [cohortKey, results] of [...cohorts].sort(([a], [b]) => (a < b ? -1 : 1))) {
      try {
        const box = drawTrend(metricId, cohortKey, results);
        if (box !== null) boxes.push(box);
      } catch (error) {
        const where = { class: "chart error", "data-metric": metricId, "data-cohort": cohortKey };
        boxes.push(el("div", where, `trend not drawn: ${error.message}`));
      }
    }
    if (boxes.length > 0)
      sections.push(
        el("details", { open: "" }, el("summary", {}, el("h3", {}, metricId)), el("div", { class: "charts" }, boxes)),
      );
  }
  container.replaceChildren(...sections);
}

/** One cohort's chart of a window metric; null when no window has a value. */
function drawTrend(metricId, cohortKey, results) {
  results.sort((a, b) => instantMillis(a.scope.start) - instantMillis(b.scope.start));
  if (!results.some((result) => result.value !== null)) return null;
  const xs = results.map((result) => instantMillis(result.scope.start) / 1000);
  const categorical = results.some((result) => result.value !== null && typeof result.value === "object");
  const categories = (result) => (result.value && typeof result.value === "object" ? Object.keys(result.value) : []);
  const names = categorical ? [...new Set(results.flatMap(categories))].sort() : ["value"];
  // A window without a published value is a gap (null), never a zero.
  const point = (result, name) => {
    if (result.value === null) return null;
    return categorical ? (result.value[name] ?? null) : result.value;
  };
  const series = names.map((name) => results.map((result) => point(result, name)));
  const currency = results.find((result) => result.measures?.currency)?.measures.currency;
  const cohortText =
    Object.entries(JSON.parse(cohortKey))
      .map(([key, value]) => `${key}=${value}`)
      .join(", ") || "no cohort";
  const gaps = results.filter((result) => result.value === null).length;
  const title = el(
    "div",
    { class: "title" },
    cohortText,
    currency ? ` (${currency} minor units)` : "",
    gaps > 0 ? el("span", { class: "why" }, ` · ${gaps} window(s) without a value`) : null,
  );
  const box = el("div", { class: "chart", "data-metric": metricId, "data-cohort": cohortKey }, title);
  const palette = ["#2e90fa", "#f79009", "#12b76a", "#7a5af8", "#f04438", "#667085"];
  charts.push(
    new uPlot(
      {
        width: 300,
        height: 140,
        legend: { show: categorical, live: false },
        // Window starts are instants: shown in UTC like every time on the page.
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
        scales: { x: { time: true } },
        axes: [{ size: 30 }, { size: 56, values: (_chart, ticks) => ticks.map(compactNumber) }],
        series: [
          {},
          ...names.map((name, index) => ({
            label: name,
            stroke: palette[index % palette.length],
            points: { show: true, size: 5 },
            spanGaps: false,
          })),
        ],
      },
      [xs, ...series],
      box,
    ),
  );
  return box;
}

// ---------- alerts and runs ----------

function evidenceText(evidence) {
  const parts = [`seq ${evidence.seq_from}..${evidence.seq_to}`];
  if (evidence.cycle_length != null) parts.push(`cycle of ${evidence.cycle_length}`);
  if (evidence.repetitions != null) parts.push(`×${evidence.repetitions}`);
  if (evidence.command != null) parts.push(`command: ${evidence.command}`);
  if (evidence.path != null) parts.push(`path: ${evidence.path}`);
  if (evidence.detail != null) parts.push(evidence.detail);
  return parts.join(" · ");
}

function runStateText(run) {
  if (run === undefined) return "run state not seen yet";
  const redundant = run.redundant_share;
  const share = typeof redundant !== "number" ? "no tool call yet" : `${(redundant * 100).toFixed(1)}% redundant`;
  return (
    `${run.steps_seen} steps, ${run.tool_calls_seen} tool calls (${share}), ` +
    `${run.sandbox_events_seen} sandbox events · open alerts ${run.open_alerts}, ` +
    `alerts emitted ${run.alerts_emitted} · last event ${formatInstant(run.last_event_time)}`
  );
}

/** Runs with alerts, the run whose alert arrived last first; alerts of a run newest first. */
function renderAlerts() {
  const byRun = new Map();
  let arrival = 0;
  const lastArrival = new Map();
  for (const alert of view.alerts.values()) {
    arrival += 1;
    if (!byRun.has(alert.run_id)) byRun.set(alert.run_id, []);
    byRun.get(alert.run_id).push(alert);
    lastArrival.set(alert.run_id, arrival);
  }
  const runs = [...byRun].sort(([a], [b]) => lastArrival.get(b) - lastArrival.get(a));
  const older =
    view.folded.alerts + view.folded.runs === 0
      ? ""
      : ` · not shown: ${view.folded.alerts} older alerts, ${view.folded.runs} older runs`;
  document.getElementById("alert-count").textContent =
    `${view.alerts.size} alerts in ${byRun.size} runs · ${view.runs.size} runs monitored${older}`;
  document.getElementById("runs").replaceChildren(
    ...[rejectedEventsNode()].filter((node) => node !== null),
    ...runs.map(([runId, alerts]) => {
      const fresh = alerts.some((alert) => view.fresh.has(alert.alert_id));
      return el(
        "div",
        { class: `run${fresh ? " fresh" : ""}`, "data-run": runId },
        el("div", {}, el("strong", {}, `run ${runId}`)),
        el("div", { class: "run-state" }, runStateText(view.runs.get(runId))),
        [...alerts].reverse().map(alertNode),
      );
    }),
  );
}

function alertNode(alert) {
  try {
    return el(
      "div",
      { class: "alert", "data-alert": alert.alert_id },
      el(
        "div",
        { class: "head" },
        el("span", { class: `badge ${alert.severity}`, "data-field": "severity" }, alert.severity),
        el("strong", { "data-field": "kind" }, alert.kind),
        el("span", { "data-field": "rule" }, `${alert.rule_id}@${alert.rule_version}`),
        el("span", { class: "muted", "data-field": "time" }, formatInstant(alert.event_time)),
      ),
      el("span", { "data-field": "evidence" }, evidenceText(alert.evidence ?? {})),
      el("span", { "data-field": "message" }, alert.message),
    );
  } catch (error) {
    return el("div", { class: "alert error", "data-rejected": alert.alert_id }, `alert not shown: ${error.message}`);
  }
}

/** Alert and run-state records the server could not show, each with why. */
function rejectedEventsNode() {
  const records = [...view.rejected.values()].filter((record) => record.kind !== "result");
  if (records.length === 0) return null;
  return el(
    "div",
    { class: "run rejected" },
    el("strong", {}, `${records.length} records not shown`),
    records.map((record) =>
      el(
        "div",
        { class: "error", "data-rejected": record.key, "data-kind": record.kind },
        `${record.kind} ${record.key}: ${record.reason}`,
      ),
    ),
  );
}

// ---------- the event stream ----------

let pending = null;
function schedule(part) {
  pending ??= new Set();
  pending.add(part);
  requestAnimationFrame(() => {
    if (pending === null) return;
    const parts = pending;
    pending = null;
    if (parts.has("metrics")) {
      renderMetrics();
      renderTrends();
    }
    if (parts.has("alerts")) renderAlerts();
  });
}

function showStatus(status) {
  document.getElementById("source").textContent = status.description;
  const error = document.getElementById("source-error");
  error.hidden = status.error === null;
  error.textContent = status.error ?? "";
}

const events = new EventSource("/events");
const connection = document.getElementById("connection");
events.addEventListener("open", () => {
  connection.textContent = "live";
  connection.className = "badge live";
});
events.addEventListener("error", () => {
  connection.textContent = "disconnected, retrying";
  connection.className = "badge down";
});
events.addEventListener("snapshot", (event) => {
  const snapshot = JSON.parse(event.data);
  view.results = new Map(snapshot.results.map(({ key, result }) => [key, result]));
  view.limits = snapshot.limits;
  view.folded = { ...snapshot.folded };
  view.alerts = new Map(snapshot.alerts.map((alert) => [alert.alert_id, alert]));
  view.runs = new Map(snapshot.runs.map((run) => [run.run_id, run]));
  view.rejected = new Map(snapshot.rejected.map((record) => [rejectedId(record.kind, record.key), record]));
  showStatus(snapshot.status);
  schedule("metrics");
  schedule("alerts");
});
events.addEventListener("result", (event) => {
  const { key, result } = JSON.parse(event.data);
  view.rejected.delete(rejectedId("result", key));
  if (result === null) view.results.delete(key);
  else view.results.set(key, result);
  schedule("metrics");
});
events.addEventListener("alert", (event) => {
  const { alert } = JSON.parse(event.data);
  view.rejected.delete(rejectedId("alert", alert.alert_id));
  view.alerts.set(alert.alert_id, alert);
  view.fresh.add(alert.alert_id);
  trimOldest(view.alerts, view.limits.maxAlerts, (id) => {
    view.fresh.delete(id);
    view.folded.alerts += 1;
  });
  schedule("alerts");
});
events.addEventListener("run", (event) => {
  const { run } = JSON.parse(event.data);
  view.rejected.delete(rejectedId("run", run.run_id));
  view.runs.delete(run.run_id);
  view.runs.set(run.run_id, run);
  trimOldest(view.runs, view.limits.maxRuns, () => (view.folded.runs += 1));
  schedule("alerts");
});
events.addEventListener("rejected", (event) => {
  const { record } = JSON.parse(event.data);
  view.rejected.set(rejectedId(record.kind, record.key), record);
  if (record.kind === "result") {
    view.results.delete(record.key);
    schedule("metrics");
  } else schedule("alerts");
});
events.addEventListener("status", (event) => showStatus(JSON.parse(event.data).status));

document.getElementById("metrics").addEventListener("click", (event) => {
  const row = event.target.closest("tr[data-key]");
  if (row !== null) void openLineage(row.getAttribute("data-key"));
});
document.getElementById("lineage-close").addEventListener("click", () => document.getElementById("lineage").close());
