import { makeAlert, type TripwireAlert } from "../alert.ts";
import type { TripwireConfig } from "../config.ts";
import { RUN_RULES } from "../rules/run-rules.ts";

/**
 * Loop detection over a seq-sorted ring of the run's last tool calls (parallel number arrays: the
 * state stays small and JSON-safe). Records may arrive out of seq order; a late tool call is
 * inserted at its seq position and the tail of the ring is judged again.
 */
export interface LoopState {
  seqs: number[];
  actions: number[];
  /** 1 when that tool call ended with status error (a "no match" exit is not an error here). */
  errors: number[];
  /** The call's observation digest as a 53-bit hash; 0 when it reported none. */
  digests: number[];
  /** The run's state epoch after the call (its own state change included). */
  epochs: number[];
  /** 1 when the call itself changed state. */
  changed: number[];
  /** The loop episode currently alerted, if any: a new alert needs a new episode. */
  openCycle: { cycleLength: number; seqFrom: number; lastSeq: number } | null;
  /** [action, last seq] of failing streaks already alerted (bounded). */
  openFailures: [number, number][];
}

const MAX_OPEN_FAILURES = 16;

export function emptyLoopState(): LoopState {
  return { seqs: [], actions: [], errors: [], digests: [], epochs: [], changed: [], openCycle: null, openFailures: [] };
}

export interface ToolCallObservation {
  readonly runId: string;
  readonly seq: number;
  readonly eventTime: number;
  readonly action: number;
  readonly tool: string;
  readonly failed: boolean;
  readonly digest: number;
  readonly epochAfter: number;
  readonly changed: boolean;
}

export function observeToolCall(state: LoopState, call: ToolCallObservation, config: TripwireConfig["loop"]): TripwireAlert[] {
  insertSorted(state, call);
  const alerts: TripwireAlert[] = [];
  const cycle = detectCycle(state, config);
  if (cycle === undefined) {
    state.openCycle = null;
  } else {
    const open = state.openCycle;
    const continuing = open !== null && open.cycleLength === cycle.cycleLength && cycle.seqFrom <= open.lastSeq;
    if (continuing) {
      open.lastSeq = cycle.seqTo;
    } else {
      state.openCycle = { cycleLength: cycle.cycleLength, seqFrom: cycle.seqFrom, lastSeq: cycle.seqTo };
      const rule = RUN_RULES["loop-cycle"];
      alerts.push(
        makeAlert(rule, {
          run_id: call.runId,
          event_time: call.eventTime,
          evidence: { seq_from: cycle.seqFrom, seq_to: cycle.seqTo, repetitions: cycle.repetitions, cycle_length: cycle.cycleLength },
          message: `agent is looping: a cycle of ${cycle.cycleLength} action(s) repeated ${cycle.repetitions} times (seq ${cycle.seqFrom}..${cycle.seqTo})`,
        }),
      );
    }
  }
  alerts.push(...observeFailure(state, call, config));
  return alerts;
}

function insertSorted(state: LoopState, call: ToolCallObservation): void {
  let index = state.seqs.length;
  while (index > 0 && (state.seqs[index - 1] ?? 0) > call.seq) index--;
  if (index === state.seqs.length) {
    // The common case (in-order arrival): append without splice.
    state.seqs.push(call.seq);
    state.actions.push(call.action);
    state.errors.push(call.failed ? 1 : 0);
    state.digests.push(call.digest);
    state.epochs.push(call.epochAfter);
    state.changed.push(call.changed ? 1 : 0);
    return;
  }
  state.seqs.splice(index, 0, call.seq);
  state.actions.splice(index, 0, call.action);
  state.errors.splice(index, 0, call.failed ? 1 : 0);
  state.digests.splice(index, 0, call.digest);
  state.epochs.splice(index, 0, call.epochAfter);
  state.changed.splice(index, 0, call.changed ? 1 : 0);
}

export function trimLoopWindow(state: LoopState, window: number): void {
  const excess = state.seqs.length - window;
  if (excess <= 0) return;
  if (excess === 1) {
    state.seqs.shift();
    state.actions.shift();
    state.errors.shift();
    state.digests.shift();
    state.epochs.shift();
    state.changed.shift();
    return;
  }
  state.seqs.splice(0, excess);
  state.actions.splice(0, excess);
  state.errors.splice(0, excess);
  state.digests.splice(0, excess);
  state.epochs.splice(0, excess);
  state.changed.splice(0, excess);
}

