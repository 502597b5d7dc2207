import type { MetricId } from "../catalog/metric-definitions.ts";

/**
 * How a metric's value is formed from its group sums (seed §5). Kind, unit, version and N/A text
 * come from the catalog; only the formula's shape is code.
 * - ratio: units meeting the condition / eligible units
 * - per-category: one numerator per category (outcome, stage) over one eligible denominator
 * - mean-duration: Σ duration / contributing units, with the contributing count
 * - sum: Σ reported quantity (tokens), with the contributing count; never a synthesised total
 * - money: Σ minor units per exact (currency, source, cost_basis) slice
 */
export type FormulaShape = "ratio" | "per-category" | "mean-duration" | "sum" | "money";

export const FORMULA_SHAPES: Readonly<Record<MetricId, FormulaShape>> = {
  "role-template-rework-rate": "ratio",
  "role-template-trajectory-partial-cost": "money",
  "role-model-task-outcome-rate": "per-category",
  "packet-rework-rate": "ratio",
  "operational-latency-ms": "mean-duration",
  "trajectory-partial-cost": "money",
  "task-cohort-comparison-eligibility": "ratio",
  "delivery-stage-reach": "per-category",
  "delivery-terminal-outcome-rate": "per-category",
  "delivery-cycle-time-ms": "mean-duration",
  "operational-token-usage": "sum",
  "operational-attributable-cost": "money",
  "operational-usage-availability": "ratio",
  "direct-evidence-basis-rate": "ratio",
};
