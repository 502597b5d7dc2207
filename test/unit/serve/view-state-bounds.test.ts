import { describe, expect, it } from "vitest";
import { ViewState, VIEW_LIMITS, type AlertRecord, type RunRecord } from "../../../src/serve/view-state.ts";

/** A view that follows its topics for months keeps memory flat: the newest alerts, the freshest runs. */

const alert = (n: number): AlertRecord => ({
  alert_id: `alert-${n}`,
  run_id: `run-${n % 7}`,
  rule_id: "fs-delete-root",
  severity: "critical",
  kind: "destructive",
  event_time: "2026-10-01T00:00:00.000Z",
  message: "rm -rf /",
});
const run = (n: number, steps: number): RunRecord => ({ run_id: `run-${n}`, steps_seen: steps });

describe("view state bounds", () => {
  it("keeps the newest alerts up to the limit and counts the ones let go", () => {
    const state = new ViewState({ mode: "kafka", description: "test", error: null }, { maxAlerts: 3, maxRuns: 10 });
    for (let n = 0; n < 10; n += 1) state.addAlert(alert(n));
    const snapshot = state.snapshot();
    expect(snapshot.alerts.map((kept) => kept.alert_id)).toEqual(["alert-7", "alert-8", "alert-9"]);
    expect(snapshot.folded).toEqual({ alerts: 7, runs: 0 });
    expect(snapshot.limits).toEqual({ maxAlerts: 3, maxRuns: 10 });
  });

  it("a redelivered alert that is still kept is not counted twice", () => {
    const state = new ViewState({ mode: "kafka", description: "test", error: null }, { maxAlerts: 3, maxRuns: 10 });
    for (const n of [1, 2, 2, 1, 3]) state.addAlert(alert(n));
    expect(state.snapshot().alerts).toHaveLength(3);
    expect(state.snapshot().folded.alerts).toBe(0);
  });

  it("lets go of the run updated longest ago, not the one inserted first", () => {
    const state = new ViewState({ mode: "kafka", description: "test", error: null }, { maxAlerts: 10, maxRuns: 2 });
    state.setRun(run(1, 1));
    state.setRun(run(2, 1));
    state.setRun(run(1, 2)); // run-1 is now the freshest
    state.setRun(run(3, 1));
    const snapshot = state.snapshot();
    expect(snapshot.runs.map((kept) => kept.run_id)).toEqual(["run-1", "run-3"]);
    expect(snapshot.runs[0]?.steps_seen).toBe(2);
    expect(snapshot.folded).toEqual({ alerts: 0, runs: 1 });
  });

  it("the default limits apply to a view built without any", () => {
    const state = new ViewState({ mode: "files", description: "test", error: null });
    for (let n = 0; n < VIEW_LIMITS.maxAlerts + 5; n += 1) state.addAlert(alert(n));
    expect(state.snapshot().alerts).toHaveLength(VIEW_LIMITS.maxAlerts);
    expect(state.snapshot().folded.alerts).toBe(5);
  });
});
