import { OBSERVATION_CONTRACT } from "../../contract/fact-schema.ts";
import { canonicalJson } from "../../contract/canonical-json.ts";
import type { UndecidedPolicy } from "./hook-settings.ts";

export { DEFAULT_SHELL_TOOLS, type UndecidedPolicy } from "./hook-settings.ts";
import type { DestructiveFinding } from "../../tripwires/commands/command-analysis.ts";
import type { PathContext } from "../../tripwires/commands/path-resolution.ts";

export type { PathContext } from "../../tripwires/commands/path-resolution.ts";

/**
 * Claude Code's PreToolUse hook, as pure functions: read the documented hook input, say what in
 * it is judged (a shell command line, the files a tool writes), turn a verdict into the answer and
 * say what to record. The analysis runs in a worker (analysis-pool.ts); the command
 * (`agentops hook claude-code`) and its warm HTTP form do the I/O.
 */
export interface PreToolUseInput {
  readonly sessionId: string;
  readonly toolName: string;
  readonly toolInput: Readonly<Record<string, unknown>>;
  readonly toolUseId: string | undefined;
  readonly cwd: string | undefined;
}

export class HookInputError extends Error {
  override readonly name = "HookInputError";
}

/**
 * A tool call's outcome, for the loop guard: PostToolUse fires after a call succeeded,
 * PostToolUseFailure after it failed, with the failure's message in `error`.
 */
export interface ToolResultInput extends PreToolUseInput {
  readonly event: "PostToolUse" | "PostToolUseFailure";
  /** The failure's message, cut to MAX_ERROR_CHARS (what repeats is in its start). */
  readonly error: string | undefined;
  /** The user interrupted the call: that says nothing about the agent's action. */
  readonly interrupted: boolean;
}

export type HookInput = (PreToolUseInput & { readonly event: "PreToolUse" }) | ToolResultInput;

const MAX_ERROR_CHARS = 8 * 1024;

/** The hook's stdin (or HTTP body), checked field by field against the hooks reference. */
export function parsePreToolUseInput(text: string): PreToolUseInput {
  const input = parseHookInput(text, false);
  if (input.event !== "PreToolUse") throw new HookInputError("unreachable: a result input was accepted");
  return input;
}

/** Any input the hook reads: PreToolUse, and the two result events when `results` (the loop guard is on). */
export function parseHookInput(text: string, results: boolean): HookInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HookInputError(`hook input is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new HookInputError("hook input is not a JSON object");
  const input = value as Record<string, unknown>;
  const text_ = (key: string): string | undefined =>
    typeof input[key] === "string" && input[key] !== "" ? input[key] : undefined;
  const event = input["hook_event_name"];
  const isResult = event === "PostToolUse" || event === "PostToolUseFailure";
  if (event !== "PreToolUse" && !(results && isResult)) {
    const registered = results
      ? "PreToolUse, PostToolUse and PostToolUseFailure"
      : "PreToolUse only (PostToolUse too with --loop-guard)";
    throw new HookInputError(
      `hook_event_name is ${JSON.stringify(event ?? null)}; register this command for ${registered}`,
    );
  }
  const sessionId = text_("session_id");
  if (sessionId === undefined) throw new HookInputError("session_id is missing");
  const toolName = text_("tool_name");
  if (toolName === undefined) throw new HookInputError("tool_name is missing");
  const toolInput = input["tool_input"];
  if (typeof toolInput !== "object" || toolInput === null || Array.isArray(toolInput))
    throw new HookInputError("tool_input is not an object");
  const common = {
    sessionId,
    toolName,
    toolInput: toolInput as Record<string, unknown>,
    toolUseId: text_("tool_use_id"),
    cwd: text_("cwd"),
  };
  if (event === "PreToolUse") return { event, ...common };
  if (event === "PostToolUse") return { event, ...common, error: undefined, interrupted: false };
  const error = (text_("error") ?? "").slice(0, MAX_ERROR_CHARS);
  return { event: "PostToolUseFailure", ...common, error, interrupted: input["is_interrupt"] === true };
}

/** Claude Code's file-writing tools and the input field naming the file each one writes. */
const FILE_TOOLS: Readonly<Record<string, string>> = {
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
};

/** What a tool call puts at stake, as far as the hook judges it. */
export type HookSubject =
  | { readonly kind: "none" }
  | { readonly kind: "shell"; readonly command: string }
  | { readonly kind: "file-write"; readonly path: string }
  /** A tool the hook must judge whose input does not say what it would do. */
  | { readonly kind: "unreadable"; readonly reason: string };

export function matchesToolGlob(toolName: string, glob: string): boolean {
  const pattern = glob
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${pattern}$`).test(toolName);
}

