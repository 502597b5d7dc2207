import type { AgentEvent } from "../contract/facts.ts";
import { compareAlerts, type TripwireAlert } from "./alert.ts";
import type { TripwireConfigInput } from "./config.ts";
import { createRunMonitor } from "./monitor.ts";

/** A run monitor fed one record at a time, whose alerts come back together at the end. */
export interface RunMonitorReplay {
  accept(event: AgentEvent): void;
  /** Every alert so far, sorted by (event_time, run_id, seq range, rule_id, alert_id). */
  finish(): TripwireAlert[];
}

/**
 * Embedded replay of the run monitor (`agentops replay`, the tests): a fresh monitor over the
 * records in the given order. The same records in the same order always give byte-identical alerts.
 */
export function runMonitorReplay(config: TripwireConfigInput = {}): RunMonitorReplay {
  const monitor = createRunMonitor(config);
  const alerts: TripwireAlert[] = [];
  return {
    accept: (event) => {
      alerts.push(...monitor.process(event).alerts);
    },
    finish: () => [...alerts].sort(compareAlerts),
  };
}

/** The whole replay over an array of records. */
export function replayAgentEvents(events: readonly AgentEvent[], config: TripwireConfigInput = {}): TripwireAlert[] {
  const replay = runMonitorReplay(config);
  for (const event of events) replay.accept(event);
  return replay.finish();
}
