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
  /** 1 when the call itself changed state (an attempted change that failed is not one). */
  changed: number[];
  /** The operation the call attempted (tool + target: operationIdentity); 0 for none. */
  operations: number[];
  /** The loop episode currently alerted, if any: a new alert needs a new episode. */
  openCycle: { cycleLength: number; seqFrom: number; lastSeq: number } | null;
  /** [action, last seq] of failing streaks already alerted (bounded). */
  openFailures: [number, number][];
  /** [operation, last seq] of failing operation streaks already alerted (bounded). */
  openOperations: [number, number][];
}

const MAX_OPEN_FAILURES = 16;

export function emptyLoopState(): LoopState {
  const rings = { seqs: [], actions: [], errors: [], digests: [], epochs: [], changed: [], operations: [] };
  return { ...rings, openCycle: null, openFailures: [], openOperations: [] };
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
  /** The attempted operation (operationIdentity), 0 when the call attempts no state change. */
  readonly operation: number;
  /** The operation is a file tool's edit (its error echoes its input), not a shell command. */
  readonly operationEdits: boolean;
}

export function observeToolCall(
  state: LoopState,
  call: ToolCallObservation,
  config: TripwireConfig["loop"],
): TripwireAlert[] {
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
          evidence: {
            seq_from: cycle.seqFrom,
            seq_to: cycle.seqTo,
            repetitions: cycle.repetitions,
            cycle_length: cycle.cycleLength,
          },
          message: `agent is looping: a cycle of ${cycle.cycleLength} action(s) repeated ${cycle.repetitions} times (seq ${cycle.seqFrom}..${cycle.seqTo})`,
        }),
      );
    }
  }
  alerts.push(...observeFailure(state, call, config));
  alerts.push(...observeFailingOperation(state, call, config));
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
    state.operations.push(call.operation);
    return;
  }
  state.seqs.splice(index, 0, call.seq);
  state.actions.splice(index, 0, call.action);
  state.errors.splice(index, 0, call.failed ? 1 : 0);
  state.digests.splice(index, 0, call.digest);
  state.epochs.splice(index, 0, call.epochAfter);
  state.changed.splice(index, 0, call.changed ? 1 : 0);
  state.operations.splice(index, 0, call.operation);
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
    state.operations.shift();
    return;
  }
  state.seqs.splice(0, excess);
  state.actions.splice(0, excess);
  state.errors.splice(0, excess);
  state.digests.splice(0, excess);
  state.epochs.splice(0, excess);
  state.changed.splice(0, excess);
  state.operations.splice(0, excess);
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
    for (
      let index = count - 1;
      index - length >= 0 &&
      actions[index] === actions[index - length] &&
      sameAnswer(digests[index] ?? 0, digests[index - length] ?? 0);
      index--
    )
      matched++;
    const repetitions = Math.floor((matched + length) / length);
    if (repetitions >= config.minRepetitions) {
      return {
        cycleLength: length,
        repetitions,
        seqFrom: state.seqs[count - matched - length] ?? 0,
        seqTo: state.seqs[count - 1] ?? 0,
      };
    }
  }
  return undefined;
}

/** Two observation digests (53-bit hashes, 0 = none reported) that do not show new content. */
function sameAnswer(newer: number, older: number): boolean {
  return newer === older || newer === 0 || older === 0;
}

/** A run of failures of one action or one operation, newest last, as the ring shows it now. */
export interface FailureStreak {
  /** Failures in the streak (0 when the newest call of it succeeded or it never ran). */
  readonly failures: number;
  /** Distinct actions (inputs) among them. */
  readonly distinctActions: number;
  readonly seqFrom: number;
  readonly seqTo: number;
  /** The run's state epoch after the newest failure: a later epoch means progress since. */
  readonly epochTo: number;
}

/**
 * When an earlier failure joins the streak of the one after it:
 * - `alike`: the same observation digest, or no successful state change in between (an action);
 * - `unchanged`: no successful state change in between (an edit: its error echoes its input, so
 *   the digest cannot show that it failed the same way);
 * - `unchanged-same-error`: both (a shell operation, whose output does not echo its input).
 */
export type StreakLink = "alike" | "unchanged" | "unchanged-same-error";

const NO_STREAK: FailureStreak = { failures: 0, distinctActions: 0, seqFrom: 0, seqTo: 0, epochTo: 0 };

/**
 * The current failing streak of an action (`key = "actions"`) or an operation (`"operations"`):
 * walking back from the newest call with that key, each earlier failure joins while `link` holds
 * between it and the one after it; a success of the same key ends it. This is also what the
 * Claude Code hook asks before it lets an action run again ("has this failed the same way N
 * times in this session?").
 */
