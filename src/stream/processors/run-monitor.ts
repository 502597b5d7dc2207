import { isAgentEvent, type AgentEvent } from "../../contract/facts.ts";
import type { DecodedFact } from "../../kafka/serde/decode-fact.ts";
import {
  createCommandAnalyser,
  createRunMonitor,
  parseTripwireConfig,
  restoreRunState,
  serializeRunState,
  type RunState,
  type TripwireConfigInput,
} from "../../tripwires/index.ts";
import type { Processor, SinkRecord } from "../processor.ts";
import type { StoreCodec } from "../stores/changelogging-store.ts";
import type { KeyValueStore } from "../stores/key-value-store.ts";
import { processAgentEvents } from "./run-monitor-batch.ts";
import { InvariantError } from "../../errors.ts";

/** The store of run states (topology.ts), changelogged on the source's partition. */
export const RUN_STATES = "run-states";

/** A run state in the run-states changelog: its serialised form (serializeRunState). */
export const RUN_STATE_CODEC: StoreCodec<RunState> = {
  encode: serializeRunState,
  decode: (bytes) => restoreRunState(bytes.toString()),
};

/**
 * The run monitor as a processor: agent events (keyed by run_id) → one monitor per source
 * partition → alerts, the per-run summary, and the run-states store, whose changelog the runtime
 * writes to the partition the runs' events came from, so a member restores exactly its runs.
 * A re-processed batch is recognised by the monitor's (run_id, seq) de-duplication, and alert ids
 * are deterministic, so consumers can drop any repeat. A record that is not an agent event is a
 * dead letter.
 */
export function runMonitorProcessor(configInput: TripwireConfigInput = {}): Processor<DecodedFact> {
  const config = parseTripwireConfig(configInput);
  // Command analysis is pure and cached by command text: one analyser serves every partition.
  const analyser = createCommandAnalyser({
    protectedBranches: config.destructive.protectedBranches,
    cacheSize: config.analysisCacheSize,
  });
  return {
    name: "run-monitor",
    storeCodecs: { [RUN_STATES]: RUN_STATE_CODEC as StoreCodec<unknown> },
    open: (partition, stores, metrics) => {
      const runStates = stores.get(RUN_STATES) as KeyValueStore<RunState> | undefined;
      if (runStates === undefined)
        throw new InvariantError({ problem: `run-monitor: the runtime gave no "${RUN_STATES}" store` });
      // The monitor keeps its runs in the store (one copy of each state); the store logs what it touches.
      const monitor = createRunMonitor(config, runStates, analyser);
      return {
        process: (batch) => {
          const outputs: SinkRecord[] = [];
          const events: AgentEvent[] = [];
          for (const { value: parsed, position, original } of batch.records) {
            if (parsed.ok && isAgentEvent(parsed.fact)) {
              events.push(parsed.fact);
              continue;
            }
            const rejection = parsed.ok
              ? {
                  reason: "UNKNOWN_TYPE" as const,
                  field: "type",
                  detail: "only agent_step and sandbox_event records belong on the agent-events topic",
                }
              : parsed.rejection;
            outputs.push({
              topic: "deadLetters",
              key: "",
              value: { kind: "record", rejection, recordRejected: true, position, factId: parsed.factId, original },
            });
          }
          const result = processAgentEvents(monitor, events);
          for (const alert of result.alerts) outputs.push({ topic: "alerts", key: alert.run_id, value: alert });
          for (const [runId, summary] of result.runStates)
            outputs.push({ topic: "runState", key: runId, value: summary });
          if (result.alerts.length > 0)
            metrics.count("agentops_alerts_total", "Tripwire alerts written", {}, result.alerts.length);
          metrics.gauge(
            "agentops_active_runs",
            "Runs held by this member's run monitors",
            { partition: String(partition) },
            monitor.activeRuns(),
          );
          return { outputs };
        },
      };
    },
  };
}
