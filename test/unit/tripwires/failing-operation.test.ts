import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../src/contract/canonical-json.ts";
import type { AgentEvent } from "../../../src/contract/facts.ts";
import { actionIdentity } from "../../../src/tripwires/action-identity.ts";
import { compareAlerts, type TripwireAlert } from "../../../src/tripwires/alert.ts";
import { parseTripwireConfig } from "../../../src/tripwires/config.ts";
import { agentToolIntent, operationIdentity } from "../../../src/tripwires/detectors/agent-tool-intent.ts";
import { failureStreak } from "../../../src/tripwires/detectors/loop-detector.ts";
import { createRunMonitor, inMemoryRunStates } from "../../../src/tripwires/monitor.ts";
import { restoreRunState, serializeRunState } from "../../../src/tripwires/run-state-changelog.ts";
import { replayAgentEvents } from "../../support/replay-agent-events.ts";
import { exec, toolCall } from "./events.ts";

/**
 * Issue #34: loops that look like progress. Only a change that succeeded is progress, and one
 * operation (tool + target) failing the same way while its input varies is a loop
 * (loop-failing-operation).
 */
const RUN = "r";
const BASE = 1_767_225_600_000; // 2026-01-01T00:00:00Z, as events.ts
const byRule = (alerts: TripwireAlert[], rule: string): TripwireAlert[] =>
  alerts.filter((alert) => alert.rule_id === rule);
const renumber = (events: AgentEvent[], runId = RUN): AgentEvent[] =>
  events.map((event, seq) => {
    const fact_id = `${runId}-${event.type}-${seq}`;
    return { ...event, run_id: runId, seq, fact_id, event_time: BASE + seq * 1000 };
  });
type Status = "ok" | "error" | undefined;
const edit = (text: string, status: Status, digest: string, path = "/repo/src/a.py"): AgentEvent =>
  toolCall(RUN, 0, "Edit", JSON.stringify({ file_path: path, new_string: text, old_string: "x" }), {
    status,
    observation_digest: digest,
  });
const bash = (command: string, status: Status, digest: string): AgentEvent =>
  toolCall(RUN, 0, "Bash", JSON.stringify({ command }), { status, observation_digest: digest });
const read = (path = "/repo/src/a.py"): AgentEvent =>
  toolCall(RUN, 0, "Read", JSON.stringify({ file_path: path }), { status: "ok", observation_digest: `read ${path}` });
const message = (): AgentEvent =>
  toolCall(RUN, 0, "x", "", {
    ...{ kind: "message", tool: undefined, input: undefined, status: undefined },
    ...{ actor: "assistant", observation_digest: "thinking" },
  });
/** A SWE-agent edit of the open file: no path in the input, the observation echoes the proposed code. */
const sweEdit = (lines: string, status: Status): AgentEvent =>
  toolCall(RUN, 0, "edit", JSON.stringify({ command: `edit ${lines}\n    return x\nend_of_edit` }), {
    status,
    observation_digest: `syntax error, proposed ${lines}`,
  });
const SYNTAX = "E999 IndentationError: unexpected indent";
const TEST = "python -m pytest -q";

