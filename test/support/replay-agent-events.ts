import type { AgentEvent } from "../../src/contract/facts.ts";
import {
  compareAlerts,
  createRunMonitor,
  type TripwireAlert,
  type TripwireConfigInput,
} from "../../src/tripwires/index.ts";

/**
 * The alerts of a fresh run monitor over events in the given order, sorted as the embedded replay
 * writes them: the tests' expected answer (`agentops replay` runs the monitor in the topology).
 */
export function replayAgentEvents(events: readonly AgentEvent[], config: TripwireConfigInput = {}): TripwireAlert[] {
  const monitor = createRunMonitor(config);
  const alerts: TripwireAlert[] = [];
  for (const event of events) alerts.push(...monitor.process(event).alerts);
  return alerts.sort(compareAlerts);
}
