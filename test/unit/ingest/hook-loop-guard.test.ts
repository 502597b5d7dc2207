import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ALLOW,
  DEFAULT_SHELL_TOOLS,
  parseHookInput,
  subjectOf,
  type HookVerdict,
} from "../../../src/ingest/hook/claude-code-hook.ts";
import {
  emptySessionLoop,
  guardCall,
  guardedAnswer,
  observeResult,
  type SessionLoop,
} from "../../../src/ingest/hook/loop-guard.ts";
import { DEFAULT_LOOP_GUARD_AFTER } from "../../../src/ingest/hook/hook-settings.ts";
import { loopGuardConfig, LoopGuardStore, openLoopGuard } from "../../../src/ingest/hook/loop-guard-store.ts";
import { parseTripwireConfig } from "../../../src/tripwires/config.ts";

const config = parseTripwireConfig().loop;
const THRESHOLD = config.failingOperationRepeats;

function recorded(name: string): string[] {
  const url = new URL(`../../fixtures/claude-code-hook/${name}`, import.meta.url);
  return readFileSync(url, "utf8").trim().split("\n");
}

/**
 * Plays hook inputs through the guard as the hook does: a PreToolUse is judged (`verdictOf` gives
 * the analyser's verdict, allow by default) and answered, a result is observed. Returns the
 * guard's reason for each PreToolUse, in order.
 */
function play(
  lines: readonly string[],
  session: SessionLoop = emptySessionLoop(),
  verdictOf: (command: string) => HookVerdict = () => ALLOW,
): (string | undefined)[] {
  const reasons: (string | undefined)[] = [];
  for (const line of lines) {
    const input = parseHookInput(line, true);
    const subject = subjectOf(input, DEFAULT_SHELL_TOOLS);
    if (input.event === "PreToolUse") {
      reasons.push(
        guardCall(session, input, subject, subject.kind === "shell" ? verdictOf(subject.command) : ALLOW, THRESHOLD),
      );
    } else {
      observeResult(session, input, subject, config, 0);
    }
  }
  return reasons;
}

function hookInput(
  event: string,
  tool: string,
  toolInput: Record<string, unknown>,
  toolUseId: string,
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    session_id: "s",
    cwd: "/home/user/my-project",
    hook_event_name: event,
    tool_name: tool,
    tool_input: toolInput,
    tool_use_id: toolUseId,
    ...extra,
  });
}

function failingEdit(attempt: number): string[] {
  const edit = { file_path: "/home/user/my-project/src/a.ts", old_string: `x${attempt}`, new_string: "y" };
  const id = `toolu_edit${attempt}`;
  return [
    hookInput("PreToolUse", "Edit", edit, id),
    hookInput("PostToolUseFailure", "Edit", edit, id, {
      error: `String to replace not found in file.\nString: x${attempt}`,
    }),
  ];
}

function shellCall(command: string, id: string, error?: string): string[] {
  const input = { command };
  const result =
    error === undefined
      ? hookInput("PostToolUse", "Bash", input, id, { tool_response: { stdout: "", stderr: "", interrupted: false } })
      : hookInput("PostToolUseFailure", "Bash", input, id, { error });
  return [hookInput("PreToolUse", "Bash", input, id), result];
}

