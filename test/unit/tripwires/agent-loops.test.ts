import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/contract/facts.ts";
import type { TripwireAlert } from "../../../src/tripwires/alert.ts";
import { endsWithNoMatchCommand } from "../../../src/tripwires/detectors/agent-tool-intent.ts";
import { parseTripwireConfig } from "../../../src/tripwires/config.ts";
import { replayAgentEvents } from "../../support/replay-agent-events.ts";
import { exec, sandbox, toolCall } from "./events.ts";

/**
 * Loop rules on agent-only logs (issue #10 items 6, 7, 9): progress-aware failing steps,
 * repeated messages, shell tool calls judged by the destructive analyser, and one alert for an
 * action reported by both the agent log and the sandbox.
 */
const RUN = "r";
const byRule = (alerts: TripwireAlert[], rule: string): TripwireAlert[] =>
  alerts.filter((alert) => alert.rule_id === rule);
const bash = (seq: number, command: string, status: "ok" | "error", digest?: string): AgentEvent =>
  toolCall(RUN, seq, "Bash", JSON.stringify({ command }), { status, observation_digest: digest });
const edit = (seq: number, path = "/work/repo/src/a.py", text = `v${seq}`): AgentEvent =>
  toolCall(RUN, seq, "Edit", JSON.stringify({ file_path: path, new_string: text, old_string: "x" }), {
    status: "ok",
    observation_digest: `edited-${seq}`,
  });
const read = (seq: number, path = "/work/repo/src/a.py"): AgentEvent =>
  toolCall(RUN, seq, "Read", JSON.stringify({ file_path: path }), { status: "ok", observation_digest: `read-${seq}` });
const message = (seq: number, digest: string, actor = "assistant"): AgentEvent =>
  toolCall(RUN, seq, "x", "", {
    kind: "message",
    tool: undefined,
    input: undefined,
    actor,
    observation_digest: digest,
    status: undefined,
  });
const renumber = (events: AgentEvent[]): AgentEvent[] =>
  events.map((event, seq) => ({
    ...event,
    seq,
    fact_id: `${event.type}-${seq}`,
    event_time: 1_767_225_600_000 + seq * 1000,
  }));

describe("loop-failing-step sees progress (item 6)", { timeout: 60_000 }, () => {
  const TEST = "python -m pytest -q";

  it("a failing test re-run after each edit, with a new error each time, is the debug loop: no alert", () => {
    const events = renumber([
      bash(0, TEST, "error", "e1"),
      edit(0),
      bash(0, TEST, "error", "e2"),
      edit(0),
      bash(0, TEST, "error", "e3"),
      edit(0),
      bash(0, TEST, "error", "e4"),
    ]);
    expect(byRule(replayAgentEvents(events), "loop-failing-step")).toEqual([]);
  });

  it("the same action failing the same way alerts, even with edits in between", () => {
    const events = renumber([
      bash(0, TEST, "error", "same"),
      edit(0),
      bash(0, TEST, "error", "same"),
      edit(0),
      bash(0, TEST, "error", "same"),
    ]);
    const [alert, ...rest] = byRule(replayAgentEvents(events), "loop-failing-step");
    expect(rest).toEqual([]);
    expect(alert?.evidence).toMatchObject({ seq_from: 0, seq_to: 4, repetitions: 3 });
  });

  it("failures with a changing error but nothing state-changing in between alert (nothing was tried)", () => {
    const events = renumber([
      bash(0, TEST, "error", "t1"),
      read(0),
      bash(0, TEST, "error", "t2"),
      bash(0, "git status", "ok", "s"),
      bash(0, TEST, "error", "t3"),
    ]);
    expect(byRule(replayAgentEvents(events), "loop-failing-step")).toHaveLength(1);
  });

  it("keeps the real loops: a no-op sed failing 4 times the same way, the same wrong answer submitted 5 times", () => {
    const sed = Array.from({ length: 4 }, () =>
      bash(
        0,
        "sed -i 's/foo(/foo(bar, /' src/a.py",
        "error",
        "sed: -e expression #1, char 18: unterminated `s' command",
      ),
    );
    expect(byRule(replayAgentEvents(renumber(sed)), "loop-failing-step")).toHaveLength(1);
    const submit = Array.from({ length: 5 }, () =>
      toolCall(RUN, 0, "submit", '{"answer":"42"}', { status: "error", observation_digest: "wrong answer" }),
    );
    const [alert] = byRule(replayAgentEvents(renumber(submit)), "loop-failing-step");
    expect(alert?.evidence.repetitions).toBe(3);
  });

  it("a progress break ends an alerted streak: a later stuck streak alerts again", () => {
    const stuck = [bash(0, TEST, "error", "a"), bash(0, TEST, "error", "a"), bash(0, TEST, "error", "a")];
    const events = renumber([...stuck, edit(0), bash(0, TEST, "error", "b"), ...stuck]);
    expect(byRule(replayAgentEvents(events), "loop-failing-step")).toHaveLength(2);
  });

  it("property: when every failure follows an edit and changes the error, no failing-step alert", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 20 }),
        fc.array(fc.constantFrom("read", "status", "other-fail"), { maxLength: 30 }),
        (failures, noise) => {
          const events: AgentEvent[] = [];
          for (let index = 0; index < failures; index++) {
            events.push(edit(0, "/work/repo/src/a.py", `fix ${index}`));
            const extra = noise[index % Math.max(1, noise.length)];
            if (extra === "read") events.push(read(0));
            if (extra === "status") events.push(bash(0, "git status", "ok", "clean"));
            if (extra === "other-fail") events.push(edit(0, "/work/repo/src/b.py", `other ${index}`));
            events.push(bash(0, TEST, "error", `error number ${index}`));
          }
          return byRule(replayAgentEvents(renumber(events)), "loop-failing-step").length === 0;
        },
      ),
    );
  });

  it("property: k ≥ 3 identical failures of one action, interleaved with anything that does not succeed it, alert exactly once", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 12 }),
        fc.array(fc.constantFrom("edit", "read", "other"), { maxLength: 24 }),
        (failures, noise) => {
          const events: AgentEvent[] = [];
          for (let index = 0; index < failures; index++) {
            events.push(bash(0, TEST, "error", "ImportError: no module named foo"));
            const extra = noise[index];
            if (extra === "edit") events.push(edit(0, "/work/repo/src/a.py", `try ${index}`));
            if (extra === "read") events.push(read(0));
            if (extra === "other") events.push(bash(0, `ls dir${index}`, "ok", `listing ${index}`));
          }
          return byRule(replayAgentEvents(renumber(events)), "loop-failing-step").length === 1;
        },
      ),
    );
  });
});

