import type { AgentEvent } from "../../../contract/facts.ts";
import { compareAlerts, createRunMonitor, type TripwireAlert, type TripwireConfigInput } from "../../../tripwires/index.ts";
import type { AgentEventSink } from "./replay-file.ts";

/** The run monitor as the replay's agent-event sink: alerts in file order, sorted at the end. */
export function runMonitorSink(config: TripwireConfigInput = {}): AgentEventSink {
  const monitor = createRunMonitor(config);
  const alerts: TripwireAlert[] = [];
  return {
    accept(event: AgentEvent): void {
      alerts.push(...monitor.process(event).alerts);
    },
    finish(): readonly TripwireAlert[] {
      return [...alerts].sort(compareAlerts);
    },
  };
}