describe("progress is a change that succeeded", () => {
  it("a rejected edit between identical test runs is no progress: loop-failing-step alerts", () => {
    const rejected = (text: string): AgentEvent => edit(text, "error", SYNTAX);
    const test = (error: string): AgentEvent => bash(TEST, "error", error);
    const events = renumber([test("e1"), rejected("v1"), test("e2"), rejected("v2"), test("e3")]);
    const [alert, ...rest] = byRule(replayAgentEvents(events), "loop-failing-step");
    expect(rest).toEqual([]);
    expect(alert?.rule_version).toBe("3");
    expect(alert?.evidence).toMatchObject({ seq_from: 0, seq_to: 4, repetitions: 3 });
  });

  it("a successful edit, or one of unknown status, between them is progress: no alert", () => {
    for (const status of ["ok", undefined] as const) {
      const done = (text: string): AgentEvent => edit(text, status, "done");
      const test = (error: string): AgentEvent => bash(TEST, "error", error);
      const events = renumber([test("e1"), done("v1"), test("e2"), done("v2"), test("e3")]);
      expect(byRule(replayAgentEvents(events), "loop-failing-step"), String(status)).toEqual([]);
    }
  });

  it("a sandbox command that exited non-zero is no progress; exit code 0 or none is", () => {
    const withExit = (exitCode: number | undefined): AgentEvent[] => {
      const make = (): AgentEvent => exec(RUN, 0, "make build", { exit_code: exitCode });
      const test = (error: string): AgentEvent => bash(TEST, "error", error);
      return renumber([test("e1"), make(), test("e2"), make(), test("e3")]);
    };
    expect(byRule(replayAgentEvents(withExit(2)), "loop-failing-step")).toHaveLength(1);
    expect(byRule(replayAgentEvents(withExit(0)), "loop-failing-step")).toEqual([]);
    expect(byRule(replayAgentEvents(withExit(undefined)), "loop-failing-step")).toEqual([]);
  });

  it("the sandbox mirror of a failed shell call (no exit code) does not count the change the call did not make", () => {
    // A different error each time: progress, were the mirrored exec counted as a change.
    const failedMake = (seq: number): AgentEvent[] => [
      { ...bash("make build", "error", `error ${seq}`), seq },
      exec(RUN, seq, "make build"),
    ];
    const events = [0, 1, 2].flatMap(failedMake).map((event, index) => ({ ...event, event_time: BASE + index }));
    expect(byRule(replayAgentEvents(events), "loop-failing-step")).toHaveLength(1);
  });
});

