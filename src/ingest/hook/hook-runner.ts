import { appendFileSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Fact } from "../../contract/facts.ts";
import { parseFact } from "../../contract/parse-fact.ts";
import { fileSink, type FactSink } from "../fact-sink.ts";
import { answerOf, hookFacts, type HookAnswer, type HookSubject, type HookVerdict } from "./claude-code-hook.ts";
import type { PathContext, PreToolUseInput, UndecidedPolicy } from "./claude-code-hook.ts";
import { guardedAnswer } from "./loop-guard.ts";
import type { LoopGuard } from "./loop-guard-store.ts";

/** Path context of a hook call: Claude Code's project dir is the workspace; home is the hook's own user's. */
export function hookContext(input: PreToolUseInput, env: NodeJS.ProcessEnv = process.env): PathContext {
  const workspaceRoot =
    env["CLAUDE_PROJECT_DIR"] !== undefined && env["CLAUDE_PROJECT_DIR"] !== "" ? env["CLAUDE_PROJECT_DIR"] : input.cwd;
  return { cwd: input.cwd ?? workspaceRoot, workspaceRoot, home: env["HOME"] ?? homedir() };
}

/** The local spool: facts for `agentops produce --input <dir>/facts.ndjson`. */
export function spoolSink(dir: string): FactSink {
  mkdirSync(dir, { recursive: true });
  return fileSink(join(dir, "facts.ndjson"), undefined);
}

/** One judged hook call, as recorded. */
export interface HookCall {
  readonly input: PreToolUseInput;
  readonly subject: HookSubject;
  readonly context: PathContext;
  readonly verdict: HookVerdict;
  readonly answer: HookAnswer;
  /** Why the loop guard stopped the call, when it did. */
  readonly loopReason: string | undefined;
  readonly elapsedMs: number;
  readonly nowMicros: number;
}

/**
 * Records one hook call: the verdict (its answer, reason and the time it took) to the spool's
 * decision log, which is local in every mode (the contract has no place for a verdict), then its
 * facts to the sink. Facts the contract rejects (e.g. a lone surrogate in a command) are not sent;
 * the decision line says so.
 */
export async function recordHookCall(call: HookCall, sink: FactSink, spoolDir: string): Promise<void> {
  const { input, subject, verdict } = call;
  const facts: { fact: Fact; json: string }[] = [];
  let unrecordable: string | undefined;
  try {
    for (const raw of hookFacts(input, subject, call.context, call.nowMicros)) {
      const parsed = parseFact(raw);
      if (parsed.ok) facts.push({ fact: parsed.fact, json: JSON.stringify(raw) });
      else unrecordable = "the contract rejects the facts of this call";
    }
  } catch (error) {
    unrecordable = `the facts of this call cannot be built (${error instanceof Error ? error.message : String(error)})`;
  }
  mkdirSync(spoolDir, { recursive: true });
  const decision = {
    at: new Date(Math.floor(call.nowMicros / 1000)).toISOString(),
    session_id: input.sessionId,
    tool_use_id: input.toolUseId ?? null,
    tool: input.toolName,
    command: subject.kind === "shell" ? subject.command : null,
    path: subject.kind === "file-write" ? subject.path : null,
    decision: verdict.decision,
    answer: call.answer.permission,
    rules: verdict.findings.map((finding) => finding.ruleId),
    reason: verdict.decision === "allow" ? null : verdict.reason,
    ...(call.loopReason === undefined ? {} : { loop_guard: call.loopReason }),
    elapsed_ms: Math.round(call.elapsedMs * 1000) / 1000,
    ...(unrecordable === undefined ? {} : { unrecorded: unrecordable }),
  };
  appendFileSync(join(spoolDir, "hook-decisions.ndjson"), `${JSON.stringify(decision)}\n`);
  if (facts.length > 0) await sink.write(facts, []);
}

/**
 * The answer to a judged call, with the loop guard's say when it is on. The guard is advice on
 * top of the verdict: if its state cannot be read or written the call is answered without it.
 */
export function answerCall(
  input: PreToolUseInput,
  subject: HookSubject,
  verdict: HookVerdict,
  onUndecided: UndecidedPolicy,
  guard: LoopGuard | undefined,
  onGuardError: (error: unknown) => void,
): { answer: HookAnswer; loopReason: string | undefined } {
  const answer = answerOf(verdict, onUndecided);
  if (guard === undefined) return { answer, loopReason: undefined };
  let loopReason: string | undefined;
  try {
    loopReason = guard.before(input, subject, verdict);
  } catch (error) {
    onGuardError(error);
  }
  return { answer: guardedAnswer(answer, loopReason, guard.mode), loopReason };
}

export function nowMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}
