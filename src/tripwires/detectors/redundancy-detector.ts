import { makeAlert, type TripwireAlert } from "../alert.ts";
import type { TripwireConfig } from "../config.ts";
import { RUN_RULES } from "../rules/run-rules.ts";

/**
 * A tool call is redundant when the same action (tool + canonical input) returns the same
 * observation digest as its previous run, with no state-changing sandbox event in between.
 * "In between" is judged in arrival order through a state epoch: every state-changing sandbox
 * event bumps the epoch, and an observation only matches one remembered in the same epoch.
 */
export interface RedundancyState {
  /** Bumped by every state-changing sandbox event. */
  epoch: number;
  /** Last observation per action, oldest first (bounded LRU): parallel arrays. */
  observedActions: number[];
  observedDigests: number[];
  observedEpochs: number[];
  /** Recent tool calls: seq and 1 when redundant. */
  windowSeqs: number[];
  windowFlags: number[];
  toolCallsSeen: number;
  redundantSteps: number;
  episodeOpen: boolean;
}

export function emptyRedundancyState(): RedundancyState {
  return {
    epoch: 0,
    observedActions: [],
    observedDigests: [],
    observedEpochs: [],
    windowSeqs: [],
    windowFlags: [],
    toolCallsSeen: 0,
    redundantSteps: 0,
    episodeOpen: false,
  };
}

export function observeStateChange(state: RedundancyState): void {
  state.epoch++;
}

export interface RedundancyObservation {
  readonly runId: string;
  readonly seq: number;
  readonly eventTime: number;
  readonly action: number;
  /** undefined when the step reported no observation digest: it can never be redundant. */
  readonly digest: number | undefined;
}

export function observeToolResult(
  state: RedundancyState,
  step: RedundancyObservation,
  config: TripwireConfig["redundancy"],
): TripwireAlert[] {
  const redundant =
    step.digest !== undefined && rememberObservation(state, step.action, step.digest, config.observationMemory);
  state.toolCallsSeen++;
  if (redundant) state.redundantSteps++;
  state.windowSeqs.push(step.seq);
  state.windowFlags.push(redundant ? 1 : 0);
  if (state.windowSeqs.length > config.window) {
    state.windowSeqs.shift();
    state.windowFlags.shift();
  }
  const { count, share, steps } = windowFigures(state);
  const shareJudged = steps >= config.minStepsForShare;
  const over = count >= config.minRedundantSteps || (shareJudged && share >= config.minShare);
  if (state.episodeOpen) {
    // Hysteresis: an episode ends only well below the thresholds, so a run hovering at the
    // threshold does not raise an alert on every other step.
    if (count <= config.minRedundantSteps / 2 && share < config.minShare / 2) state.episodeOpen = false;
    return [];
  }
  if (!over || !redundant) return [];
  state.episodeOpen = true;
  const firstRedundant = state.windowFlags.indexOf(1);
  const seqFrom = state.windowSeqs[firstRedundant] ?? step.seq;
  const rule = RUN_RULES["redundant-steps"];
  const percent = Math.round(share * 100);
  return [
    makeAlert(rule, {
      run_id: step.runId,
      event_time: step.eventTime,
      evidence: {
        seq_from: seqFrom,
        seq_to: step.seq,
        repetitions: count,
        detail: `${count} of the last ${steps} tool calls redundant (${percent}%)`,
      },
      message: `agent is repeating itself: ${count} of its last ${steps} tool calls returned an observation it already had (${percent}%)`,
    }),
  ];
}

/** Returns true when the action's last observation (same state epoch) had this digest. */
function rememberObservation(state: RedundancyState, action: number, digest: number, memory: number): boolean {
  const last = state.observedActions.length - 1;
  if (last >= 0 && state.observedActions[last] === action) {
    // Same action as the most recent one: update in place, it is already the newest entry.
    const redundant = state.observedDigests[last] === digest && state.observedEpochs[last] === state.epoch;
    state.observedDigests[last] = digest;
    state.observedEpochs[last] = state.epoch;
    return redundant;
  }
  const index = state.observedActions.lastIndexOf(action);
  let redundant = false;
  if (index !== -1) {
    redundant = state.observedDigests[index] === digest && state.observedEpochs[index] === state.epoch;
    state.observedActions.splice(index, 1);
    state.observedDigests.splice(index, 1);
    state.observedEpochs.splice(index, 1);
  }
  state.observedActions.push(action);
  state.observedDigests.push(digest);
  state.observedEpochs.push(state.epoch);
  if (state.observedActions.length > memory) {
    state.observedActions.shift();
    state.observedDigests.shift();
    state.observedEpochs.shift();
  }
  return redundant;
}

export function windowFigures(state: RedundancyState): { count: number; share: number; steps: number } {
  const steps = state.windowFlags.length;
  let count = 0;
  for (const flag of state.windowFlags) count += flag;
  return { count, share: steps === 0 ? 0 : count / steps, steps };
}