interface Cycle {
  cycleLength: number;
  repetitions: number;
  seqFrom: number;
  seqTo: number;
}

/**
 * The shortest cycle length whose back-to-back repetitions at the tail reach the threshold. A
 * repetition must also answer as before: the same action with a new observation (paging through
 * a file with `scroll_down`, polling a job) is reading new content, not a loop. A call without a
 * digest matches on its action alone.
 */
function detectCycle(state: LoopState, config: TripwireConfig["loop"]): Cycle | undefined {
  const actions = state.actions;
  const digests = state.digests;
  const count = actions.length;
  for (let length = config.minCycleLength; length <= config.maxCycleLength; length++) {
    if (count < length * config.minRepetitions) break;
    // Length of the periodic tail beyond its first period: a[j] == a[j - length], answered alike.
    let matched = 0;
    for (let index = count - 1; index - length >= 0 && actions[index] === actions[index - length] && sameAnswer(digests[index] ?? 0, digests[index - length] ?? 0); index--) matched++;
    const repetitions = Math.floor((matched + length) / length);
    if (repetitions >= config.minRepetitions) {
      return { cycleLength: length, repetitions, seqFrom: state.seqs[count - matched - length] ?? 0, seqTo: state.seqs[count - 1] ?? 0 };
    }
  }
  return undefined;
}

/** Two observation digests (53-bit hashes, 0 = none reported) that do not show new content. */
function sameAnswer(newer: number, older: number): boolean {
  return newer === older || newer === 0 || older === 0;
}

/**
 * Same action failing again and again without progress, not necessarily back to back. Walking
 * back from the newest call of the action, each earlier failure joins the streak when it is like
 * the one after it: the same observation digest (it failed the same way), or no state-changing
 * action between the two (nothing was tried). A different error after a state change (the normal
 * debug loop: edit, re-run, a new error) is progress and ends the streak; a success ends it too.
 */
function observeFailure(state: LoopState, call: ToolCallObservation, config: TripwireConfig["loop"]): TripwireAlert[] {
  const openIndex = state.openFailures.findIndex(([action]) => action === call.action);
  if (!call.failed) {
    if (openIndex !== -1) state.openFailures.splice(openIndex, 1);
    return [];
  }
  let failures = 0;
  let seqFrom = call.seq;
  let seqTo: number | undefined;
  let newer = -1;
  for (let index = state.seqs.length - 1; index >= 0; index--) {
    if (state.actions[index] !== call.action) continue;
    if (state.errors[index] !== 1) break; // a success of the same action ends the streak
    if (newer !== -1 && !failedAlike(state, index, newer)) break; // progress between the two
    failures++;
    seqFrom = state.seqs[index] ?? seqFrom;
    seqTo ??= seqFrom;
    newer = index;
  }
  if (failures < config.failingStepRepeats) {
    // Progress ended an alerted streak: a later one is a new episode with its own alert.
    if (openIndex !== -1 && failures <= 1) state.openFailures.splice(openIndex, 1);
    return [];
  }
  const open = openIndex === -1 ? undefined : state.openFailures[openIndex];
  if (open !== undefined) {
    open[1] = Math.max(open[1], call.seq);
    return [];
  }
  state.openFailures.push([call.action, call.seq]);
  if (state.openFailures.length > MAX_OPEN_FAILURES) state.openFailures.shift();
  const rule = RUN_RULES["loop-failing-step"];
  return [
    makeAlert(rule, {
      run_id: call.runId,
      event_time: call.eventTime,
      evidence: { seq_from: seqFrom, seq_to: seqTo ?? call.seq, repetitions: failures, detail: `tool ${call.tool}` },
      message: `the same ${call.tool} call failed ${failures} times (seq ${seqFrom}..${seqTo ?? call.seq}) without progress: the same error, or nothing changed in between`,
    }),
  ];
}

/** Two failures of one action (older, newer ring indexes) with no progress between them. */
function failedAlike(state: LoopState, older: number, newer: number): boolean {
  const digest = state.digests[older] ?? 0;
  if (digest !== 0 && digest === state.digests[newer]) return true;
  const newerEpochBefore = (state.epochs[newer] ?? 0) - (state.changed[newer] ?? 0);
  return newerEpochBefore === state.epochs[older];
}
