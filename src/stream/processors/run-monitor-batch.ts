import type { AgentEvent } from "../../contract/facts.ts";
import type { RunMonitor, RunStateSummary, TripwireAlert } from "../../tripwires/index.ts";

/** What one batch of agent events produces, before anything is encoded or sent. */
export interface RunMonitorBatchOutput {
  readonly alerts: readonly TripwireAlert[];
  /**
   * The last summary of every run the batch touched (run-state topic), also of a run evicted in
   * the same batch: its final summary is what the compacted topic should keep.
   */
  readonly runStates: ReadonlyMap<string, RunStateSummary>;
}

/**
 * The run monitor over one batch, without I/O: events in, alerts and run summaries out. The
 * runs' states are in the monitor's store, whose changelog (every run the batch touched, a
 * tombstone for each run evicted) the runtime writes; a unit test calls this directly.
 */
export function processAgentEvents(monitor: RunMonitor, events: Iterable<AgentEvent>): RunMonitorBatchOutput {
  const alerts: TripwireAlert[] = [];
  const summaries = new Map<string, RunStateSummary>();
  for (const event of events) {
    const result = monitor.process(event);
    alerts.push(...result.alerts);
    summaries.set(result.runState.run_id, result.runState);
  }
  return { alerts, runStates: summaries };
}
