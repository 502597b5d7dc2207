/** Public surface of the run monitor (pure core). See docs/tripwires.md. */
export {
  createRunMonitor,
  inMemoryRunStates,
  type RunMonitor,
  type MonitorResult,
  type RunStateStore,
} from "./monitor.ts";
export { stepRun } from "./run-step.ts";
export { emptyRunState, summariseRun, type RunState, type RunStateSummary } from "./run-state.ts";
export { restoreRunState, serializeRunState } from "./run-state-changelog.ts";
export { parseTripwireConfig, tripwireConfigSchema, type TripwireConfig, type TripwireConfigInput } from "./config.ts";
export { alertId, compareAlerts, type TripwireAlert, type AlertEvidence } from "./alert.ts";
export { createCommandAnalyser, type CommandAnalyser } from "./commands/command-analyser.ts";
export type { CommandAnalysis, DestructiveFinding } from "./commands/command-analysis.ts";
export { DESTRUCTIVE_RULES, destructiveRule } from "./rules/destructive-rules.ts";
export {
  DESTRUCTIVE_RULE_IDS,
  type DestructiveRule,
  type DestructiveRuleId,
  type Severity,
} from "./rules/rule-definition.ts";
export { RUN_RULES, type RunRule, type RunRuleId } from "./rules/run-rules.ts";
