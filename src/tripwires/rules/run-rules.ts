import type { Severity } from "./destructive-rules.ts";

/** Loop and redundancy rules as data, like the destructive ones. */
export interface RunRule {
  readonly id: RunRuleId;
  readonly version: number;
  readonly kind: "LOOP" | "REDUNDANCY";
  readonly severity: Severity;
  readonly description: string;
}

export type RunRuleId = "loop-cycle" | "loop-failing-step" | "redundant-steps";

export const RUN_RULES: Readonly<Record<RunRuleId, RunRule>> = {
  "loop-cycle": {
    id: "loop-cycle",
    version: 1,
    kind: "LOOP",
    severity: "warning",
    description: "The last tool calls (by seq) are a cycle of 1..8 actions (tool + canonical input) repeated at least 3 times back to back. One alert per loop episode.",
  },
  "loop-failing-step": {
    id: "loop-failing-step",
    version: 1,
    kind: "LOOP",
    severity: "warning",
    description: "The same action ended in error at least 3 times within the action window with no successful run of it in between. One alert per failing streak.",
  },
  "redundant-steps": {
    id: "redundant-steps",
    version: 1,
    kind: "REDUNDANCY",
    severity: "warning",
    description: "Redundant tool calls (same action, same observation digest, no state-changing sandbox event since) reach 5 in the last 20 tool calls, or 40% of them once 10 are there. One alert per episode; the episode ends when both fall to half the thresholds.",
  },
};
