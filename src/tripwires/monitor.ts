import type { AgentEvent } from "../contract/facts.ts";
import type { TripwireAlert } from "./alert.ts";
import { createCommandAnalyser, type CommandAnalyser } from "./commands/command-analyser.ts";
import { parseTripwireConfig, type TripwireConfig, type TripwireConfigInput } from "./config.ts";
import { emptyRunState, serializeRunState, summariseRun, type RunState, type RunStateSummary } from "./run-state.ts";
import { stepRun } from "./run-step.ts";

/**
 * The run monitor over many runs: routes each record to its run's state, evicts idle runs by
 * event time (no wall clock), and answers with the alerts and the run's summary record.
 */
export interface MonitorResult {
  readonly alerts: readonly TripwireAlert[];
  readonly runState: RunStateSummary;
  /** Runs evicted for idleness while processing this record (tombstone their changelog keys). */
  readonly evictedRunIds: readonly string[];
}

export interface RunMonitor {
  readonly config: TripwireConfig;
  process(event: AgentEvent): MonitorResult;
  /** The run's state as it would be written to the changelog, or undefined if not held. */
  exportRunState(runId: string): RunState | undefined;
  /** The run's serialised changelog value, without the defensive copy exportRunState makes. */
  serializedRunState(runId: string): string | undefined;
  /** Puts back a run state read from the changelog (on start or rebalance). */
  importRunState(state: RunState): void;
  activeRuns(): number;
}

/** The runs a monitor starts from (restored from the per-run changelog on start or rebalance). */
export interface MonitorState {
  readonly runs: readonly RunState[];
}

const MINUTE_MS = 60_000;

export function createRunMonitor(configInput: TripwireConfigInput = {}, initial?: MonitorState, sharedAnalyser?: CommandAnalyser): RunMonitor {
  const config = parseTripwireConfig(configInput);
  const analyser = sharedAnalyser ?? createCommandAnalyser({ protectedBranches: config.destructive.protectedBranches, cacheSize: config.analysisCacheSize });
  const runs = new Map<string, RunState>();
  const idleMs = config.idleExpiryMinutes * MINUTE_MS;
  // Sweeping is O(runs), so it happens once per event-time minute of the watermark. The sweep
  // points depend only on the watermark, which is derived from the runs themselves, so a monitor
  // restored from its runs' states sweeps at exactly the same points as the original.
  let watermark = Number.NEGATIVE_INFINITY;
  let sweptMinute = Number.NEGATIVE_INFINITY;
  const adopt = (state: RunState): void => {
    runs.set(state.runId, state);
    if (state.lastEventTime > watermark) {
      watermark = state.lastEventTime;
      sweptMinute = Math.floor(watermark / MINUTE_MS);
    }
  };
  for (const state of initial?.runs ?? []) adopt(structuredClone(state));

  const sweep = (): string[] => {
    const minute = Math.floor(watermark / MINUTE_MS);
    if (minute === sweptMinute) return [];
    sweptMinute = minute;
    const evicted: string[] = [];
    for (const [runId, state] of runs) if (state.lastEventTime < watermark - idleMs) evicted.push(runId);
    for (const runId of evicted) runs.delete(runId);
    return evicted.sort();
  };

  return {
    config,
    process(event) {
      let state = runs.get(event.run_id);
      if (state === undefined) {
        state = emptyRunState(event.run_id, event.event_time);
        runs.set(event.run_id, state);
      }
      const alerts = stepRun(state, event, config, analyser);
      if (event.event_time > watermark) watermark = event.event_time;
      const runState = summariseRun(state);
      return { alerts, runState, evictedRunIds: sweep() };
    },
    exportRunState: (runId) => {
      const state = runs.get(runId);
      return state === undefined ? undefined : structuredClone(state);
    },
    serializedRunState: (runId) => {
      const state = runs.get(runId);
      return state === undefined ? undefined : serializeRunState(state);
    },
    importRunState: (state) => adopt(structuredClone(state)),
    activeRuns: () => runs.size,
  };
}
