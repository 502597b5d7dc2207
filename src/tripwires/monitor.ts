import type { AgentEvent } from "../contract/facts.ts";
import type { TripwireAlert } from "./alert.ts";
import { createCommandAnalyser, type CommandAnalyser } from "./commands/command-analyser.ts";
import { parseTripwireConfig, type TripwireConfig, type TripwireConfigInput } from "./config.ts";
import { emptyRunState, summariseRun, type RunState, type RunStateSummary } from "./run-state.ts";
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
  activeRuns(): number;
}

/**
 * Where a monitor keeps its runs' states: the monitor reads and writes through it, and mutates a
 * state it got in place, then puts it back. The stream's run monitor gives it the task's
 * changelogged store (restored from the per-run changelog on start or rebalance), so each state is
 * held once and the store logs every run a batch touched.
 */
export interface RunStateStore {
  get(runId: string): RunState | undefined;
  put(runId: string, state: RunState): void;
  delete(runId: string): void;
  entries(): IterableIterator<[string, RunState]>;
  readonly size: number;
}

/** A store of run states in memory, for a monitor that is not restored (replays, tests). */
export function inMemoryRunStates(): RunStateStore {
  const runs = new Map<string, RunState>();
  return {
    get: (runId) => runs.get(runId),
    put: (runId, state) => void runs.set(runId, state),
    delete: (runId) => void runs.delete(runId),
    entries: () => runs.entries(),
    get size() {
      return runs.size;
    },
  };
}

const MINUTE_MS = 60_000;

export function createRunMonitor(
  configInput: TripwireConfigInput = {},
  runs: RunStateStore = inMemoryRunStates(),
  sharedAnalyser?: CommandAnalyser,
): RunMonitor {
  const config = parseTripwireConfig(configInput);
  const analyser =
    sharedAnalyser ??
    createCommandAnalyser({
      protectedBranches: config.destructive.protectedBranches,
      cacheSize: config.analysisCacheSize,
    });
  const idleMs = config.idleExpiryMinutes * MINUTE_MS;
  // Sweeping is O(runs), so it happens once per event-time minute of the watermark. The sweep
  // points depend only on the watermark, which is derived from the runs themselves, so a monitor
  // over restored states sweeps at exactly the same points as the original.
  let watermark = Number.NEGATIVE_INFINITY;
  for (const [, state] of runs.entries()) if (state.lastEventTime > watermark) watermark = state.lastEventTime;
  let sweptMinute = Number.isFinite(watermark) ? Math.floor(watermark / MINUTE_MS) : Number.NEGATIVE_INFINITY;

  const sweep = (): string[] => {
    const minute = Math.floor(watermark / MINUTE_MS);
    if (minute === sweptMinute) return [];
    sweptMinute = minute;
    const evicted: string[] = [];
    for (const [runId, state] of runs.entries()) if (state.lastEventTime < watermark - idleMs) evicted.push(runId);
    for (const runId of evicted) runs.delete(runId);
    return evicted.sort();
  };

  return {
    config,
    process(event) {
      const state = runs.get(event.run_id) ?? emptyRunState(event.run_id, event.event_time);
      const alerts = stepRun(state, event, config, analyser);
      runs.put(event.run_id, state);
      if (event.event_time > watermark) watermark = event.event_time;
      const runState = summariseRun(state);
      return { alerts, runState, evictedRunIds: sweep() };
    },
    activeRuns: () => runs.size,
  };
}
