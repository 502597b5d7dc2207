/**
 * How often each irregularity appears. Mostly clean data: each anomaly is a few percent, so every
 * rule of the engine is exercised while the ordinary path dominates, as it does in production.
 * Probabilities are per entity named in the key.
 */
export const ANOMALY_MIX = {
  // Tasks and their declaration in a snapshot.
  taskMembers: [
    [1, 0.6],
    [2, 0.3],
    [3, 0.1],
  ] as const,
  taskOutcome: [
    ["SUCCEEDED", 0.8],
    ["FAILED", 0.11],
    ["CANCELLED", 0.05],
    ["INFRASTRUCTURE_FAILURE", 0.04],
  ] as const,
  /** Of tasks with two or more members: one member ends differently. */
  mixedOutcomes: 0.08,
  requirementChanged: 0.03,
  missingTaskId: 0.015,
  missingMembers: 0.01,
  emptyMembers: 0.01,
  missingRoleTemplate: 0.02,
  backfilledTemplate: 0.03,

  // Deliveries.
  openOnly: 0.02,
  noSummary: 0.01,
  /** Ends after the snapshot cutoff: open at every cutoff of its batch. */
  longRunning: 0.015,
  secondTerminal: 0.02,
  missingElapsed: 0.04,
  missingStage: 0.04,
  /** Every call of the Delivery lacks its runtime (a legacy runner): the task has no complete tuple. */
  legacyRunner: 0.015,
  deliveryCost: 0.3,

  // Calls.
  judgeCall: 0.2,
  incompleteTuple: 0.025,
  missingSpan: 0.03,
  missingTokens: 0.02,
  usageSource: [
    ["PROVIDER", 0.85],
    ["HOST", 0.08],
    ["NONE", 0.02],
    [undefined, 0.05],
  ] as const,
  callWithoutCost: 0.06,

  // Costs.
  costSource: [
    ["PROVIDER", 0.85],
    ["HOST", 0.1],
    ["ESTIMATE", 0.05],
  ] as const,
  /** A PROVIDER/HOST cost flagged estimated (not eligible money). */
  estimatedFlag: 0.01,
  costAttribution: [
    ["PROJECT", 0.94],
    ["SHARED", 0.04],
    ["UNATTRIBUTED", 0.02],
  ] as const,
  /** Of PROVIDER costs from the USD writer: billed under a negotiated contract (a rarer slice). */
  contractBasis: 0.12,

  // Provenance of every fact.
  provenance: [
    ["DIRECT_PROVIDER", 0.5],
    ["DIRECT_HOST", 0.4],
    ["DERIVED", 0.03],
    ["ESTIMATED", 0.02],
    ["MANUAL", 0.01],
    ["NULL", 0.02],
    ["UNKNOWN", 0.02],
  ] as const,

  // Packets and repairs.
  packet: 0.85,
  unsupportedRevision: 0.05,
  repairUnavailable: 0.07,
  repaired: 0.25,
  attributableRepair: 0.85,

  // Agent runs.
  /** Deliveries whose agent run is monitored (steps and sandbox events reported). */
  monitoredRun: 0.35,
  loop: 0.03,
  redundantStep: 0.05,
  toolError: 0.05,
  /** Extra destructive runs beyond the three every batch carries. */
  destructive: 0.002,

  // The stream itself.
  redelivery: 0.01,
  /** Absent optionals written as an explicit null instead of being left out. */
  explicitNull: 0.3,
} as const;