describe("no-match exits are not failures (item 9)", () => {
  it("grep, test and diff ending in error never form a failing streak", () => {
    for (const command of [
      "grep -rn 'def foo' src",
      "cd src && grep -q bar x.py",
      "test -f setup.cfg",
      "[ -d build ]",
      "diff a.txt b.txt",
      "FOO=1 rg needle",
      "cat x | grep -v y",
    ]) {
      const events = renumber(Array.from({ length: 5 }, () => bash(0, command, "error", "same")));
      expect(byRule(replayAgentEvents(events), "loop-failing-step"), command).toEqual([]);
    }
  });

  it("a failing command whose last command is not a no-match command still counts", () => {
    expect(endsWithNoMatchCommand("grep -q x f && python run.py", ["grep"])).toBe(false);
    expect(endsWithNoMatchCommand("echo 'a | grep b'; make", ["grep"])).toBe(false);
    expect(endsWithNoMatchCommand("make 2>&1 | grep error", ["grep"])).toBe(true);
    expect(endsWithNoMatchCommand("git diff --exit-code", ["git diff"])).toBe(true);
    const events = renumber(Array.from({ length: 3 }, () => bash(0, "grep -q x f && python run.py", "error", "same")));
    expect(byRule(replayAgentEvents(events), "loop-failing-step")).toHaveLength(1);
  });
});

describe("loop-repeated-message: stuck in messages (item 7)", { timeout: 60_000 }, () => {
  const FORMAT_ERROR = "Please always provide EXACTLY ONE action in triple backticks, found 3 actions.";

  it("25 identical format-error replies with no tool call raise one alert at the 4th", () => {
    const events = renumber(
      Array.from({ length: 25 }, (_, index) => [
        message(0, `malformed answer ${index}`),
        message(0, FORMAT_ERROR, "environment"),
      ]).flat(),
    );
    const [alert, ...rest] = byRule(replayAgentEvents(events), "loop-repeated-message");
    expect(rest).toEqual([]);
    expect(alert?.evidence).toMatchObject({ seq_from: 1, seq_to: 7, repetitions: 4 });
    expect(alert?.kind).toBe("LOOP");
  });

  it("a tool call is progress: the count restarts", () => {
    const three = [message(0, "same"), message(0, "same"), message(0, "same")];
    const events = renumber([...three, bash(0, "ls", "ok", "l"), ...three]);
    expect(byRule(replayAgentEvents(events), "loop-repeated-message")).toEqual([]);
  });

  it("the human's messages are not judged", () => {
    const events = renumber(Array.from({ length: 6 }, () => message(0, "continue", "user")));
    expect(byRule(replayAgentEvents(events), "loop-repeated-message")).toEqual([]);
  });

  it("property: messages that are all different never alert; n ≥ 4 copies of one alert once", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 40 }),
        fc.integer({ min: 4, max: 30 }),
        (distinct, copies) => {
          const quiet =
            byRule(replayAgentEvents(renumber(distinct.map((text) => message(0, text)))), "loop-repeated-message")
              .length === 0;
          const stuck = renumber([
            ...distinct.map((text) => message(0, `d:${text}`)),
            ...Array.from({ length: copies }, () => message(0, "stuck")),
          ]);
          return quiet && byRule(replayAgentEvents(stuck), "loop-repeated-message").length === 1;
        },
      ),
    );
  });
});

