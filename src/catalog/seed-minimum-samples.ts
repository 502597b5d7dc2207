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

/**
 * The value kind and unit of each metric as the seed's §5 table declares them ("kind / unit"). A
 * catalog revision may not change what a metric's value is (VERSION_POLICY.md), so the validator
 * holds the seed's table and compares.
 */
export const SEED_VALUE_SEMANTICS: Readonly<Record<MetricId, { readonly kind: string; readonly unit: string }>> = {
  "role-template-rework-rate": { kind: "rate", unit: "ratio" },
  "role-template-trajectory-partial-cost": { kind: "money", unit: "source currency" },
  "role-model-task-outcome-rate": { kind: "rate", unit: "ratio" },
  "packet-rework-rate": { kind: "rate", unit: "ratio" },
  "operational-latency-ms": { kind: "duration", unit: "milliseconds" },
  "trajectory-partial-cost": { kind: "money", unit: "source currency" },
  "task-cohort-comparison-eligibility": { kind: "rate", unit: "ratio" },
  "delivery-stage-reach": { kind: "rate", unit: "ratio" },
  "delivery-terminal-outcome-rate": { kind: "rate", unit: "ratio" },
  "delivery-cycle-time-ms": { kind: "duration", unit: "milliseconds" },
  "operational-token-usage": { kind: "quantity", unit: "tokens" },
  "operational-attributable-cost": { kind: "money", unit: "source currency" },
  "operational-usage-availability": { kind: "rate", unit: "ratio" },
  "direct-evidence-basis-rate": { kind: "rate", unit: "ratio" },
};
