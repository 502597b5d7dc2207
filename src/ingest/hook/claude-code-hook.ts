import { OBSERVATION_CONTRACT } from "../../contract/fact-schema.ts";
import { canonicalJson } from "../../contract/canonical-json.ts";
import type { CommandAnalyser, DestructiveFinding } from "../../tripwires/index.ts";

/**
 * Claude Code's PreToolUse hook, as pure functions: read the documented hook input, judge a Bash
 * command with the run monitor's destructive-action analyser, and say what to answer and what to
 * record. The command (`agentops hook claude-code`) and its warm HTTP form do the I/O.
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

/** The hook's stdin (or HTTP body), checked field by field against the hooks reference. */
export function parsePreToolUseInput(text: string): PreToolUseInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HookInputError(`hook input is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new HookInputError("hook input is not a JSON object");
  const input = value as Record<string, unknown>;
  const text_ = (key: string): string | undefined => (typeof input[key] === "string" && input[key] !== "" ? input[key] : undefined);
  if (input["hook_event_name"] !== "PreToolUse") throw new HookInputError(`hook_event_name is ${JSON.stringify(input["hook_event_name"] ?? null)}; register this command for PreToolUse only`);
  const sessionId = text_("session_id");
  if (sessionId === undefined) throw new HookInputError("session_id is missing");
  const toolName = text_("tool_name");
  if (toolName === undefined) throw new HookInputError("tool_name is missing");
  const toolInput = input["tool_input"];
  if (typeof toolInput !== "object" || toolInput === null || Array.isArray(toolInput)) throw new HookInputError("tool_input is not an object");
  return { sessionId, toolName, toolInput: toolInput as Record<string, unknown>, toolUseId: text_("tool_use_id"), cwd: text_("cwd") };
}

/** The command line a tool call would run, for the tools that run one. */
export function shellCommandOf(input: PreToolUseInput): string | undefined {
  const command = input.toolInput["command"];
  return input.toolName === "Bash" && typeof command === "string" && command !== "" ? command : undefined;
}

export type HookVerdict =
  | { readonly decision: "block"; readonly findings: readonly DestructiveFinding[]; readonly reason: string }
  | { readonly decision: "allow"; readonly findings: readonly DestructiveFinding[] }
  /** The analyser did not answer within the deadline: the call is allowed, and that is recorded. */
  | { readonly decision: "undecided"; readonly findings: readonly []; readonly reason: string };

export interface PathContext {
  readonly cwd: string | undefined;
  readonly workspaceRoot: string | undefined;
  readonly home: string | undefined;
}

/** Critical findings block; warnings are recorded (the run monitor alerts on them) but allowed. */
export function judge(command: string | undefined, context: PathContext, analyser: CommandAnalyser, severityOf: (finding: DestructiveFinding) => "warning" | "critical"): HookVerdict {
  if (command === undefined) return { decision: "allow", findings: [] };
  const findings = analyser.analyseShell(command, context).findings;
  const critical = findings.filter((finding) => severityOf(finding) === "critical");
  if (critical.length === 0) return { decision: "allow", findings };
  const lines = critical.map((finding) => `${finding.ruleId}: ${finding.detail}`);
  return { decision: "block", findings, reason: `agentops blocked this command as destructive (${lines.join("; ")}). Do not run it; choose a command that cannot destroy data outside the task, or ask the user.` };
}

/**
 * What the hook records: the attempted tool call as an agent_step, and for Bash the command as a
 * sandbox_event exec, so the run monitor sees what the agent tried whatever the verdict. The hook
 * input has no step counter: `seq` is the hook's clock in microseconds, which orders a session's
 * calls; ids come from tool_use_id, so a repeated hook call is a redelivery.
 */
export function hookFacts(input: PreToolUseInput, context: PathContext, nowMicros: number): { fact_id: string; [key: string]: unknown }[] {
  const eventTime = new Date(Math.floor(nowMicros / 1000)).toISOString();
  const identity = `${input.sessionId}:${input.toolUseId ?? String(nowMicros)}`;
  const base = (type: string, factId: string) => ({ contract: OBSERVATION_CONTRACT, type, fact_id: factId, event_time: eventTime, provenance: { basis: "DIRECT_HOST", source: "claude-code-hook" }, run_id: input.sessionId, seq: nowMicros });
  const facts: { fact_id: string; [key: string]: unknown }[] = [{ ...base("agent_step", `claude-code-hook:agent_step:${identity}`), kind: "tool_call", tool: input.toolName, input: canonicalJson(input.toolInput) }];
  const command = shellCommandOf(input);
  if (command !== undefined) {
    facts.push({ ...base("sandbox_event", `claude-code-hook:sandbox_event:${identity}`), kind: "exec", command, ...(context.cwd === undefined ? {} : { cwd: context.cwd }), ...(context.workspaceRoot === undefined ? {} : { workspace_root: context.workspaceRoot }) });
  }
  return facts;
}