export function subjectOf(input: PreToolUseInput, shellTools: readonly string[]): HookSubject {
  const fileField = FILE_TOOLS[input.toolName];
  if (fileField !== undefined) {
    const path = input.toolInput[fileField];
    if (typeof path === "string" && path !== "") return { kind: "file-write", path };
    return { kind: "unreadable", reason: `${input.toolName} has no ${fileField} to judge` };
  }
  if (!shellTools.some((glob) => matchesToolGlob(input.toolName, glob))) return { kind: "none" };
  const command = input.toolInput["command"] ?? input.toolInput["cmd"];
  if (typeof command !== "string") {
    return { kind: "unreadable", reason: `${input.toolName} is a shell tool but its input has no command string` };
  }
  return command === "" ? { kind: "none" } : { kind: "shell", command };
}

/**
 * The analyser's answer, or its absence: undecided always says why. `changesState` is the shell
 * analysis' view of whether the command changes anything (the loop guard's progress); absent when
 * no analysis said.
 */
export type HookVerdict = (
  | { readonly decision: "block"; readonly findings: readonly DestructiveFinding[]; readonly reason: string }
  | { readonly decision: "allow"; readonly findings: readonly DestructiveFinding[] }
  | { readonly decision: "undecided"; readonly findings: readonly DestructiveFinding[]; readonly reason: string }
) & { readonly changesState?: boolean };

export const ALLOW: HookVerdict = { decision: "allow", findings: [] };

export function undecided(reason: string, findings: readonly DestructiveFinding[] = []): HookVerdict {
  return { decision: "undecided", findings, reason };
}

/**
 * Critical findings block; a command the analyser could not read completely (a bound exceeded, a
 * syntax error, a failure) is undecided unless it already blocks; warnings are recorded (the run
 * monitor alerts on them) and allowed.
 */
export function verdictOf(
  findings: readonly DestructiveFinding[],
  unparsedReason: string | undefined,
  severityOf: (finding: DestructiveFinding) => "warning" | "critical",
): HookVerdict {
  const critical = findings.filter((finding) => severityOf(finding) === "critical");
  if (critical.length > 0) {
    const lines = critical.map((finding) => `${finding.ruleId}: ${finding.detail}`);
    const advice = "Do not run it; choose an action that cannot destroy data outside the task, or ask the user.";
    return {
      decision: "block",
      findings,
      reason: `agentops blocked this as destructive (${lines.join("; ")}). ${advice}`,
    };
  }
  if (unparsedReason !== undefined) {
    return undecided(`agentops could not judge this command: ${unparsedReason}`, findings);
  }
  return { decision: "allow", findings };
}

/** The answer given to Claude Code: deny blocks, ask prompts the user, allow leaves the normal permission flow. */
export type HookAnswer =
  { readonly permission: "deny" | "ask"; readonly reason: string } | { readonly permission: "allow" };

export function answerOf(verdict: HookVerdict, onUndecided: UndecidedPolicy): HookAnswer {
  if (verdict.decision === "block") return { permission: "deny", reason: verdict.reason };
  if (verdict.decision === "allow" || onUndecided === "allow") return { permission: "allow" };
  return { permission: onUndecided, reason: verdict.reason };
}

/** Claude Code's JSON decision, or undefined for allow (never auto-approve: the permission flow goes on). */
export function answerJson(answer: HookAnswer): string | undefined {
  if (answer.permission === "allow") return undefined;
  const output = {
    hookEventName: "PreToolUse",
    permissionDecision: answer.permission,
    permissionDecisionReason: answer.reason,
  };
  return JSON.stringify({ hookSpecificOutput: output });
}

export type RawFact = { fact_id: string; [key: string]: unknown };

/**
 * What the hook records: the attempted tool call as an agent_step, and for a shell tool the
 * command as a sandbox_event exec (a file tool: the path as a file_write), so the run monitor sees
 * what the agent tried whatever the verdict. The hook input has no step counter: `seq` is the
 * hook's clock in microseconds, which orders a session's calls; ids come from tool_use_id, so a
 * repeated hook call is a redelivery.
 */
export function hookFacts(
  input: PreToolUseInput,
  subject: HookSubject,
  context: PathContext,
  nowMicros: number,
): RawFact[] {
  const eventTime = new Date(Math.floor(nowMicros / 1000)).toISOString();
  const identity = `${input.sessionId}:${input.toolUseId ?? String(nowMicros)}`;
  const base = (type: string, factId: string) => ({
    contract: OBSERVATION_CONTRACT,
    type,
    fact_id: factId,
    event_time: eventTime,
    provenance: { basis: "DIRECT_HOST", source: "claude-code-hook" },
    run_id: input.sessionId,
    seq: nowMicros,
  });
  const facts: RawFact[] = [
    {
      ...base("agent_step", `claude-code-hook:agent_step:${identity}`),
      kind: "tool_call",
      tool: input.toolName,
      input: canonicalJson(input.toolInput),
    },
  ];
  const where = {
    ...(context.cwd === undefined ? {} : { cwd: context.cwd }),
    ...(context.workspaceRoot === undefined ? {} : { workspace_root: context.workspaceRoot }),
  };
  const event = base("sandbox_event", `claude-code-hook:sandbox_event:${identity}`);
  if (subject.kind === "shell") facts.push({ ...event, kind: "exec", command: subject.command, ...where });
  if (subject.kind === "file-write") facts.push({ ...event, kind: "file_write", path: subject.path, ...where });
  return facts;
}
