import type { AgentEvent } from "../contract/facts.ts";
import { compareAlerts, createRunMonitor, type RunStateSummary, type TripwireAlert, type TripwireConfigInput } from "../tripwires/index.ts";
import type { AgentEventSink } from "./replay-file.ts";

export interface RunMonitorSink extends AgentEventSink {
  finish(): readonly TripwireAlert[];
  /** The last run-state summary of every run, by run id: what the run-state topic would hold. */
  runStates(): readonly RunStateSummary[];
}

/** The run monitor as the replay's agent-event sink: alerts in file order, sorted at the end. */
export function runMonitorSink(config: TripwireConfigInput = {}): RunMonitorSink {
  const monitor = createRunMonitor(config);
  const alerts: TripwireAlert[] = [];
  const runs = new Map<string, RunStateSummary>();
  return {
    accept(event: AgentEvent): void {
      const result = monitor.process(event);
      alerts.push(...result.alerts);
      runs.set(result.runState.run_id, result.runState);
    },
    finish(): readonly TripwireAlert[] {
      return [...alerts].sort(compareAlerts);
    },
    runStates(): readonly RunStateSummary[] {
      return [...runs.keys()].sort().map((runId) => runs.get(runId) as RunStateSummary);
    },
  };
}
