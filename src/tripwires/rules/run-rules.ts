import type { Severity } from "./rule-definition.ts";

/** Loop and redundancy rules as data, like the destructive ones. */
export interface RunRule {
  readonly id: RunRuleId;
  readonly version: number;
  readonly kind: "LOOP" | "REDUNDANCY";
  readonly severity: Severity;
  readonly description: string;
}

export type RunRuleId =
  "loop-cycle" | "loop-failing-step" | "loop-failing-operation" | "loop-repeated-message" | "redundant-steps";

export const RUN_RULES: Readonly<Record<RunRuleId, RunRule>> = {
  "loop-cycle": {
    id: "loop-cycle",
    version: 1,
    kind: "LOOP",
    severity: "warning",
    description:
      "The last tool calls (by seq) are a cycle of 1..8 actions (tool + canonical input) repeated at least 3 times back to back. One alert per loop episode.",
  },
  "loop-failing-step": {
    id: "loop-failing-step",
    version: 3,
    kind: "LOOP",
    severity: "warning",
    description:
      "The same action (tool + canonical input) failed at least 3 times in a row without succeeding in between, " +
      "each failure like the one before it: the same observation digest (failing the same way), or no successful " +
      "state change in between (nothing was tried that worked; a rejected edit is no progress). A failure after " +
      "an edit that changes the error is progress and restarts the count; a non-zero exit that only means no " +
      "match (grep, test, diff) is not a failure. One alert per failing streak.",
  },
  "loop-failing-operation": {
    id: "loop-failing-operation",
    version: 1,
    kind: "LOOP",
    severity: "warning",
    description:
      "One state-changing operation (the same tool on the same target file, or the same shell program and first " +
      "operand) failed at least 4 times in a row with at least two different inputs and no successful state " +
      "change in between (for a shell operation also with the same observation digest): an edit rejected again " +
      "and again with small variations, a patch that does not apply. One alert per failing streak.",
  },
  "loop-repeated-message": {
    id: "loop-repeated-message",
    version: 1,
    kind: "LOOP",
    severity: "warning",
    description:
      "The same message (observation digest), from the agent or the harness, at least 4 times with no tool call in between: stuck answering instead of acting (e.g. repeated format errors). One alert per streak; a tool call ends it.",
  },
  "redundant-steps": {
    id: "redundant-steps",
    version: 1,
    kind: "REDUNDANCY",
    severity: "warning",
    description:
      "Redundant tool calls (same action, same observation digest, no state-changing sandbox event since) reach 5 in the last 20 tool calls, or 40% of them once 10 are there. One alert per episode; the episode ends when both fall to half the thresholds.",
  },
};
