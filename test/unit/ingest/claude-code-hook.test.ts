import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseFact } from "../../../src/contract/parse-fact.ts";
import { AnalysisPool } from "../../../src/ingest/hook/analysis-pool.ts";
import {
  answerJson,
  answerOf,
  DEFAULT_SHELL_TOOLS,
  HookInputError,
  hookFacts,
  parsePreToolUseInput,
  subjectOf,
  undecided,
  type HookVerdict,
} from "../../../src/ingest/hook/claude-code-hook.ts";
import { hookContext } from "../../../src/ingest/hook/hook-runner.ts";

/**
 * The PreToolUse input exactly as the hooks reference documents it (code.claude.com/docs/en/hooks,
 * "Common input fields": a Bash command), with the command varied.
 */
function documentedBashInput(command: string): string {
  return documentedInput("Bash", { command, description: "Run test suite", timeout: 120000, run_in_background: false });
}

function documentedInput(toolName: string, toolInput: Record<string, unknown>): string {
  return JSON.stringify({
    session_id: "abc123",
    prompt_id: "550e8400-e29b-41d4-a716-446655440000",
    transcript_path: "/home/user/.claude/projects/.../transcript.jsonl",
    cwd: "/home/user/my-project",
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: toolName,
    tool_input: toolInput,
    tool_use_id: "toolu_01ABC123...",
  });
}

/** The documented Write input ("A Write call ... delivers"), with a POSIX path. */
const documentedWriteInput = (path: string) => documentedInput("Write", { file_path: path, content: "..." });

const env = { HOME: "/home/user", CLAUDE_PROJECT_DIR: "/home/user/my-project" };
let pool: AnalysisPool;

// Loading the shell grammar (WASM) in the worker is the slow part, and it is not what these tests time.
beforeAll(async () => {
  pool = new AnalysisPool({ workers: 1, maxHeapMb: 256 });
  await pool.ready(120_000);
}, 120_000);

afterAll(async () => {
  await pool.close();
});

async function verdictFor(text: string, shellTools: readonly string[] = DEFAULT_SHELL_TOOLS): Promise<HookVerdict> {
  const input = parsePreToolUseInput(text);
  return pool.judge(subjectOf(input, shellTools), hookContext(input, env), 60_000);
}

describe("agentops hook claude-code: the verdict", () => {
  it("blocks `rm -rf /` with the rule and a reason for Claude", async () => {
    const verdict = await verdictFor(documentedBashInput("rm -rf /"));
    expect(verdict.decision).toBe("block");
    expect(verdict.findings.map((finding) => finding.ruleId)).toEqual(["fs-delete-critical-path"]);
    expect(verdict.decision === "block" ? verdict.reason : "").toMatch(
      /fs-delete-critical-path: recursive delete of \//,
    );
  });

  it("allows `ls`, `npm test`, a Write in the project and a tool it does not judge", async () => {
    expect((await verdictFor(documentedBashInput("ls"))).decision).toBe("allow");
    expect((await verdictFor(documentedBashInput("npm test"))).decision).toBe("allow");
    expect((await verdictFor(documentedWriteInput("/home/user/my-project/src/index.ts"))).decision).toBe("allow");
    expect((await verdictFor(documentedInput("Read", { file_path: "/etc/passwd" }))).decision).toBe("allow");
  });

  it("blocks what the analyser calls critical in the documented workspace (its .git, home) and allows a warning", async () => {
    expect((await verdictFor(documentedBashInput("rm -rf .git"))).decision).toBe("block");
    expect((await verdictFor(documentedBashInput("rm -rf ~"))).decision).toBe("block");
    const warning = await verdictFor(documentedBashInput('rm -rf "$DIR/"'));
    expect(warning.decision).toBe("allow");
    expect(warning.findings.map((finding) => finding.ruleId)).toEqual(["fs-delete-dynamic-target"]);
  });

  it("judges Write, Edit, MultiEdit and NotebookEdit by the path they write, like a file_write event", async () => {
    const writes: [string, Record<string, unknown>][] = [
      ["Write", { file_path: "/etc/passwd", content: "root::0:0::/root:/bin/sh" }],
      ["Edit", { file_path: "/etc/sudoers", old_string: "a", new_string: "b" }],
      ["MultiEdit", { file_path: "/home/user/.ssh/authorized_keys", edits: [] }],
      ["NotebookEdit", { notebook_path: "/usr/lib/x.ipynb", new_source: "" }],
    ];
    for (const [tool, toolInput] of writes) {
      const verdict = await verdictFor(documentedInput(tool, toolInput));
      expect([tool, verdict.decision, verdict.findings.map((finding) => finding.ruleId)]).toEqual([
        tool,
        "block",
        ["fs-write-system-file"],
      ]);
    }
    expect((await verdictFor(documentedInput("Edit", { old_string: "a" }))).decision).toBe("undecided");
  });

  it("judges MCP shell tools by the configured globs; a matched tool without a command is undecided", async () => {
    expect((await verdictFor(documentedInput("mcp__shell__run", { command: "rm -rf /" }))).decision).toBe("block");
    expect((await verdictFor(documentedInput("mcp__box__exec_command", { cmd: "sudo rm -rf /" }))).decision).toBe(
      "block",
    );
    expect((await verdictFor(documentedInput("mcp__shell__run", { argv: ["rm", "-rf", "/"] }))).decision).toBe(
      "undecided",
    );
    expect((await verdictFor(documentedInput("mcp__shell__run", { command: "rm -rf /" }), ["Bash"])).decision).toBe(
      "allow",
    );
    expect((await verdictFor(documentedInput("mcp__ops__go", { command: "rm -rf /" }), ["mcp__ops__*"])).decision).toBe(
      "block",
    );
  });

  it("is undecided, with the bound in the reason, on a command it cannot read completely", async () => {
    const deep = await verdictFor(documentedBashInput(`${"(".repeat(5000)}rm -rf /${")".repeat(5000)}`));
    expect(deep).toMatchObject({
      decision: "undecided",
      reason: expect.stringMatching(/nests 5000 brackets deep, over the bound of 64/) as unknown,
    });
    const long = await verdictFor(documentedBashInput(`ls${" && true".repeat(4000)}`));
    expect(long).toMatchObject({
      decision: "undecided",
      reason: expect.stringMatching(/over the 16384-byte bound/) as unknown,
    });
    const pipes = await verdictFor(documentedBashInput(`ls${" | cat".repeat(30_000)}`));
    expect(pipes).toMatchObject({ decision: "undecided", reason: expect.stringMatching(/bound/) as unknown });
  });

  it("blocks `rm -rf /` followed by a comment holding a lone surrogate", async () => {
    const verdict = await verdictFor(documentedBashInput(`rm -rf / # \ud800`));
    expect(verdict.decision).toBe("block");
  });

  it("rejects input that is not a PreToolUse hook call, naming the field", () => {
    expect(() => parsePreToolUseInput("{")).toThrow(HookInputError);
    expect(() => parsePreToolUseInput(JSON.stringify({ hook_event_name: "PostToolUse" }))).toThrow(
      /register this command for PreToolUse/,
    );
    expect(() =>
      parsePreToolUseInput(JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: {} })),
    ).toThrow("session_id is missing");
  });
});

