import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/contract/facts.ts";
import { MAX_DELETION_EPISODES } from "../../../src/tripwires/detectors/deletion-episodes.ts";
import { createRunMonitor, inMemoryRunStates, type RunMonitor } from "../../../src/tripwires/monitor.ts";
import { restoreRunState, serializeRunState } from "../../../src/tripwires/run-state-changelog.ts";
import { exec, sandbox } from "./events.ts";

/** Seqs are one second of event time apart in these events (events.ts). */
const deleted = (seq: number, path: string): AgentEvent => sandbox("r", seq, "file_delete", { path });

function ruleIds(monitor: RunMonitor, events: readonly AgentEvent[]): string[] {
  return events.flatMap((event) =>
    monitor.process(event).alerts.map((alert) => `${alert.evidence.seq_from}:${alert.rule_id}`),
  );
}

describe("deletion episodes: one destructive act alerts once, not once per deleted file", () => {
  it("`rm -rf .git` alerts once; the 200 file_delete events the sandbox reports after it are grouped and counted", () => {
    const monitor = createRunMonitor();
    const events = [
      exec("r", 1, "rm -rf .git"),
      ...Array.from({ length: 200 }, (_, index) => deleted(2 + index, `.git/objects/${index}`)),
    ];
    expect(ruleIds(monitor, events)).toEqual(["1:fs-delete-git-dir"]);
    const summary = monitor.process(sandbox("r", 300, "file_write", { path: "notes.md" })).runState;
    expect(summary.deletions_grouped).toBe(200);
    expect(summary.alerts_emitted).toBe(1);
  });

  it("file deletes under .git with no command before them: the first alerts, the rest are grouped", () => {
    const monitor = createRunMonitor();
    expect(
      ruleIds(monitor, [deleted(1, ".git/HEAD"), deleted(2, ".git/config"), deleted(3, ".git/refs/heads/main")]),
    ).toEqual(["1:fs-delete-git-dir"]);
  });

  it("a quiet gap longer than deletionQuietSeconds ends the episode: the next deletion alerts again", () => {
    const monitor = createRunMonitor();
    expect(ruleIds(monitor, [deleted(1, ".git/HEAD"), deleted(61, ".git/config"), deleted(122, ".git/index")])).toEqual(
      ["1:fs-delete-git-dir", "122:fs-delete-git-dir"],
    );
  });

  it("the gap is measured from the episode's last grouped deletion, so a steady trickle stays one episode", () => {
    const monitor = createRunMonitor();
    const trickle = Array.from({ length: 10 }, (_, index) => deleted(1 + index * 50, `.git/objects/${index}`));
    expect(ruleIds(monitor, trickle)).toEqual(["1:fs-delete-git-dir"]);
  });

  it("deletions in another directory, or under another rule, are their own episodes", () => {
    const monitor = createRunMonitor();
    const events = [
      deleted(1, "/etc/ssh/sshd_config"),
      deleted(2, "/etc/ssh/ssh_config"),
      deleted(3, "/var/lib/dpkg/status"),
      deleted(4, "/etc/ssh/moduli"),
      deleted(5, ".git/HEAD"),
      deleted(6, "/work/other/data.db"),
    ];
    expect(ruleIds(monitor, events)).toEqual([
      "1:fs-delete-critical-path",
      "3:fs-delete-critical-path",
      "5:fs-delete-git-dir",
      "6:fs-delete-outside-workspace",
    ]);
  });

  it("`rm -rf /etc` covers every file under /etc that the sandbox then reports", () => {
    const monitor = createRunMonitor();
    expect(
      ruleIds(monitor, [exec("r", 1, "rm -rf /etc"), deleted(2, "/etc/passwd"), deleted(3, "/etc/ssh/sshd_config")]),
    ).toEqual(["1:fs-delete-critical-path"]);
  });

  it("commands are never grouped: every `rm -rf` the agent runs is its own decision and alerts", () => {
    const monitor = createRunMonitor();
    expect(
      ruleIds(monitor, [exec("r", 1, "rm -rf .git"), exec("r", 2, "rm -rf .git"), deleted(3, ".git/HEAD")]),
    ).toEqual(["1:fs-delete-git-dir", "2:fs-delete-git-dir"]);
  });

  it("deletionQuietSeconds 0 turns grouping off: every deletion alerts", () => {
    const monitor = createRunMonitor({ destructive: { deletionQuietSeconds: 0 } });
    expect(ruleIds(monitor, [deleted(1, ".git/HEAD"), deleted(2, ".git/config")])).toEqual([
      "1:fs-delete-git-dir",
      "2:fs-delete-git-dir",
    ]);
  });

  it("grouping survives a restart: a run restored from its changelog value mid-episode keeps grouping", () => {
    const runs = inMemoryRunStates();
    const original = createRunMonitor({}, runs);
    ruleIds(original, [deleted(1, ".git/HEAD")]);
    const state = runs.get("r");
    if (state === undefined) throw new Error("run not held");
    const restoredRuns = inMemoryRunStates();
    restoredRuns.put("r", restoreRunState(serializeRunState(state)));
    const restored = createRunMonitor({}, restoredRuns);
    expect(ruleIds(restored, [deleted(2, ".git/config")])).toEqual([]);
    expect(restoredRuns.get("r")?.deletionsGrouped).toBe(1);
  });

  it("a changelog value written before grouping existed still restores (no episodes, nothing grouped)", () => {
    const runs = inMemoryRunStates();
    const monitor = createRunMonitor({}, runs);
    monitor.process(deleted(1, "src/a.ts"));
    const state = runs.get("r");
    if (state === undefined) throw new Error("run not held");
    const { deletionEpisodes: _episodes, deletionsGrouped: _grouped, ...older } = state;
    const restored = restoreRunState(JSON.stringify(older));
    expect(restored.deletionEpisodes).toEqual([]);
    expect(restored.deletionsGrouped).toBe(0);
    expect(serializeRunState(restored)).toBe(serializeRunState(state));
  });

  it(`memory is bounded: at most ${MAX_DELETION_EPISODES} episodes per run, the least recently active forgotten first`, () => {
    const runs = inMemoryRunStates();
    const monitor = createRunMonitor({}, runs);
    const directories = Array.from({ length: MAX_DELETION_EPISODES + 4 }, (_, index) =>
      deleted(1 + index, `/work/d${index}/f`),
    );
    expect(ruleIds(monitor, directories)).toHaveLength(MAX_DELETION_EPISODES + 4);
    expect(runs.get("r")?.deletionEpisodes).toHaveLength(MAX_DELETION_EPISODES);
    // /work/d0 was forgotten (it alerts again); the newest directory is still grouped.
    expect(ruleIds(monitor, [deleted(30, "/work/d0/g"), deleted(31, `/work/d${MAX_DELETION_EPISODES + 3}/g`)])).toEqual(
      ["30:fs-delete-outside-workspace"],
    );
  });
});
