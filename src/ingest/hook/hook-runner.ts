import { appendFileSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Fact } from "../../contract/facts.ts";
import { parseFact } from "../../contract/parse-fact.ts";
import type { CommandAnalyser, DestructiveFinding } from "../../tripwires/index.ts";
import { fileSink, type FactSink } from "../fact-sink.ts";
import { hookFacts, judge, shellCommandOf, type HookVerdict, type PathContext, type PreToolUseInput } from "./claude-code-hook.ts";

/** The analyser and the severity of each rule, loaded once (the shell grammar is WASM). */
export interface LoadedAnalyser {
  readonly analyser: CommandAnalyser;
  severityOf(finding: DestructiveFinding): "warning" | "critical";
}

export async function loadAnalyser(): Promise<LoadedAnalyser> {
  const tripwires = await import("../../tripwires/index.ts");
  const config = tripwires.parseTripwireConfig();
  const analyser = tripwires.createCommandAnalyser({ protectedBranches: config.destructive.protectedBranches, cacheSize: 1024 });
  return { analyser, severityOf: (finding) => tripwires.destructiveRule(finding.ruleId).severity };
}

/**
 * The verdict, or `undecided` when the analyser is not ready within the deadline. Loading is the
 * only part that can be slow (parsing is synchronous and bounded), so the deadline races it.
 */
export async function decideWithin(command: string | undefined, context: PathContext, analyser: Promise<LoadedAnalyser>, deadlineMs: number): Promise<HookVerdict> {
  if (command === undefined) return { decision: "allow", findings: [] };
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), deadlineMs);
  });
  const loaded = await Promise.race([analyser, late]);
  clearTimeout(timer);
  if (loaded === undefined) return { decision: "undecided", findings: [], reason: `the analyser was not ready within ${deadlineMs} ms; allowed without a verdict` };
  return judge(command, context, loaded.analyser, (finding) => loaded.severityOf(finding));
}

/** Path context of a hook call: Claude Code's project dir is the workspace; home is the hook's own user's. */
export function hookContext(input: PreToolUseInput, env: NodeJS.ProcessEnv = process.env): PathContext {
  const workspaceRoot = env["CLAUDE_PROJECT_DIR"] !== undefined && env["CLAUDE_PROJECT_DIR"] !== "" ? env["CLAUDE_PROJECT_DIR"] : input.cwd;
  return { cwd: input.cwd ?? workspaceRoot, workspaceRoot, home: env["HOME"] ?? homedir() };
}

export function defaultSpoolDir(env: NodeJS.ProcessEnv = process.env): string {
  return env["AGENTOPS_SPOOL_DIR"] ?? join(env["HOME"] ?? homedir(), ".agentops", "spool");
}

/** The local spool: facts for `agentops produce --input <dir>/facts.ndjson`. */
export function spoolSink(dir: string): FactSink {
  mkdirSync(dir, { recursive: true });
  return fileSink(join(dir, "facts.ndjson"), undefined);
}

/**
 * Records one hook call: its facts to the sink, and the verdict (with the time it took) to the
 * spool's decision log, which is local in every mode: the contract has no place for a verdict.
 */
export async function recordHookCall(input: PreToolUseInput, context: PathContext, verdict: HookVerdict, elapsedMs: number, nowMicros: number, sink: FactSink, spoolDir: string): Promise<void> {
  const facts: { fact: Fact; json: string }[] = [];
  for (const raw of hookFacts(input, context, nowMicros)) {
    const parsed = parseFact(raw);
    if (parsed.ok) facts.push({ fact: parsed.fact, json: JSON.stringify(raw) });
  }
  mkdirSync(spoolDir, { recursive: true });
  const decision = {
    at: new Date(Math.floor(nowMicros / 1000)).toISOString(),
    session_id: input.sessionId,
    tool_use_id: input.toolUseId ?? null,
    tool: input.toolName,
    command: shellCommandOf(input) ?? null,
    decision: verdict.decision,
    rules: verdict.findings.map((finding) => finding.ruleId),
    reason: verdict.decision === "allow" ? null : verdict.reason,
    elapsed_ms: Math.round(elapsedMs * 1000) / 1000,
  };
  appendFileSync(join(spoolDir, "hook-decisions.ndjson"), `${JSON.stringify(decision)}\n`);
  await sink.write(facts, []);
}
