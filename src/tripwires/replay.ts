import type { AgentEvent } from "../contract/facts.ts";
import { compareAlerts, type TripwireAlert } from "./alert.ts";
import type { TripwireConfigInput } from "./config.ts";
import { createRunMonitor } from "./monitor.ts";

/**
 * Embedded replay for `agentops replay`: feeds the records in the given order through a fresh
 * monitor and returns every alert, sorted by (event_time, run_id, seq range, rule_id, alert_id).
 * The same records in the same order always give byte-identical alerts.
 */
export function replayAgentEvents(events: readonly AgentEvent[], config: TripwireConfigInput = {}): TripwireAlert[] {
  const monitor = createRunMonitor(config);
  const alerts: TripwireAlert[] = [];
  for (const event of events) alerts.push(...monitor.process(event).alerts);
  return alerts.sort(compareAlerts);
}
