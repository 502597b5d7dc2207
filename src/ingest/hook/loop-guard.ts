import { canonicalJson } from "../../contract/canonical-json.ts";
import { observationDigest } from "../../contract/observation-digest.ts";
import { actionIdentity, hash53 } from "../../tripwires/action-identity.ts";
import type { TripwireConfig } from "../../tripwires/config.ts";
import {
  endsWithNoMatchCommand,
  operationIdentity,
  type AgentToolIntent,
} from "../../tripwires/detectors/agent-tool-intent.ts";
import {
  emptyLoopState,
  failureStreak,
  observeToolCall,
  trimLoopWindow,
} from "../../tripwires/detectors/loop-detector.ts";
import type { FailureStreak, LoopState } from "../../tripwires/detectors/loop-detector.ts";
import type { HookAnswer, HookSubject, HookVerdict, PreToolUseInput, ToolResultInput } from "./claude-code-hook.ts";
import type { LoopGuardMode } from "./hook-settings.ts";

/**
 * The hook's loop guard (`--loop-guard ask|deny`): the run monitor's loop state for one Claude
 * Code session, fed by the PostToolUse/PostToolUseFailure results, asked before each call whether
 * it repeats an operation that already failed the same way N times with nothing gained since. The
 * streaks are the loop detector's own (failureStreak), over the same action and operation
 * identities as loop-failing-step and loop-failing-operation.
 */
export interface SessionLoop {
  readonly loop: LoopState;
  /** Successful state changes so far: the progress clock of the loop detector's epochs. */
  epoch: number;
  /** Results observed so far: the seq of the loop detector's ring. */
  calls: number;
  /**
   * [tool_use_id hash, 1 if the judged call changes state] of calls whose result has not come yet:
   * a shell command's state change is known from its analysis, which the result does not repeat.
   */
  pending: [number, number][];
}

export function emptySessionLoop(): SessionLoop {
  return { loop: emptyLoopState(), epoch: 0, calls: 0, pending: [] };
}

/** Calls judged whose results are awaited, per session; older ones are forgotten first. */
export const MAX_PENDING = 64;

/** The identities of one tool call, as the run monitor derives them from its agent_step. */
interface CallIdentity {
  readonly action: number;
  /** The attempted operation (tool + target), 0 when the call attempts no state change. */
  readonly operation: number;
  /** A file tool's edit (its error echoes its input), not a shell command. */
  readonly edits: boolean;
  readonly changes: boolean;
}

function identityOf(input: PreToolUseInput, subject: HookSubject, changesState: boolean | undefined): CallIdentity {
  const action = actionIdentity(input.toolName, canonicalJson(input.toolInput));
  let intent: AgentToolIntent;
  let changes: boolean;
  if (subject.kind === "shell") {
    intent = { command: subject.command, path: undefined, editsFiles: false };
    // Unanalysed (undecided, or no PreToolUse seen): taken as a change, as the analyser does on failure.
    changes = changesState ?? true;
  } else if (subject.kind === "file-write") {
    intent = { command: undefined, path: subject.path, editsFiles: true };
    changes = true;
  } else {
    return { action, operation: 0, edits: false, changes: false };
  }
  return {
    action,
    operation: changes ? operationIdentity(input.toolName, intent) : 0,
    edits: subject.kind === "file-write",
    changes,
  };
}

/**
 * The failing streak this call would extend, when it has reached `threshold` and nothing changed
 * state successfully since its newest failure: first the operation's (varied inputs included),
 * then the action's (the very same input).
 */
export function repeatedFailure(
  session: SessionLoop,
  call: CallIdentity,
  threshold: number,
): FailureStreak | undefined {
  const streaks: FailureStreak[] = [];
  if (call.operation !== 0) {
    streaks.push(
      failureStreak(session.loop, "operations", call.operation, call.edits ? "unchanged" : "unchanged-same-error"),
    );
  }
  streaks.push(failureStreak(session.loop, "actions", call.action, "alike"));
  return streaks.find((streak) => streak.failures >= threshold && streak.epochTo === session.epoch);
}

export function loopReason(tool: string, streak: FailureStreak): string {
  const inputs = streak.distinctActions === 1 ? "the same input" : `${streak.distinctActions} different inputs`;
  return (
    `agentops loop guard: this ${tool} call repeats an operation that failed ${streak.failures} times in this session ` +
    `(${inputs}, the same error or nothing changed in between) and nothing has succeeded since. ` +
    "Do not retry it as is: read the current state and change the approach, or ask the user."
  );
}

/**
 * Before a call: the reason to stop it, or undefined; the call's state change is kept until its
 * result arrives.
 */
export function guardCall(
  session: SessionLoop,
  input: PreToolUseInput,
  subject: HookSubject,
  verdict: HookVerdict,
  threshold: number,
): string | undefined {
  const call = identityOf(input, subject, verdict.changesState);
  if (input.toolUseId !== undefined) {
    const key = hash53(input.toolUseId);
    session.pending = session.pending.filter(([id]) => id !== key);
    session.pending.push([key, call.changes ? 1 : 0]);
    if (session.pending.length > MAX_PENDING) session.pending.splice(0, session.pending.length - MAX_PENDING);
  }
  const streak = repeatedFailure(session, call, threshold);
  return streak === undefined ? undefined : loopReason(input.toolName, streak);
}

/** After a call: its result into the session's loop state, as the run monitor steps a tool call. */
export function observeResult(
  session: SessionLoop,
  result: ToolResultInput,
  subject: HookSubject,
  config: TripwireConfig["loop"],
  nowMs: number,
): void {
  const key = result.toolUseId === undefined ? undefined : hash53(result.toolUseId);
  const pendingIndex = key === undefined ? -1 : session.pending.findIndex(([id]) => id === key);
  const pending = session.pending[pendingIndex];
  if (pendingIndex !== -1) session.pending.splice(pendingIndex, 1);
  // An interrupt is the user's doing, not an outcome of the agent's action.
  if (result.interrupted) return;
  const call = identityOf(result, subject, pending === undefined ? undefined : pending[1] === 1);
  const succeeded = result.event === "PostToolUse";
  const noMatch =
    !succeeded && subject.kind === "shell" && endsWithNoMatchCommand(subject.command, config.noMatchCommands);
  // Only a change that happened is progress: a rejected edit or a failed command changed nothing.
  if (call.changes && succeeded) session.epoch++;
  session.calls++;
  observeToolCall(
    session.loop,
    {
      runId: result.sessionId,
      seq: session.calls,
      eventTime: nowMs,
      action: call.action,
      tool: result.toolName,
      failed: !succeeded && !noMatch,
      digest: result.error === undefined ? 0 : hash53(observationDigest(result.error)),
      epochAfter: session.epoch,
      changed: call.changes && succeeded,
      operation: call.operation,
      operationEdits: call.edits,
    },
    config,
  );
  trimLoopWindow(session.loop, config.actionWindow);
}

/** The answer once the guard has spoken: a destructive deny stands; else the guard's mode decides. */
export function guardedAnswer(
  answer: HookAnswer,
  reason: string | undefined,
  mode: Exclude<LoopGuardMode, "off">,
): HookAnswer {
  if (reason === undefined || answer.permission === "deny") return answer;
  if (mode === "deny") return { permission: "deny", reason };
  return { permission: "ask", reason: answer.permission === "ask" ? `${answer.reason} ${reason}` : reason };
}
