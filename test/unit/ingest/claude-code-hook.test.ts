import { beforeAll, describe, expect, it } from "vitest";
import { parseFact } from "../../../src/contract/parse-fact.ts";
import { HookInputError, hookFacts, parsePreToolUseInput, shellCommandOf } from "../../../src/ingest/hook/claude-code-hook.ts";
import { decideWithin, hookContext, loadAnalyser } from "../../../src/ingest/hook/hook-runner.ts";

/**
 * The PreToolUse input exactly as the hooks reference documents it (code.claude.com/docs/en/hooks,
 * "Common input fields": a Bash command), with the command varied.
 */
function documentedBashInput(command: string): string {
  return JSON.stringify({
    session_id: "abc123",
    prompt_id: "550e8400-e29b-41d4-a716-446655440000",
    transcript_path: "/home/user/.claude/projects/.../transcript.jsonl",
    cwd: "/home/user/my-project",
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command, description: "Run test suite", timeout: 120000, run_in_background: false },
    tool_use_id: "toolu_01ABC123...",
  });
}

/** The documented Write input ("A Write call ... delivers"), with a POSIX path. */
const documentedWriteInput = JSON.stringify({ session_id: "abc123", cwd: "/home/user/my-project", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: "/home/user/my-project/src/index.ts", content: "..." }, tool_use_id: "toolu_02" });

const env = { HOME: "/home/user", CLAUDE_PROJECT_DIR: "/home/user/my-project" };
const analyser = loadAnalyser();

// Loading the shell grammar (WASM) is the slow part, and it is not what these tests time.
beforeAll(async () => {
  await analyser;
}, 120_000);

async function verdictFor(text: string) {
  const input = parsePreToolUseInput(text);
  return decideWithin(shellCommandOf(input), hookContext(input, env), analyser, 60_000);
}

describe("agentops hook claude-code: the verdict", () => {
  it("blocks `rm -rf /` with the rule and a reason for Claude", async () => {
    const verdict = await verdictFor(documentedBashInput("rm -rf /"));
    expect(verdict.decision).toBe("block");
    expect(verdict.findings.map((finding) => finding.ruleId)).toEqual(["fs-delete-critical-path"]);
    expect(verdict.decision === "block" ? verdict.reason : "").toMatch(/fs-delete-critical-path: recursive delete of \//);
  });

  it("allows `ls`, `npm test` and a Write", async () => {
    expect((await verdictFor(documentedBashInput("ls"))).decision).toBe("allow");
    expect((await verdictFor(documentedBashInput("npm test"))).decision).toBe("allow");
    expect((await verdictFor(documentedWriteInput)).decision).toBe("allow");
  });

  it("blocks what the analyser calls critical in the documented workspace (its .git, home) and allows a warning", async () => {
    expect((await verdictFor(documentedBashInput("rm -rf .git"))).decision).toBe("block");
    expect((await verdictFor(documentedBashInput("rm -rf ~"))).decision).toBe("block");
    const warning = await verdictFor(documentedBashInput('rm -rf "$DIR/"'));
    expect(warning.decision).toBe("allow");
    expect(warning.findings.map((finding) => finding.ruleId)).toEqual(["fs-delete-dynamic-target"]);
  });

  it("allows, and says so, when the analyser is not ready within the deadline", async () => {
    const never = new Promise<never>(() => undefined);
    const input = parsePreToolUseInput(documentedBashInput("rm -rf /"));
    expect(await decideWithin(shellCommandOf(input), hookContext(input, env), never, 20)).toEqual({ decision: "undecided", findings: [], reason: "the analyser was not ready within 20 ms; allowed without a verdict" });
  });

  it("rejects input that is not a PreToolUse hook call, naming the field", () => {
    expect(() => parsePreToolUseInput("{")).toThrow(HookInputError);
    expect(() => parsePreToolUseInput(JSON.stringify({ hook_event_name: "PostToolUse" }))).toThrow(/register this command for PreToolUse/);
    expect(() => parsePreToolUseInput(JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: {} }))).toThrow("session_id is missing");
  });

  it("records the attempted call as an agent_step and, for Bash, a sandbox_event exec the contract accepts", () => {
    const input = parsePreToolUseInput(documentedBashInput("rm -rf /"));
    const facts = hookFacts(input, hookContext(input, env), 1_796_000_000_000_000);
    expect(facts.map((fact) => parseFact(fact).ok)).toEqual([true, true]);
    expect(facts[1]).toMatchObject({ type: "sandbox_event", kind: "exec", command: "rm -rf /", run_id: "abc123", cwd: "/home/user/my-project", workspace_root: "/home/user/my-project", fact_id: "claude-code-hook:sandbox_event:abc123:toolu_01ABC123..." });
    expect(facts[0]).toMatchObject({ type: "agent_step", tool: "Bash", kind: "tool_call", input: '{"command":"rm -rf /","description":"Run test suite","run_in_background":false,"timeout":120000}' });
  });
});
