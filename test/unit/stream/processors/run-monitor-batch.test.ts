import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../../src/contract/facts.ts";
import { canonicalJson } from "../../../../src/contract/canonical-json.ts";
import { processAgentEvents } from "../../../../src/stream/processors/run-monitor-batch.ts";
import { RUN_STATE_CODEC, RUN_STATES } from "../../../../src/stream/processors/run-monitor.ts";
import { ChangeLoggingKeyValueStore } from "../../../../src/stream/stores/changelogging-store.ts";
import { InMemoryKeyValueStore } from "../../../../src/stream/stores/key-value-store.ts";
import { createRunMonitor, type RunState, type TripwireAlert } from "../../../../src/tripwires/index.ts";
import { replayAgentEvents } from "../../../support/replay-agent-events.ts";
import { exec, toolCall } from "../../tripwires/events.ts";

/** Two runs: a loop of repeated tool calls in one, a destructive command in the other. */
const EVENTS: AgentEvent[] = [
  ...["A", "B", "A", "B", "A", "B"].map((input, seq) => toolCall("run-loop", seq, "shell", input)),
  exec("run-rm", 1, "ls"),
  exec("run-rm", 2, "rm -rf /"),
  exec("run-rm", 3, "git push --force origin main"),
];

const bytes = (alerts: readonly TripwireAlert[]): string =>
  canonicalJson([...alerts].sort((a, b) => (a.alert_id < b.alert_id ? -1 : 1)));

/** The run-states store as the runtime gives it to the run monitor: changelogged, in memory. */
const runStatesStore = (): ChangeLoggingKeyValueStore<RunState> =>
  new ChangeLoggingKeyValueStore(new InMemoryKeyValueStore<RunState>(RUN_STATES), RUN_STATE_CODEC);

describe("the run-monitor processor over a batch (no broker)", () => {
  it("gives the embedded replay's alerts, a summary and a changelog value per touched run", () => {
    const store = runStatesStore();
    const output = processAgentEvents(createRunMonitor({}, store), EVENTS);
    expect(output.alerts.length).toBeGreaterThan(1);
    expect(bytes(output.alerts)).toBe(bytes(replayAgentEvents(EVENTS)));
    expect([...output.runStates.keys()].sort()).toEqual(["run-loop", "run-rm"]);
    const changelog = store.drain();
    expect(changelog.map(([runId]) => runId).sort()).toEqual(["run-loop", "run-rm"]);
    for (const [, value] of changelog) expect(typeof value).toBe("string");
  });

  it("restored from its compacted changelog after any batch, goes on exactly as without the restart", () => {
    for (let cut = 0; cut <= EVENTS.length; cut += 1) {
      const store = runStatesStore();
      const before = processAgentEvents(createRunMonitor({}, store), EVENTS.slice(0, cut));
      const restored = runStatesStore();
      for (const [runId, value] of store.drain()) restored.restore(runId, value);
      const after = processAgentEvents(createRunMonitor({}, restored), EVENTS.slice(cut));
      expect(bytes([...before.alerts, ...after.alerts]), `cut at ${cut}`).toBe(bytes(replayAgentEvents(EVENTS)));
    }
  });

  it("tombstones a run evicted for idleness (by event time), and only that run", () => {
    const store = runStatesStore();
    const monitor = createRunMonitor({ idleExpiryMinutes: 30 }, store);
    processAgentEvents(monitor, [exec("run-old", 0, "ls")]);
    store.drain();
    // 31 minutes of event time later, another run's event moves the watermark past the idle limit.
    const output = processAgentEvents(monitor, [exec("run-new", 31 * 60, "ls")]);
    const changelog = new Map(store.drain());
    expect(changelog.get("run-old")).toBeNull();
    expect(typeof changelog.get("run-new")).toBe("string");
    expect(output.runStates.has("run-old")).toBe(false);
    expect(monitor.activeRuns()).toBe(1);
  });
});
