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
  /**
   * The run-states store's changelog for the batch: the serialised state of every touched run
   * still held, and a tombstone (null) for every run evicted and not started again. Restoring a
   * monitor from the compacted changelog gives the monitor this batch leaves behind.
   */
  readonly changelog: ReadonlyMap<string, string | null>;
}

/**
 * The run-monitor processor over one batch, without I/O: events in, alerts, run summaries and
 * changelog writes out. The Kafka member decodes, calls this, and sends the outputs; a unit test
 * calls it directly.
 */
export function processAgentEvents(monitor: RunMonitor, events: Iterable<AgentEvent>): RunMonitorBatchOutput {
  const alerts: TripwireAlert[] = [];
  const summaries = new Map<string, RunStateSummary>();
  const evicted = new Set<string>();
  for (const event of events) {
    const result = monitor.process(event);
    alerts.push(...result.alerts);
    summaries.set(result.runState.run_id, result.runState);
    for (const runId of result.evictedRunIds) evicted.add(runId);
  }
  const changelog = new Map<string, string | null>();
  for (const runId of summaries.keys()) {
    const state = monitor.serializedRunState(runId);
    if (state !== undefined) changelog.set(runId, state);
  }
  for (const runId of evicted) if (monitor.serializedRunState(runId) === undefined) changelog.set(runId, null);
  return { alerts, runStates: summaries, changelog };
}
