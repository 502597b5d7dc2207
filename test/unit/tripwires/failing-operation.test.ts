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
import { restoreRunState, serializeRunState } from "../../../src/tripwires/run-state.ts";
import { replayAgentEvents } from "../../support/replay-agent-events.ts";
import { exec, toolCall } from "./events.ts";

/**
 * Issue #34: loops that look like progress. Only a change that succeeded is progress, and one
 * operation (tool + target) failing the same way while its input varies is a loop
 * (loop-failing-operation).
 */
const RUN = "r";
const byRule = (alerts: TripwireAlert[], rule: string): TripwireAlert[] => alerts.filter((alert) => alert.rule_id === rule);
const renumber = (events: AgentEvent[], runId = RUN): AgentEvent[] =>
  events.map((event, seq) => ({ ...event, run_id: runId, seq, fact_id: `${runId}-${event.type}-${seq}`, event_time: 1_767_225_600_000 + seq * 1000 }));
type Status = "ok" | "error" | undefined;
const edit = (text: string, status: Status, digest: string, path = "/repo/src/a.py"): AgentEvent =>
  toolCall(RUN, 0, "Edit", JSON.stringify({ file_path: path, new_string: text, old_string: "x" }), { status, observation_digest: digest });
const bash = (command: string, status: Status, digest: string): AgentEvent => toolCall(RUN, 0, "Bash", JSON.stringify({ command }), { status, observation_digest: digest });
const read = (path = "/repo/src/a.py"): AgentEvent => toolCall(RUN, 0, "Read", JSON.stringify({ file_path: path }), { status: "ok", observation_digest: `read ${path}` });
/** A SWE-agent edit of the open file: no path in the input, the observation echoes the proposed code. */
const sweEdit = (lines: string, status: Status): AgentEvent =>
  toolCall(RUN, 0, "edit", JSON.stringify({ command: `edit ${lines}\n    return x\nend_of_edit` }), { status, observation_digest: `syntax error, proposed ${lines}` });
const SYNTAX = "E999 IndentationError: unexpected indent";
const TEST = "python -m pytest -q";

describe("progress is a change that succeeded", () => {
  it("a rejected edit between identical test runs is no progress: loop-failing-step alerts", () => {
    const events = renumber([bash(TEST, "error", "e1"), edit("v1", "error", SYNTAX), bash(TEST, "error", "e2"), edit("v2", "error", SYNTAX), bash(TEST, "error", "e3")]);
    const [alert, ...rest] = byRule(replayAgentEvents(events), "loop-failing-step");
    expect(rest).toEqual([]);
    expect(alert?.rule_version).toBe("3");
    expect(alert?.evidence).toMatchObject({ seq_from: 0, seq_to: 4, repetitions: 3 });
  });

  it("a successful edit, or one of unknown status, between them is progress: no alert", () => {
    for (const status of ["ok", undefined] as const) {
      const events = renumber([bash(TEST, "error", "e1"), edit("v1", status, "done"), bash(TEST, "error", "e2"), edit("v2", status, "done"), bash(TEST, "error", "e3")]);
      expect(byRule(replayAgentEvents(events), "loop-failing-step"), String(status)).toEqual([]);
    }
  });

  it("a sandbox command that exited non-zero is no progress; exit code 0 or none is", () => {
    const withExit = (exitCode: number | undefined): AgentEvent[] =>
      renumber([bash(TEST, "error", "e1"), exec(RUN, 0, "make build", { exit_code: exitCode }), bash(TEST, "error", "e2"), exec(RUN, 0, "make build", { exit_code: exitCode }), bash(TEST, "error", "e3")]);
    expect(byRule(replayAgentEvents(withExit(2)), "loop-failing-step")).toHaveLength(1);
    expect(byRule(replayAgentEvents(withExit(0)), "loop-failing-step")).toEqual([]);
    expect(byRule(replayAgentEvents(withExit(undefined)), "loop-failing-step")).toEqual([]);
  });

  it("the sandbox mirror of a failed shell call (no exit code) does not count the change the call did not make", () => {
    const failedMake = (seq: number): AgentEvent[] => [{ ...bash("make build", "error", "make: *** [all] Error 1"), seq }, exec(RUN, seq, "make build")];
    const events = [...failedMake(0), ...failedMake(1), ...failedMake(2)].map((event, index) => ({ ...event, event_time: 1_767_225_600_000 + index }));
    // Different errors each time would be progress if the mirrored exec counted as a change.
    const varied = events.map((event) => (event.type === "agent_step" ? { ...event, observation_digest: `error ${event.seq}` } : event));
    expect(byRule(replayAgentEvents(varied), "loop-failing-step")).toHaveLength(1);
  });
});

