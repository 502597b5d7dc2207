import { describe, expect, it } from "vitest";
import { alertId } from "../../../src/tripwires/alert.ts";
import { parseTripwireConfig } from "../../../src/tripwires/config.ts";
import { createRunMonitor, inMemoryRunStates } from "../../../src/tripwires/monitor.ts";
import { MIRROR_CHANGED, MIRROR_MATCHED, MIRROR_SANDBOX_SIDE } from "../../../src/tripwires/detectors/action-mirror.ts";
import { restoreRunState, serializeRunState } from "../../../src/tripwires/run-state-changelog.ts";
import { seenCount } from "../../../src/tripwires/seen-seqs.ts";
import { exec, sandbox, toolCall } from "./events.ts";

describe("run monitor", () => {
  it("emits contract §5 alerts with deterministic ids", () => {
    const monitor = createRunMonitor();
    const [alert] = monitor.process(exec("r1", 7, "sudo rm -rf /")).alerts;
    expect(alert).toEqual({
      alert_id: alertId("r1", "fs-delete-critical-path", 7, 7),
      run_id: "r1",
      rule_id: "fs-delete-critical-path",
      rule_version: "2",
      kind: "DESTRUCTIVE",
      severity: "critical",
      event_time: exec("r1", 7, "").event_time,
      evidence: { seq_from: 7, seq_to: 7, command: "sudo rm -rf /", path: "/", detail: "recursive delete of /" },
      message: "destructive action (fs-delete-critical-path): recursive delete of /",
    });
  });

  it("judges file_delete events outside the workspace or of .git", () => {
    const monitor = createRunMonitor();
    expect(
      monitor.process(sandbox("r", 1, "file_delete", { path: "/etc/hosts" })).alerts.map((alert) => alert.rule_id),
    ).toEqual(["fs-delete-critical-path"]);
    expect(
      monitor.process(sandbox("r", 2, "file_delete", { path: ".git" })).alerts.map((alert) => alert.rule_id),
    ).toEqual(["fs-delete-git-dir"]);
    expect(monitor.process(sandbox("r", 3, "file_delete", { path: "src/old.ts" })).alerts).toEqual([]);
    expect(monitor.process(sandbox("r", 4, "file_delete", { path: ".git/index.lock" })).alerts).toEqual([]);
  });

  it("analyses git and sql events", () => {
    const monitor = createRunMonitor();
    expect(
      monitor
        .process(sandbox("r", 1, "git", { command: "push --force origin main" }))
        .alerts.map((alert) => alert.rule_id),
    ).toEqual(["git-force-push"]);
    expect(
      monitor.process(sandbox("r", 2, "sql", { command: "DELETE FROM users" })).alerts.map((alert) => alert.rule_id),
    ).toEqual(["sql-delete-without-where"]);
    expect(monitor.process(sandbox("r", 3, "sql", { command: "DELETE FROM users WHERE id = 1" })).alerts).toEqual([]);
  });

  it("uses argv when an exec event has no command string", () => {
    const monitor = createRunMonitor();
    const event = sandbox("r", 1, "exec", { argv: ["rm", "-rf", "/home/u/my docs"], workspace_root: "/work/repo" });
    expect(monitor.process(event).alerts.map((alert) => alert.rule_id)).toEqual(["fs-delete-outside-workspace"]);
  });

  it("ignores duplicates and counts them in the summary", () => {
    const monitor = createRunMonitor();
    expect(monitor.process(exec("r", 1, "rm -rf /")).alerts).toHaveLength(1);
    const again = monitor.process(exec("r", 1, "rm -rf /"));
    expect(again.alerts).toEqual([]);
    expect(again.runState.duplicates_ignored).toBe(1);
    // An agent_step with the same seq is a different record.
    expect(monitor.process(toolCall("r", 1, "t", "{}")).runState.steps_seen).toBe(1);
  });

  it("ignores records older than the dedupe window as late", () => {
    const monitor = createRunMonitor({ dedupeWindow: 16 });
    for (let seq = 100; seq < 120; seq++) monitor.process(toolCall("r", seq, "t", `{"i":${seq}}`));
    expect(monitor.process(toolCall("r", 1, "t", "{}")).runState.late_ignored).toBe(1);
  });

  it("evicts runs idle for longer than the expiry, by event time", () => {
    const monitor = createRunMonitor({ idleExpiryMinutes: 1 });
    monitor.process(toolCall("old", 0, "t", "{}"));
    const later = toolCall("new", 0, "t", "{}", { event_time: toolCall("old", 0, "t", "{}").event_time + 5 * 60_000 });
    const result = monitor.process(later);
    expect(result.evictedRunIds).toEqual(["old"]);
    expect(monitor.activeRuns()).toBe(1);
  });

  it("keeps per-run state bounded", () => {
    const runs = inMemoryRunStates();
    const monitor = createRunMonitor({}, runs);
    for (let seq = 0; seq < 5000; seq++)
      monitor.process(toolCall("r", seq, "t", `{"i":${seq}}`, { observation_digest: `d${seq}` }));
    const state = runs.get("r");
    expect(state?.loop.seqs.length).toBe(64);
    expect(state === undefined ? 0 : seenCount(state.seenSteps)).toBe(512);
    expect(state?.seenSteps).toEqual({ ranges: [5000 - 512, 4999], floor: 5000 - 512 }); // in order: one range
    expect(state?.redundancy.observedActions.length).toBe(128);
    expect(JSON.stringify(state).length).toBeLessThan(20_000);
  });

  it("rejects invalid configuration and corrupt state", () => {
    expect(() => parseTripwireConfig({ loop: { minCycleLength: 5, maxCycleLength: 2 } })).toThrow();
    expect(() => parseTripwireConfig({ loop: { actionWindow: 4 } })).toThrow();
    expect(() => restoreRunState('{"runId":1}')).toThrow();
    const runs = inMemoryRunStates();
    const monitor = createRunMonitor({}, runs);
    monitor.process(exec("r", 1, "rm -rf /"));
    const state = runs.get("r");
    if (state === undefined) throw new Error("run not held");
    const compact = JSON.parse(serializeRunState(state)) as unknown[];
    const withTable = (table: unknown): string => JSON.stringify([...compact.slice(0, -1), table]);
    expect(() => restoreRunState(withTable([]))).toThrow(/refers to hash/); // a hash index past the table
    expect(() => restoreRunState(JSON.stringify([3, ...compact.slice(1)]))).toThrow(); // an unknown format
    expect(() => restoreRunState(JSON.stringify(compact.slice(0, -1)))).toThrow(); // a field missing
  });

  it("restores a changelog value written before the compact form (mirrors as one object each, seen seqs as lists)", () => {
    const runs = inMemoryRunStates();
    const monitor = createRunMonitor({}, runs);
    monitor.process(toolCall("r", 1, "Bash", JSON.stringify({ command: "rm -rf /" })));
    monitor.process(exec("r", 2, "rm -rf /"));
    monitor.process(exec("r", 3, "npm test"));
    const state = runs.get("r");
    if (state === undefined) throw new Error("run not held");
    const { mirrors } = state;
    const entries = mirrors.seqs.map((seq, index) => {
      const flags = mirrors.flags[index] ?? 0;
      const rules = mirrors.rules[index] ?? "";
      return {
        side: flags & MIRROR_SANDBOX_SIDE,
        seq,
        subject: mirrors.subjects[index],
        rules: rules === "" ? [] : rules.split(","),
        changed: (flags & MIRROR_CHANGED) === 0 ? 0 : 1,
        matched: (flags & MIRROR_MATCHED) === 0 ? 0 : 1,
      };
    });
    expect(entries.map((entry) => [entry.side, entry.matched, entry.rules])).toEqual([
      [0, 1, ["fs-delete-critical-path"]],
      [1, 1, []],
      [1, 0, []],
    ]);
    // The seen seqs as a sorted list and a floor per record type.
    const seqsOf = (ranges: readonly number[]): number[] =>
      ranges.flatMap((first, index) =>
        index % 2 === 0
          ? Array.from({ length: (ranges[index + 1] ?? first) - first + 1 }, (_, offset) => first + offset)
          : [],
      );
    const { seenSteps, seenSandboxEvents, ...rest } = state;
    const older = {
      ...rest,
      seenStepSeqs: seqsOf(seenSteps.ranges),
      seenSandboxSeqs: seqsOf(seenSandboxEvents.ranges),
      stepSeqFloor: seenSteps.floor,
      sandboxSeqFloor: seenSandboxEvents.floor,
      mirrors: entries,
    };
    expect(older.seenSandboxSeqs).toEqual([2, 3]);
    expect(restoreRunState(JSON.stringify(older))).toEqual(state);
  });
});