export function failureStreak(
  state: LoopState,
  key: "actions" | "operations",
  value: number,
  link: StreakLink,
): FailureStreak {
  const keys = state[key];
  let failures = 0;
  let seqFrom = 0;
  let seqTo = 0;
  let epochTo = 0;
  let newer = -1;
  const actions = new Set<number>();
  for (let index = state.seqs.length - 1; index >= 0; index--) {
    if (keys[index] !== value) continue;
    if (state.errors[index] !== 1) break; // a success ends the streak
    if (newer !== -1 && !linked(state, index, newer, link)) break; // progress between the two
    failures++;
    seqFrom = state.seqs[index] ?? seqFrom;
    if (newer === -1) {
      seqTo = seqFrom;
      epochTo = state.epochs[index] ?? 0;
    }
    actions.add(state.actions[index] ?? 0);
    newer = index;
  }
  return failures === 0 ? NO_STREAK : { failures, distinctActions: actions.size, seqFrom, seqTo, epochTo };
}

/**
 * Same action failing again and again without progress, not necessarily back to back. A
 * different error after a successful state change (the normal debug loop: edit, re-run, a new
 * error) is progress and ends the streak; a success ends it too.
 */
function observeFailure(state: LoopState, call: ToolCallObservation, config: TripwireConfig["loop"]): TripwireAlert[] {
  const streak = failureStreak(state, "actions", call.action, "alike");
  if (!openStreak(state.openFailures, call, call.action, streak, config.failingStepRepeats)) return [];
  const rule = RUN_RULES["loop-failing-step"];
  return [
    makeAlert(rule, {
      run_id: call.runId,
      event_time: call.eventTime,
      evidence: {
        seq_from: streak.seqFrom,
        seq_to: streak.seqTo,
        repetitions: streak.failures,
        detail: `tool ${call.tool}`,
      },
      message:
        `the same ${call.tool} call failed ${streak.failures} times (seq ${streak.seqFrom}..${streak.seqTo}) ` +
        "without progress: the same error, or nothing changed in between",
    }),
  ];
}

/**
 * One operation (tool + target file, or a shell command's program and first operand) failing
 * again and again while the agent varies its input and nothing else succeeds: a rejected edit
 * resubmitted with small changes, a patch that does not apply. A streak made of one input is
 * loop-failing-step's.
 */
function observeFailingOperation(
  state: LoopState,
  call: ToolCallObservation,
  config: TripwireConfig["loop"],
): TripwireAlert[] {
  if (call.operation === 0) return [];
  const link = call.operationEdits ? "unchanged" : "unchanged-same-error";
  const streak = failureStreak(state, "operations", call.operation, link);
  const varied = streak.distinctActions >= 2 ? streak : { ...streak, failures: Math.min(streak.failures, 1) };
  if (!openStreak(state.openOperations, call, call.operation, varied, config.failingOperationRepeats)) return [];
  const rule = RUN_RULES["loop-failing-operation"];
  return [
    makeAlert(rule, {
      run_id: call.runId,
      event_time: call.eventTime,
      evidence: {
        seq_from: streak.seqFrom,
        seq_to: streak.seqTo,
        repetitions: streak.failures,
        detail: `tool ${call.tool}, ${streak.distinctActions} different inputs`,
      },
      message:
        `the same ${call.tool} operation failed ${streak.failures} times with ${streak.distinctActions} ` +
        `different inputs (seq ${streak.seqFrom}..${streak.seqTo}) without progress`,
    }),
  ];
}

/**
 * Episode bookkeeping shared by both failing rules: true when this streak is new and reaches the
 * threshold (alert), false while an alerted streak goes on. A success, or progress that leaves at
 * most one failure, ends the episode, so a later stuck streak alerts again.
 */
function openStreak(
  open: [number, number][],
  call: ToolCallObservation,
  key: number,
  streak: FailureStreak,
  threshold: number,
): boolean {
  const openIndex = open.findIndex(([value]) => value === key);
  if (!call.failed || streak.failures < threshold) {
    if (openIndex !== -1 && (!call.failed || streak.failures <= 1)) open.splice(openIndex, 1);
    return false;
  }
  const episode = openIndex === -1 ? undefined : open[openIndex];
  if (episode !== undefined) {
    episode[1] = Math.max(episode[1], call.seq);
    return false;
  }
  open.push([key, call.seq]);
  if (open.length > MAX_OPEN_FAILURES) open.shift();
  return true;
}

/** Whether two failures (older, newer ring indexes) belong to one streak (StreakLink). */
function linked(state: LoopState, older: number, newer: number, link: StreakLink): boolean {
  const digest = state.digests[older] ?? 0;
  const sameError = digest !== 0 && digest === state.digests[newer];
  const newerEpochBefore = (state.epochs[newer] ?? 0) - (state.changed[newer] ?? 0);
  const unchanged = newerEpochBefore === state.epochs[older];
  if (link === "alike") return sameError || unchanged;
  return unchanged && (link === "unchanged" || sameError);
}
