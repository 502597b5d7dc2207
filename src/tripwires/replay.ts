import type { AgentEvent } from "../contract/facts.ts";
import { compareAlerts, type TripwireAlert } from "./alert.ts";
import type { RunStateSummary } from "./run-state.ts";
import type { TripwireConfigInput } from "./config.ts";
import { createRunMonitor } from "./monitor.ts";

/** A run monitor fed one record at a time, whose alerts come back together at the end. */
export interface RunMonitorReplay {
  accept(event: AgentEvent): void;
  /** Every alert so far, sorted by (event_time, run_id, seq range, rule_id, alert_id). */
  finish(): TripwireAlert[];
  /** The last run-state summary of every run, by run id: what the run-state topic would hold. */
  runStates(): readonly RunStateSummary[];
}

/**
 * Embedded replay of the run monitor (`agentops replay`, the tests): a fresh monitor over the
 * records in the given order. The same records in the same order always give byte-identical alerts.
 */
export function runMonitorReplay(config: TripwireConfigInput = {}): RunMonitorReplay {
  const monitor = createRunMonitor(config);
  const alerts: TripwireAlert[] = [];
  const runs = new Map<string, RunStateSummary>();
  return {
    accept: (event) => {
      const result = monitor.process(event);
      alerts.push(...result.alerts);
      runs.set(result.runState.run_id, result.runState);
    },
    finish: () => [...alerts].sort(compareAlerts),
    runStates: () => [...runs.keys()].sort().map((runId) => runs.get(runId) as RunStateSummary),
  };
}

/** The whole replay over an array of records. */
export function replayAgentEvents(events: readonly AgentEvent[], config: TripwireConfigInput = {}): TripwireAlert[] {
  const replay = runMonitorReplay(config);
  for (const event of events) replay.accept(event);
  return replay.finish();
}
