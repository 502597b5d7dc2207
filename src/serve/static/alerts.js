// Tripwire alerts grouped by run, with each run's state summary, and the alert and run-state
// records the server could not show.
import { el } from "./dom.js";
import { formatInstant } from "./format.js";

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
export function renderAlerts(view) {
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
    ...[rejectedEventsNode(view.rejected)].filter((node) => node !== null),
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
function rejectedEventsNode(rejected) {
  const records = [...rejected.values()].filter((record) => record.kind !== "result");
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
