// Trend charts of the window metrics (uPlot, loaded by the page as a global): the published values
// over window starts, drawn as they are.
import { el } from "./dom.js";
import { instantMillis } from "./format.js";
import { byMetric } from "./metrics-table.js";

const charts = [];

/** Axis labels only (the values themselves are in the metrics table): 3835953 → 3.8M. */
function compactNumber(value) {
  return new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 2 }).format(value);
}

/** One chart per (window metric, cohort): x = window start, one series per value (or category). */
export function renderTrends(results) {
  for (const chart of charts.splice(0)) chart.destroy();
  const container = document.getElementById("trends");
  const sections = [];
  for (const [metricId, entries] of byMetric(results)) {
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
