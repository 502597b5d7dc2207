import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runHook, startHookServer, withoutKafka, type HookRun } from "../support/hook-process.ts";
import { testDir } from "../support/processes.ts";

/**
 * `agentops hook claude-code --loop-guard ask` fed recorded sessions (Claude Code's PreToolUse,
 * PostToolUse and PostToolUseFailure inputs, in order) as Claude Code runs a command hook: judged
 * in process with the state in the spool, and forwarded to a warm server of the same spool.
 */
const GUARD = ["--deadline-ms", "60000", "--loop-guard", "ask"];
/** A session is 13 to 17 hook processes; judged in process each loads the analyser (seconds under load). */
const SESSION_TIMEOUT_MS = 400_000;

function recorded(name: string): string[] {
  const url = new URL(`../fixtures/claude-code-hook/${name}`, import.meta.url);
  return readFileSync(url, "utf8").trim().split("\n");
}

/** Each PreToolUse's answer: allow, or the JSON decision's permission; results must answer nothing. */
async function playSession(
  lines: readonly string[],
  spool: string,
  flags: readonly string[] = GUARD,
): Promise<string[]> {
  const answers: string[] = [];
  for (const line of lines) {
    const run = await runHook(line, withoutKafka(spool), flags);
    const event = (JSON.parse(line) as { hook_event_name: string }).hook_event_name;
    if (event === "PreToolUse") answers.push(answerOf(run));
    else expect(run, event).toEqual({ code: 0, stdout: "", stderr: "" });
  }
  return answers;
}

function answerOf(run: HookRun): string {
  if (run.code === 2) return "deny";
  expect(run.code, run.stderr).toBe(0);
  if (run.stdout === "") return "allow";
  type Output = { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
  const output = (JSON.parse(run.stdout) as Output).hookSpecificOutput;
  return `${output.permissionDecision}: ${output.permissionDecisionReason}`;
}

function expectStuckEditStopped(answers: readonly string[]): void {
  expect(answers.slice(0, -1).every((answer) => answer === "allow")).toBe(true);
  expect(answers.at(-1)).toMatch(
    /^ask: agentops loop guard: this Edit call repeats an operation that failed 4 times in this session/,
  );
}

describe("agentops hook claude-code --loop-guard ask, judged in process", () => {
  it(
    "asks before the 5th attempt of an Edit rejected 4 times with varied input",
    async () => {
      const spool = testDir("agentops-hook-loop-");
      expectStuckEditStopped(await playSession(recorded("stuck-edit-session.ndjson"), spool));
      const decisions = readFileSync(join(spool, "hook-decisions.ndjson"), "utf8").trim().split("\n");
      const last = JSON.parse(decisions.at(-1) ?? "{}") as Record<string, unknown>;
      expect([last["answer"], typeof last["loop_guard"]]).toEqual(["ask", "string"]);
    },
    SESSION_TIMEOUT_MS,
  );

  it(
    "leaves the normal debug loop alone: a test re-run after a successful edit is allowed",
    async () => {
      const answers = await playSession(recorded("debug-loop-session.ndjson"), testDir("agentops-hook-loop-"));
      expect(answers).toEqual(Array.from({ length: 9 }, () => "allow"));
    },
    SESSION_TIMEOUT_MS,
  );

  it(
    "--loop-guard-after 2 stops the same session's Edit at its 3rd attempt, and every attempt after",
    async () => {
      const flags = [...GUARD, "--loop-guard-after", "2"];
      const answers = await playSession(recorded("stuck-edit-session.ndjson"), testDir("agentops-hook-loop-"), flags);
      expect(answers.slice(0, 4)).toEqual(["allow", "allow", "allow", "allow"]);
      expect(answers.slice(4).map((answer) => /^ask: .* failed (\d) times/.exec(answer)?.[1])).toEqual(["2", "3", "4"]);
    },
    SESSION_TIMEOUT_MS,
  );

  it("without the flag a result input is an error of the hook's registration (exit 1), and nothing is stopped", async () => {
    const [, failure = ""] = recorded("stuck-edit-session.ndjson").slice(2);
    const run = await runHook(failure, withoutKafka(testDir("agentops-hook-loop-")));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/register this command for PreToolUse only \(PostToolUse too with --loop-guard\)/);
  });
});

describe("agentops hook claude-code --loop-guard ask, forwarded to a warm server", () => {
  it(
    "the server keeps the session's loop state: the same recorded sessions, the same answers",
    async () => {
      const server = await startHookServer(GUARD);
      try {
        const stuck = recorded("stuck-edit-session.ndjson");
        expectStuckEditStopped(await playSession(stuck, server.spool));
        const debug = recorded("debug-loop-session.ndjson");
        expect(await playSession(debug, server.spool)).toEqual(Array.from({ length: 9 }, () => "allow"));
        // Every PreToolUse was judged by the server, not in the command's own process.
        const preCalls = [...stuck, ...debug].filter((line) => line.includes('"hook_event_name": "PreToolUse"')).length;
        expect((await server.health()).judged).toBe(preCalls);
      } finally {
        server.stop();
      }
    },
    SESSION_TIMEOUT_MS,
  );
});
