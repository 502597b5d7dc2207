import type { MetricId } from "./metric-ids.ts";

/**
 * The minimum_sample of each metric as the seed's §5 table declares it. The validator compares the
 * catalog file against this table so that an edit of the file cannot silently change a
 * seed-frozen minimum; the rest of the project reads minimum samples from the file, never from here.
 */
export const SEED_MINIMUM_SAMPLES: Readonly<Record<MetricId, number>> = {
  "role-template-rework-rate": 20,
  "role-template-trajectory-partial-cost": 20,
  "role-model-task-outcome-rate": 20,
  "packet-rework-rate": 1,
  "operational-latency-ms": 1,
  "trajectory-partial-cost": 20,
  "task-cohort-comparison-eligibility": 20,
  "delivery-stage-reach": 1,
  "delivery-terminal-outcome-rate": 1,
  "delivery-cycle-time-ms": 1,
  "operational-token-usage": 1,
  "operational-attributable-cost": 1,
  "operational-usage-availability": 1,
  "direct-evidence-basis-rate": 1,
};
