/**
 * The identities of the 14 metrics of Metric Catalog 1.0.0 (seed §5), in the seed's order. This is
 * the one place the code names them: the engine switches on them, and the validator checks that
 * the catalog file declares exactly this set. Everything else about a metric is read from the file.
 */
export const METRIC_IDS = [
  "role-template-rework-rate",
  "role-template-trajectory-partial-cost",
  "role-model-task-outcome-rate",
  "packet-rework-rate",
  "operational-latency-ms",
  "trajectory-partial-cost",
  "task-cohort-comparison-eligibility",
  "delivery-stage-reach",
  "delivery-terminal-outcome-rate",
  "delivery-cycle-time-ms",
  "operational-token-usage",
  "operational-attributable-cost",
  "operational-usage-availability",
  "direct-evidence-basis-rate",
] as const;

export type MetricId = (typeof METRIC_IDS)[number];

export function isMetricId(value: unknown): value is MetricId {
  return typeof value === "string" && (METRIC_IDS as readonly string[]).includes(value);
}
