// The cells of one result row: each a field of the record as published, formatted for reading.
import { el } from "./dom.js";
import { formatInstant } from "./format.js";

export const STATUS_TEXT = {
  PUBLISHED: "published",
  BELOW_MINIMUM_SAMPLE: "below minimum sample",
  NOT_AVAILABLE: "N/A",
};

export function scopeNode(scope) {
  if (scope.kind === "snapshot")
    return el(
      "td",
      { class: "scope" },
      `snapshot ${scope.snapshot_id}`,
      el("br"),
      el("span", { class: "muted" }, `cutoff ${formatInstant(scope.cutoff)}`),
    );
  return el(
    "td",
    { class: "scope" },
    formatInstant(scope.start),
    el("br"),
    el("span", { class: "muted" }, `→ ${formatInstant(scope.end)}`),
  );
}

export function cohortNode(cohort) {
  const entries = Object.entries(cohort);
  if (entries.length === 0) return el("td", { class: "cohort why" }, "no cohort");
  return el(
    "td",
    { class: "cohort" },
    entries.map(([key, value]) => el("span", {}, el("b", {}, `${key} `), value)),
  );
}

/** A number as the CLI prints it: integers whole, fractions to 4 places; the exact value in the title. */
function numberText(value) {
  return Number.isInteger(value) ? String(value) : value.toFixed(4);
}

export function valueNode(result) {
  if (result.status === "BELOW_MINIMUM_SAMPLE")
    return el(
      "td",
      { class: "why", "data-status": result.status },
      `below minimum sample: ${result.eligible_units} of ${result.minimum_sample} eligible units`,
    );
  if (result.value === null) return el("td", { class: "why", "data-status": result.status }, result.na_reason ?? "N/A");
  if (typeof result.value === "number") {
    const currency = result.measures?.currency;
    const unit = currency ? ` ${currency} minor units` : "";
    return el(
      "td",
      { class: "num value", title: JSON.stringify(result.value), "data-value": JSON.stringify(result.value) },
      `${numberText(result.value)}${unit}`,
    );
  }
  return el(
    "td",
    { class: "value", "data-value": JSON.stringify(result.value) },
    Object.entries(result.value).map(([category, share]) =>
      el("span", { class: "category", title: String(share) }, `${category} ${share.toFixed(3)} `),
    ),
  );
}

export function coverageNode(coverage) {
  // The bar's length is the record's own raw_ratio; a ratio of null (no population) has no bar.
  const ratio = coverage.raw_ratio;
  const bar = el(
    "span",
    { class: `bar${coverage.alert ? " alert" : ""}` },
    ratio === null ? null : el("i", { style: `width:${(ratio * 100).toFixed(1)}%` }),
  );
  return el(
    "td",
    { class: "coverage" },
    bar,
    el("span", { class: "fraction" }, `${coverage.numerator}/${coverage.denominator}`),
    " ",
    el("span", { class: `badge ${coverage.state}` }, coverage.state),
    coverage.alert
      ? [
          " ",
          el("span", { class: "badge low", title: `coverage below ${coverage.threshold_hundredths}%` }, "LOW_COVERAGE"),
        ]
      : null,
  );
}