describe("shell tool calls are judged by the destructive analyser (item 9)", { timeout: 60_000 }, () => {
  const destructive = (alerts: TripwireAlert[]): TripwireAlert[] =>
    alerts.filter((alert) => alert.kind === "DESTRUCTIVE");

  it("an agent_step Bash/bash/execute_bash/run_command/exec_command call with rm -rf / alerts", () => {
    for (const [tool, input] of [
      ["Bash", { command: "rm -rf /" }],
      ["bash", { command: "rm -rf /" }],
      ["execute_bash", { command: "sudo rm -rf /" }],
      ["run_command", { command: "git push --force origin main" }],
      ["exec_command", { cmd: "rm -rf ~" }],
      ["shell", { command: ["bash", "-lc", "rm -rf /etc"] }],
    ] as const) {
      const alerts = destructive(replayAgentEvents([toolCall(RUN, 0, tool, JSON.stringify(input))]));
      expect(alerts.length, tool).toBeGreaterThan(0);
      expect(alerts[0]?.severity).toBe("critical");
    }
  });

  it("safe look-alikes in a shell tool call stay quiet", () => {
    for (const command of [
      "echo 'rm -rf /'",
      "rm -rf node_modules",
      "git commit -m 'rm -rf / guard'",
      "grep -r 'DROP TABLE' .",
    ]) {
      expect(destructive(replayAgentEvents([toolCall(RUN, 0, "Bash", JSON.stringify({ command }))])), command).toEqual(
        [],
      );
    }
  });

  it("shell-tool names are configuration", () => {
    const event = toolCall(RUN, 0, "my_terminal", JSON.stringify({ command: "rm -rf /" }));
    expect(destructive(replayAgentEvents([event]))).toEqual([]);
    const shell = [...parseTripwireConfig().agentTools.shell, "my_terminal"];
    expect(destructive(replayAgentEvents([event], { agentTools: { shell } }))).toHaveLength(1);
  });

  it("the same action as a tool call and as a sandbox exec raises one alert, in both arrival orders", () => {
    const call = toolCall(RUN, 5, "Bash", JSON.stringify({ command: "rm -rf /" }));
    const ran = exec(RUN, 5, "rm -rf /");
    const toolFirst = destructive(replayAgentEvents([call, ran]));
    const sandboxFirst = destructive(replayAgentEvents([ran, call]));
    expect(toolFirst).toHaveLength(1);
    expect(sandboxFirst).toHaveLength(1);
    expect(toolFirst[0]?.alert_id).toBe(sandboxFirst[0]?.alert_id);
  });

  it("two runs of the same dangerous command are two actions; a far-away exec is not a mirror", () => {
    const events = [
      toolCall(RUN, 1, "Bash", JSON.stringify({ command: "git reset --hard" })),
      exec(RUN, 1, "git reset --hard"),
      toolCall(RUN, 2, "Bash", JSON.stringify({ command: "git reset --hard" })),
      exec(RUN, 2, "git reset --hard"),
    ];
    expect(destructive(replayAgentEvents(events))).toHaveLength(2);
    const far = [toolCall(RUN, 1, "Bash", JSON.stringify({ command: "rm -rf /" })), exec(RUN, 40, "rm -rf /")];
    expect(destructive(replayAgentEvents(far))).toHaveLength(2);
  });

  it("property: each dangerous action reported by both sources, in any order and seq offset within the window, alerts once", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.integer({ min: -8, max: 8 }), { minLength: 6, maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
        (count, offsets, sandboxFirst) => {
          const commands = [
            "rm -rf /",
            "git push --force",
            "rm -rf ~",
            "mkfs.ext4 /dev/sda",
            "git filter-branch",
            "terraform destroy",
          ];
          const events: AgentEvent[] = [];
          for (let index = 0; index < count; index++) {
            const seq = 100 + index * 20;
            const call = toolCall(RUN, seq, "Bash", JSON.stringify({ command: commands[index] }));
            const ran = exec(RUN, seq + (offsets[index] ?? 0), commands[index] ?? "");
            events.push(...(sandboxFirst[index] === true ? [ran, call] : [call, ran]));
          }
          const alerts = destructive(replayAgentEvents(events));
          return new Set(alerts.map((alert) => alert.evidence.command)).size === count && alerts.length === count;
        },
      ),
    );
  });

  it("a mirrored pair counts as one state change: a stuck failing command with its exec events still alerts", () => {
    const events: AgentEvent[] = [];
    for (let seq = 0; seq < 3; seq++) {
      events.push(
        toolCall(RUN, seq, "Bash", JSON.stringify({ command: "python run.py" }), {
          status: "error",
          observation_digest: `different ${seq}`,
        }),
      );
      events.push(exec(RUN, seq, "python run.py", { exit_code: 1 }));
    }
    expect(byRule(replayAgentEvents(events), "loop-failing-step")).toHaveLength(1);
    // The same with an unpaired file write in between is progress.
    const withWrite = [
      ...events.slice(0, 2),
      sandbox(RUN, 50, "file_write", { path: "/work/repo/run.py" }),
      ...events.slice(2),
    ];
    expect(byRule(replayAgentEvents(withWrite), "loop-failing-step")).toEqual([]);
  });
});