describe("loop-failing-operation", () => {
  it("an edit of one file rejected 4 times with varied input and the same error alerts once, at the 4th", () => {
    const attempts = ["v1", "v2", "v3", "v4", "v5", "v6"].map((text) => edit(text, "error", SYNTAX));
    const events = renumber([attempts[0], read(), attempts[1], attempts[2], read(), attempts[3], attempts[4], attempts[5]].filter((event) => event !== undefined));
    const alerts = byRule(replayAgentEvents(events), "loop-failing-operation");
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ rule_version: "1", kind: "LOOP", severity: "warning", evidence: { seq_from: 0, seq_to: 5, repetitions: 4 } });
    expect(byRule(replayAgentEvents(events.slice(0, 5)), "loop-failing-operation")).toEqual([]);
    expect(byRule(replayAgentEvents(events), "loop-failing-step")).toEqual([]);
  });

  it("SWE-agent edits of the open file (no path, the observation echoes the input) alert when nothing succeeds in between", () => {
    const events = renumber(["118:150", "118:151", "119:150", "118:150 ", "120:150"].map((lines) => sweEdit(lines, "error")));
    expect(byRule(replayAgentEvents(events), "loop-failing-operation")).toHaveLength(1);
  });

  it("the threshold is configuration", () => {
    const events = renumber(["a", "b", "c", "d", "e", "f"].map((text) => edit(text, "error", SYNTAX)));
    expect(parseTripwireConfig().loop.failingOperationRepeats).toBe(4);
    expect(byRule(replayAgentEvents(events.slice(0, 5), { loop: { failingOperationRepeats: 6 } }), "loop-failing-operation")).toEqual([]);
    expect(byRule(replayAgentEvents(events, { loop: { failingOperationRepeats: 6 } }), "loop-failing-operation")[0]?.evidence.repetitions).toBe(6);
  });

  it("a success of the operation resets the count; a later stuck streak alerts again", () => {
    const fail = (text: string): AgentEvent => edit(text, "error", SYNTAX);
    const quiet = renumber([fail("a"), fail("b"), fail("c"), edit("ok", "ok", "edited"), fail("d"), fail("e"), fail("f")]);
    expect(byRule(replayAgentEvents(quiet), "loop-failing-operation")).toEqual([]);
    const twice = renumber([fail("a"), fail("b"), fail("c"), fail("d"), edit("ok", "ok", "edited"), fail("e"), fail("f"), fail("g"), fail("h")]);
    expect(byRule(replayAgentEvents(twice), "loop-failing-operation").map((alert) => alert.evidence.seq_from)).toEqual([0, 5]);
  });

  it("different targets, different tools, or a changing error after a successful change are separate operations or progress", () => {
    const files = renumber(["a", "b", "c", "d", "e", "f"].map((text, index) => edit(text, "error", SYNTAX, index % 2 === 0 ? "/repo/a.py" : "/repo/b.py")));
    expect(byRule(replayAgentEvents(files), "loop-failing-operation")).toEqual([]);
    const progress = renumber(["a", "b", "c", "d", "e"].flatMap((text) => [edit(text, "error", `error ${text}`), bash(`touch ${text}`, "ok", "")]));
    expect(byRule(replayAgentEvents(progress), "loop-failing-operation")).toEqual([]);
  });

  it("one input repeated is loop-failing-step's, not this rule's", () => {
    const events = renumber(Array.from({ length: 6 }, () => edit("same", "error", SYNTAX)));
    const alerts = replayAgentEvents(events);
    expect(byRule(alerts, "loop-failing-operation")).toEqual([]);
    expect(byRule(alerts, "loop-failing-step")).toHaveLength(1);
  });

  it("a patch that does not apply, varied, alerts; the debug loop (test re-run after a successful edit) stays quiet", () => {
    const patches = renumber(["fix1.patch", "fix2.patch", "--3way fix2.patch", "fix3.patch"].map((patch) => bash(`git apply ${patch}`, "error", "error: patch failed: src/a.py:12")));
    expect(byRule(replayAgentEvents(patches), "loop-failing-operation")).toHaveLength(1);
    const debug = renumber(["-x", "-k foo", "-q", "-x -q", "tests/"].flatMap((flags, index) => [edit(`fix ${index}`, "ok", "edited"), bash(`python -m pytest ${flags}`, "error", "FAILED test_a")]));
    const alerts = replayAgentEvents(debug);
    expect(byRule(alerts, "loop-failing-operation")).toEqual([]);
    expect(byRule(alerts, "loop-failing-step")).toEqual([]);
  });

  it("read-only shell commands are no operation: varied failing greps or cats never alert", () => {
    const events = renumber(["cat a.txt", "cat b.txt", "cat c.txt", "cat d.txt", "cat e.txt"].map((command) => bash(command, "error", "No such file or directory")));
    expect(byRule(replayAgentEvents(events), "loop-failing-operation")).toEqual([]);
  });

  it("property: N failing variations of one operation alert by the Nth; a success of it in between resets", () => {
    const noise = fc.constantFrom("read", "message", "other-failed-edit", "none");
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), fc.array(fc.record({ success: fc.boolean(), noise }), { minLength: 1, maxLength: 30 }), (threshold, plan) => {
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
          if (extra === "message") events.push(toolCall(RUN, 0, "x", "", { kind: "message", tool: undefined, input: undefined, actor: "assistant", observation_digest: "thinking", status: undefined }));
          if (extra === "other-failed-edit") events.push(edit(`other ${index}`, "error", "other error", "/repo/b.py"));
        });
        const alerts = byRule(replayAgentEvents(renumber(events), { loop: { failingOperationRepeats: threshold } }), "loop-failing-operation");
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
      [edit(`ok ${salt}`, "ok", "edited"), ...["a", "b", "c", "d", "e"].map((text) => edit(`${text}${salt}`, "error", SYNTAX)), bash(TEST, "error", "e"), bash(TEST, "error", "e"), bash(TEST, "error", "e")],
      runId,
    );
  const bytes = (alerts: readonly TripwireAlert[]): string => canonicalJson(alerts);

  it("any interleaving of runs, redelivered records and a restart at any point give the same alerts and ids", () => {
    const runs = [stuckRun("run-a", 1), stuckRun("run-b", 2), stuckRun("run-c", 3)];
    const reference = replayAgentEvents(runs.flat());
    expect(byRule(reference, "loop-failing-operation")).toHaveLength(3);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 60, maxLength: 60 }), fc.array(fc.nat(), { maxLength: 10 }), fc.nat(), (picks, redeliveries, cutSeed) => {
        const cursors = [0, 0, 0];
        const delivery: AgentEvent[] = [];
        for (const pick of [...picks, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]) {
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
        for (const [runId, state] of store.entries()) restoredStore.put(runId, restoreRunState(serializeRunState(state)));
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
    expect(failureStreak(loop, "operations", operation, "unchanged")).toMatchObject({ failures: 5, distinctActions: 5 });
    expect(failureStreak(loop, "actions", actionIdentity("Edit", editInput), "alike").failures).toBe(0);
  });
});