describe("agentops hook claude-code: the answer", () => {
  const blocked: HookVerdict = { decision: "block", findings: [], reason: "no" };
  const unsure = undecided("too deep");

  it("denies a block whatever --on-undecided says; an undecided call gets the configured answer with its reason", () => {
    for (const policy of ["ask", "deny", "allow"] as const)
      expect(answerOf(blocked, policy)).toEqual({ permission: "deny", reason: "no" });
    expect(answerOf(unsure, "ask")).toEqual({ permission: "ask", reason: "too deep" });
    expect(answerOf(unsure, "deny")).toEqual({ permission: "deny", reason: "too deep" });
    expect(answerOf(unsure, "allow")).toEqual({ permission: "allow" });
  });

  it("writes Claude Code's PreToolUse JSON decision, and nothing for allow (the permission flow goes on)", () => {
    expect(JSON.parse(answerJson(answerOf(unsure, "ask")) ?? "null")).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "ask",
        permissionDecisionReason: "too deep",
      },
    });
    expect(answerJson({ permission: "allow" })).toBeUndefined();
  });
});

describe("agentops hook claude-code: the record", () => {
  it("records the attempted call as an agent_step and, for Bash, a sandbox_event exec the contract accepts", () => {
    const input = parsePreToolUseInput(documentedBashInput("rm -rf /"));
    const facts = hookFacts(
      input,
      subjectOf(input, DEFAULT_SHELL_TOOLS),
      hookContext(input, env),
      1_796_000_000_000_000,
    );
    expect(facts.map((fact) => parseFact(fact).ok)).toEqual([true, true]);
    expect(facts[1]).toMatchObject({
      type: "sandbox_event",
      kind: "exec",
      command: "rm -rf /",
      run_id: "abc123",
      cwd: "/home/user/my-project",
      workspace_root: "/home/user/my-project",
      fact_id: "claude-code-hook:sandbox_event:abc123:toolu_01ABC123...",
    });
    expect(facts[0]).toMatchObject({
      type: "agent_step",
      tool: "Bash",
      kind: "tool_call",
      input: '{"command":"rm -rf /","description":"Run test suite","run_in_background":false,"timeout":120000}',
    });
  });

  it("records a file tool's path as a sandbox_event file_write", () => {
    const input = parsePreToolUseInput(documentedWriteInput("/etc/passwd"));
    const facts = hookFacts(
      input,
      subjectOf(input, DEFAULT_SHELL_TOOLS),
      hookContext(input, env),
      1_796_000_000_000_000,
    );
    expect(facts.map((fact) => parseFact(fact).ok)).toEqual([true, true]);
    expect(facts[1]).toMatchObject({ type: "sandbox_event", kind: "file_write", path: "/etc/passwd" });
  });
});
