import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../../src/contract/facts.ts";
import { canonicalJson } from "../../../../src/contract/canonical-json.ts";
import { processAgentEvents } from "../../../../src/stream/processors/run-monitor-batch.ts";
import { createRunMonitor, replayAgentEvents, restoreRunState, type TripwireAlert } from "../../../../src/tripwires/index.ts";
import { exec, toolCall } from "../../tripwires/events.ts";

/** Two runs: a loop of repeated tool calls in one, a destructive command in the other. */
const EVENTS: AgentEvent[] = [
  ...["A", "B", "A", "B", "A", "B"].map((input, seq) => toolCall("run-loop", seq, "shell", input)),
  exec("run-rm", 1, "ls"),
  exec("run-rm", 2, "rm -rf /"),
  exec("run-rm", 3, "git push --force origin main"),
];

const bytes = (alerts: readonly TripwireAlert[]): string => canonicalJson([...alerts].sort((a, b) => (a.alert_id < b.alert_id ? -1 : 1)));

describe("the run-monitor processor over a batch (no broker)", () => {
  it("gives the embedded replay's alerts, a summary and a changelog value per touched run", () => {
    const output = processAgentEvents(createRunMonitor(), EVENTS);
    expect(output.alerts.length).toBeGreaterThan(1);
    expect(bytes(output.alerts)).toBe(bytes(replayAgentEvents(EVENTS)));
    expect([...output.runStates.keys()].sort()).toEqual(["run-loop", "run-rm"]);
    expect([...output.changelog.keys()].sort()).toEqual(["run-loop", "run-rm"]);
    for (const value of output.changelog.values()) expect(value).not.toBeNull();
  });

  it("restored from its compacted changelog after any batch, goes on exactly as without the restart", () => {
    for (let cut = 0; cut <= EVENTS.length; cut += 1) {
      const first = createRunMonitor();
      const before = processAgentEvents(first, EVENTS.slice(0, cut));
      const compacted = new Map<string, string>();
      for (const [runId, value] of before.changelog) if (value === null) compacted.delete(runId);
      else compacted.set(runId, value);
      const restored = createRunMonitor({}, { runs: [...compacted.values()].map(restoreRunState) });
      const after = processAgentEvents(restored, EVENTS.slice(cut));
      expect(bytes([...before.alerts, ...after.alerts]), `cut at ${cut}`).toBe(bytes(replayAgentEvents(EVENTS)));
    }
  });

  it("tombstones a run evicted for idleness (by event time), and only that run", () => {
    const monitor = createRunMonitor({ idleExpiryMinutes: 30 });
    processAgentEvents(monitor, [exec("run-old", 0, "ls")]);
    // 31 minutes of event time later, another run's event moves the watermark past the idle limit.
    const output = processAgentEvents(monitor, [exec("run-new", 31 * 60, "ls")]);
    expect(output.changelog.get("run-old")).toBeNull();
    expect(typeof output.changelog.get("run-new")).toBe("string");
    expect(output.runStates.has("run-old")).toBe(false);
    expect(monitor.activeRuns()).toBe(1);
  });
});