describe("loop-failing-operation", () => {
  it("an edit of one file rejected 4 times with varied input and the same error alerts once, at the 4th", () => {
    const attempts = ["v1", "v2", "v3", "v4", "v5", "v6"].map((text) => edit(text, "error", SYNTAX));
    const [first, second, third, ...rest] = attempts;
    const events = renumber([first, read(), second, third, read(), ...rest].filter((event) => event !== undefined));
    const alerts = byRule(replayAgentEvents(events), "loop-failing-operation");
    expect(alerts).toHaveLength(1);
    const evidence = { seq_from: 0, seq_to: 5, repetitions: 4 };
    expect(alerts[0]).toMatchObject({ rule_version: "1", kind: "LOOP", severity: "warning", evidence });
    expect(byRule(replayAgentEvents(events.slice(0, 5)), "loop-failing-operation")).toEqual([]);
    expect(byRule(replayAgentEvents(events), "loop-failing-step")).toEqual([]);
  });

  it("SWE-agent edits of the open file (no path, the error echoes the input) alert if nothing succeeds between", () => {
    const regions = ["118:150", "118:151", "119:150", "118:150 ", "120:150"];
    const events = renumber(regions.map((lines) => sweEdit(lines, "error")));
    expect(byRule(replayAgentEvents(events), "loop-failing-operation")).toHaveLength(1);
  });

  it("the threshold is configuration", () => {
    const events = renumber(["a", "b", "c", "d", "e", "f"].map((text) => edit(text, "error", SYNTAX)));
    expect(parseTripwireConfig().loop.failingOperationRepeats).toBe(4);
    const six = { loop: { failingOperationRepeats: 6 } };
    expect(byRule(replayAgentEvents(events.slice(0, 5), six), "loop-failing-operation")).toEqual([]);
    expect(byRule(replayAgentEvents(events, six), "loop-failing-operation")[0]?.evidence.repetitions).toBe(6);
  });

  it("a success of the operation resets the count; a later stuck streak alerts again", () => {
    const fail = (text: string): AgentEvent => edit(text, "error", SYNTAX);
    const applied = edit("ok", "ok", "edited");
    const quiet = renumber([fail("a"), fail("b"), fail("c"), applied, fail("d"), fail("e"), fail("f")]);
    expect(byRule(replayAgentEvents(quiet), "loop-failing-operation")).toEqual([]);
    const twice = renumber([..."abcd"].map(fail).concat(applied, [..."efgh"].map(fail)));
    const starts = byRule(replayAgentEvents(twice), "loop-failing-operation").map((alert) => alert.evidence.seq_from);
    expect(starts).toEqual([0, 5]);
  });

  it("another target is another operation; a successful change between failures is progress", () => {
    const file = (index: number): string => (index % 2 === 0 ? "/repo/a.py" : "/repo/b.py");
    const alternating = [..."abcdef"].map((text, index) => edit(text, "error", SYNTAX, file(index)));
    expect(byRule(replayAgentEvents(renumber(alternating)), "loop-failing-operation")).toEqual([]);
    const attempt = (text: string): AgentEvent[] => [
      edit(text, "error", `error ${text}`),
      bash(`touch ${text}`, "ok", "ok"),
    ];
    const progress = renumber([..."abcde"].flatMap(attempt));
    expect(byRule(replayAgentEvents(progress), "loop-failing-operation")).toEqual([]);
  });

  it("one input repeated is loop-failing-step's, not this rule's", () => {
    const events = renumber(Array.from({ length: 6 }, () => edit("same", "error", SYNTAX)));
    const alerts = replayAgentEvents(events);
    expect(byRule(alerts, "loop-failing-operation")).toEqual([]);
    expect(byRule(alerts, "loop-failing-step")).toHaveLength(1);
  });

  it("a varied patch that does not apply alerts; the debug loop (test re-run after a successful edit) is quiet", () => {
    const apply = (patch: string): AgentEvent => bash(`git apply ${patch}`, "error", "patch failed: src/a.py:12");
    const patches = renumber(["fix1.patch", "fix2.patch", "--3way fix2.patch", "fix3.patch"].map(apply));
    expect(byRule(replayAgentEvents(patches), "loop-failing-operation")).toHaveLength(1);
    // The sandbox's report of each attempt arriving first (it settles the pair) changes nothing.
    const reportedFirst = patches.flatMap((call): AgentEvent[] => {
      const command = call.type === "agent_step" ? (JSON.parse(call.input ?? "{}") as { command: string }).command : "";
      return [exec(RUN, call.seq, command, { exit_code: 1 }), call];
    });
    expect(byRule(replayAgentEvents(reportedFirst), "loop-failing-operation")).toHaveLength(1);
    const cycle = (flags: string, index: number): AgentEvent[] => [
      edit(`fix ${index}`, "ok", "edited"),
      bash(`python -m pytest ${flags}`, "error", "FAILED test_a"),
    ];
    const debug = renumber(["-x", "-k foo", "-q", "-x -q", "tests/"].flatMap(cycle));
    const alerts = replayAgentEvents(debug);
    expect(byRule(alerts, "loop-failing-operation")).toEqual([]);
    expect(byRule(alerts, "loop-failing-step")).toEqual([]);
  });

  it("read-only shell commands are no operation: varied failing greps or cats never alert", () => {
    const cat = (file: string): AgentEvent => bash(`cat ${file}`, "error", "No such file or directory");
    const events = renumber(["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"].map(cat));
    expect(byRule(replayAgentEvents(events), "loop-failing-operation")).toEqual([]);
  });

  it("property: N failing variations of one operation alert by the Nth; a success of it in between resets", () => {
    const noise = fc.constantFrom("read", "message", "other-failed-edit", "none");
    const plans = fc.array(fc.record({ success: fc.boolean(), noise }), { minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), plans, (threshold, plan) => {
        const events: AgentEvent[] = [];
        const failedSeqs = new Set<number>();
        const nthSeqs: number[] = [];
        let streak = 0;
        plan.forEach(({ success, noise: extra }, index) => {
          events.push(success ? edit(`good ${index}`, "ok", "edited") : edit(`try ${index}`, "error", SYNTAX));
          streak = success ? 0 : streak + 1;
          if (!success) failedSeqs.add(events.length - 1);
          if (streak === threshold) nthSeqs.push(events.length - 1);
          if (extra === "read") events.push(read());
          if (extra === "message") events.push(message());
          if (extra === "other-failed-edit") events.push(edit(`other ${index}`, "error", "other error", "/repo/b.py"));
        });
        const config = { loop: { failingOperationRepeats: threshold } };
        const alerts = byRule(replayAgentEvents(renumber(events), config), "loop-failing-operation");
        // Alerts on a.py (b.py's failed edits are an operation of their own and may alert too).
        const ownFile = alerts.filter((alert) => failedSeqs.has(alert.evidence.seq_to));
        expect(ownFile.map((alert) => alert.evidence.seq_to)).toEqual(nthSeqs);
        for (const alert of ownFile) expect(alert.evidence.repetitions).toBe(threshold);
      }),
    );
  });
});