describe("the loop guard's decision", () => {
  it("recorded session: an Edit rejected 4 times with varied input and the same error; the 5th attempt is stopped", () => {
    const reasons = play(recorded("stuck-edit-session.ndjson"));
    expect(reasons.slice(0, -1).every((reason) => reason === undefined)).toBe(true);
    expect(reasons.at(-1)).toMatch(
      /this Edit call repeats an operation that failed 4 times in this session \(4 different inputs/,
    );
  });

  it("recorded session: the normal debug loop (a test failing the same way, re-run after each successful edit) is never stopped", () => {
    const reasons = play(recorded("debug-loop-session.ndjson"));
    expect(reasons).toHaveLength(9);
    expect(reasons.every((reason) => reason === undefined)).toBe(true);
  });

  it("stops at the rule's threshold, not before", () => {
    const lines = [1, 2, 3].flatMap(failingEdit);
    const session = emptySessionLoop();
    expect(play(lines, session)).toEqual([undefined, undefined, undefined]);
    expect(play(failingEdit(4).slice(0, 1), session)).toEqual([undefined]);
    expect(play([...failingEdit(4).slice(1), ...failingEdit(5).slice(0, 1)], session)[0]).toBeDefined();
  });

  it("stops at the threshold --loop-guard-after gives; its default is the run monitor's", () => {
    expect(DEFAULT_LOOP_GUARD_AFTER).toBe(THRESHOLD);
    expect(loopGuardConfig(DEFAULT_LOOP_GUARD_AFTER)).toEqual(config);
    const spool = mkdtempSync(join(tmpdir(), "agentops-guard-after-"));
    const guard = openLoopGuard("deny", spool, loopGuardConfig(2));
    const reasons: (string | undefined)[] = [];
    for (const line of [1, 2, 3].flatMap(failingEdit)) {
      const input = parseHookInput(line, true);
      const subject = subjectOf(input, DEFAULT_SHELL_TOOLS);
      if (input.event === "PreToolUse") reasons.push(guard.before(input, subject, ALLOW));
      else guard.after(input, subject);
    }
    expect(reasons.slice(0, 2)).toEqual([undefined, undefined]);
    expect(reasons[2]).toMatch(/repeats an operation that failed 2 times in this session/);
  });

  it("a read-only command that succeeds in between is no progress; a state change that succeeds is", () => {
    const changes = (command: string): HookVerdict => ({ ...ALLOW, changesState: command.startsWith("git checkout") });
    const stuck = [1, 2]
      .flatMap(failingEdit)
      .concat(shellCall("cat src/a.ts", "toolu_cat"), [3, 4].flatMap(failingEdit), failingEdit(5).slice(0, 1));
    expect(play(stuck, emptySessionLoop(), changes).at(-1)).toBeDefined();
    const progress = [1, 2, 3, 4]
      .flatMap(failingEdit)
      .concat(shellCall("git checkout src/a.ts", "toolu_co"), failingEdit(5).slice(0, 1));
    expect(play(progress, emptySessionLoop(), changes).at(-1)).toBeUndefined();
  });

  it("the same shell command failing the same way with nothing changed in between is stopped on its 5th run", () => {
    const error = "Exit code 1\nerror: patch failed: src/a.ts:12\nerror: src/a.ts: patch does not apply";
    const lines = [1, 2, 3, 4].flatMap((run) => shellCall("git apply fix.patch", `toolu_apply${run}`, error));
    const reasons = play([...lines, ...shellCall("git apply fix.patch", "toolu_apply5").slice(0, 1)]);
    expect(reasons.slice(0, 4)).toEqual([undefined, undefined, undefined, undefined]);
    expect(reasons[4]).toMatch(/Bash call repeats an operation that failed 4 times in this session \(the same input/);
  });

  it("a search that finds nothing (grep exits 1) and a call the user interrupted are not failures", () => {
    const grep = [1, 2, 3, 4, 5].flatMap((run) => shellCall("grep -rn TODO src", `toolu_grep${run}`, "Exit code 1"));
    expect(play(grep).every((reason) => reason === undefined)).toBe(true);
    const interrupted = [1, 2, 3, 4].flatMap((attempt) => {
      const [pre = "", failure = ""] = failingEdit(attempt);
      return [pre, JSON.stringify({ ...(JSON.parse(failure) as object), is_interrupt: true })];
    });
    expect(play([...interrupted, ...failingEdit(5).slice(0, 1)]).at(-1)).toBeUndefined();
  });

  it("one session's failures do not stop another's calls", () => {
    const store = mkdtempSync(join(tmpdir(), "agentops-loop-guard-"));
    const guard = openLoopGuard("ask", store, config);
    const feed = (sessionId: string, line: string) => {
      const input = parseHookInput(line.replace('"session_id":"s"', `"session_id":"${sessionId}"`), true);
      const subject = subjectOf(input, DEFAULT_SHELL_TOOLS);
      return input.event === "PreToolUse"
        ? guard.before(input, subject, ALLOW)
        : (guard.after(input, subject), undefined);
    };
    for (const line of [1, 2, 3, 4].flatMap(failingEdit)) feed("one", line);
    const [next = ""] = failingEdit(5);
    expect(feed("two", next)).toBeUndefined();
    expect(feed("one", next)).toMatch(/failed 4 times/);
  });
});

describe("the guarded answer", () => {
  const reason = "agentops loop guard: …";

  it("leaves a destructive deny as it is, and an allow without a loop", () => {
    const deny = { permission: "deny", reason: "destructive" } as const;
    expect(guardedAnswer(deny, reason, "ask")).toBe(deny);
    expect(guardedAnswer({ permission: "allow" }, undefined, "deny")).toEqual({ permission: "allow" });
  });

  it("asks or denies as configured, keeping an undecided call's reason", () => {
    expect(guardedAnswer({ permission: "allow" }, reason, "ask")).toEqual({ permission: "ask", reason });
    expect(guardedAnswer({ permission: "allow" }, reason, "deny")).toEqual({ permission: "deny", reason });
    const undecidedAsk = { permission: "ask", reason: "agentops could not judge this command." } as const;
    expect(guardedAnswer(undecidedAsk, reason, "ask")).toEqual({
      permission: "ask",
      reason: `${undecidedAsk.reason} ${reason}`,
    });
  });
});

describe("the loop guard's store", () => {
  it("keeps at most maxSessions sessions, forgetting the least recently written", () => {
    const spool = mkdtempSync(join(tmpdir(), "agentops-loop-guard-"));
    const store = new LoopGuardStore(spool, { maxSessions: 3, window: config.actionWindow });
    const session = emptySessionLoop();
    session.epoch = 7;
    for (const id of ["a", "b", "c", "d", "e"]) store.save(id, session);
    expect(readdirSync(join(spool, "loop-guard"))).toHaveLength(3);
    expect(store.load("e").epoch).toBe(7);
  });

  it("keeps a session's ring within the loop detector's window", () => {
    const session = emptySessionLoop();
    play(Array.from({ length: 200 }, (_, run) => shellCall(`ls dir${run}`, `toolu_ls${run}`)).flat(), session);
    expect(session.loop.seqs.length).toBe(config.actionWindow);
    expect(session.pending).toHaveLength(0);
  });

  it("reads a file it did not write (malformed, oversized) as a new session; a hostile id names no other path", () => {
    const spool = mkdtempSync(join(tmpdir(), "agentops-loop-guard-"));
    const store = new LoopGuardStore(spool, { maxSessions: 8, window: config.actionWindow });
    store.save("../../etc/passwd", emptySessionLoop());
    const [file = ""] = readdirSync(join(spool, "loop-guard"));
    expect(file).toMatch(/^[0-9a-f]+\.json$/);
    for (const text of [
      "{",
      JSON.stringify({ loop: { seqs: "x" } }),
      JSON.stringify({ ...emptySessionLoop(), epoch: 1, pad: "x".repeat(1_000_000) }),
    ]) {
      writeFileSync(join(spool, "loop-guard", file), text);
      expect(store.load("../../etc/passwd")).toEqual(emptySessionLoop());
    }
  });
});
