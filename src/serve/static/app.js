// The live view. It shows the records the server streams — result records, tripwire alerts and
// run-state summaries — as they were published: every figure on the page is a field of a record,
// formatted for reading; no metric is computed here.
import { renderAlerts } from "./alerts.js";
import { openLineage } from "./lineage.js";
import { renderMetrics } from "./metrics-table.js";
import { renderTrends } from "./trends.js";

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
      renderMetrics(view);
      renderTrends(view.results);
    }
    if (parts.has("alerts")) renderAlerts(view);
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