describe("replay determinism and state", () => {
  const stuckRun = (runId: string, salt: number): AgentEvent[] =>
    renumber(
      [
        edit(`ok ${salt}`, "ok", "edited"),
        ...[..."abcde"].map((text) => edit(`${text}${salt}`, "error", SYNTAX)),
        ...[0, 1, 2].map(() => bash(TEST, "error", "e")),
      ],
      runId,
    );
  const bytes = (alerts: readonly TripwireAlert[]): string => canonicalJson(alerts);

  it("any interleaving of runs, redelivered records and a restart at any point give the same alerts and ids", () => {
    const runs = [stuckRun("run-a", 1), stuckRun("run-b", 2), stuckRun("run-c", 3)];
    const reference = replayAgentEvents(runs.flat());
    expect(byRule(reference, "loop-failing-operation")).toHaveLength(3);
    const picksArbitrary = fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 30 });
    fc.assert(
      fc.property(picksArbitrary, fc.array(fc.nat(), { maxLength: 10 }), fc.nat(), (picks, redeliveries, cutSeed) => {
        // Each run's own order is kept (one Kafka partition per run); the runs interleave freely.
        const cursors = [0, 0, 0];
        const delivery: AgentEvent[] = [];
        const rest = runs.flatMap((events, index) => events.map(() => index));
        for (const pick of [...picks, ...rest]) {
          const event = runs[pick]?.[cursors[pick] ?? 0];
          if (event === undefined) continue;
          cursors[pick] = (cursors[pick] ?? 0) + 1;
          delivery.push(event);
          if (redeliveries.includes(delivery.length)) delivery.push({ ...event });
        }
        const cut = cutSeed % (delivery.length + 1);
        const store = inMemoryRunStates();
        const first = createRunMonitor({}, store);
        const alerts: TripwireAlert[] = [];
        for (const event of delivery.slice(0, cut)) alerts.push(...first.process(event).alerts);
        const restoredStore = inMemoryRunStates();
        for (const [runId, state] of store.entries()) {
          restoredStore.put(runId, restoreRunState(serializeRunState(state)));
        }
        const second = createRunMonitor({}, restoredStore);
        for (const event of delivery.slice(cut)) alerts.push(...second.process(event).alerts);
        expect(bytes(alerts.sort(compareAlerts))).toBe(bytes(reference));
      }),
    );
  });

  it("the changelog value round-trips operations and open operation streaks; older values restore with none", () => {
    const store = inMemoryRunStates();
    const monitor = createRunMonitor({}, store);
    for (const event of stuckRun("run-a", 1)) monitor.process(event);
    const state = store.get("run-a");
    expect(state?.loop.openOperations).toHaveLength(1);
    expect(state?.loop.operations.filter((operation) => operation !== 0).length).toBeGreaterThan(0);
    if (state === undefined) return;
    const value = serializeRunState(state);
    expect(restoreRunState(value)).toEqual(state);
    const compact = JSON.parse(value) as unknown[];
    const loop = compact[16] as unknown[];
    const older = restoreRunState(JSON.stringify(compact.with(16, loop.slice(0, 7))));
    expect(older.loop.operations).toEqual(state.loop.operations.map(() => 0));
    expect(older.loop.openOperations).toEqual([]);
  });

  it("the hook's question: how many times has this action, or its operation, failed the same way in this run", () => {
    const store = inMemoryRunStates();
    const monitor = createRunMonitor({}, store);
    for (const event of stuckRun("run-a", 1)) monitor.process(event);
    const loop = store.get("run-a")?.loop;
    if (loop === undefined) throw new Error("run-a not held");
    const config = parseTripwireConfig();
    const testInput = JSON.stringify({ command: TEST });
    expect(failureStreak(loop, "actions", actionIdentity("Bash", testInput), "alike").failures).toBe(3);
    const editInput = JSON.stringify({ file_path: "/repo/src/a.py", new_string: "anything new", old_string: "x" });
    const operation = operationIdentity("Edit", agentToolIntent("Edit", editInput, config.agentTools));
    const streak = failureStreak(loop, "operations", operation, "unchanged");
    expect(streak).toMatchObject({ failures: 5, distinctActions: 5 });
    expect(failureStreak(loop, "actions", actionIdentity("Edit", editInput), "alike").failures).toBe(0);
  });
});
