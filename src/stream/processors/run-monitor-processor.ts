import { Effect } from "effect";
import type { EachBatchPayload, Message } from "kafkajs";
import { isAgentEvent, type AgentEvent } from "../../contract/facts.ts";
import { createCommandAnalyser, createRunMonitor, parseTripwireConfig, restoreRunState, type RunMonitor, type RunState } from "../../tripwires/index.ts";
import { deadLetterMessage } from "./dead-letter-message.ts";
import { processAgentEvents } from "./run-monitor-batch.ts";
import { Processors, type ProcessorEnvironment } from "../runtime/processor-environment.ts";
import { readTopicToEnd } from "../../kafka/read-topic.ts";
import { runConsumer } from "../runtime/run-consumer.ts";
import { TOPOLOGY } from "../topology.ts";
import { decodeAgentEventRecord } from "../../kafka/serde/agent-events-record.ts";

/**
 * The run monitor on Kafka: agent events (keyed by run_id) → per-partition monitors → alerts,
 * the per-run summary (compacted run-state topic) and the per-run state changelog. The changelog
 * has the agent-events topic's partitioning and is written to the same partition number, so on
 * assignment a member restores exactly its runs. Each batch's outputs are acknowledged before its
 * offsets are committed; a re-processed batch is recognised by the monitor's (run_id, seq)
 * de-duplication, and alert ids are deterministic, so consumers can drop any repeat.
 */
export const runMonitorProcessor = Effect.gen(function* () {
  const environment = yield* Processors;
  const member = new RunMonitorMember(environment);
  yield* runConsumer(environment, {
    role: "run-monitor",
    topic: environment.topics[TOPOLOGY["run-monitor"].source],
    fromBeginning: true,
    onAssignment: (partitions) => member.assigned(partitions),
    eachBatch: (payload) => member.handleBatch(payload),
  });
});

class RunMonitorMember {
  private readonly monitors = new Map<number, RunMonitor>();
  private readonly config = parseTripwireConfig();
  /** Command analysis is pure and cached by command text: one analyser serves every partition. */
  private readonly analyser = createCommandAnalyser({ protectedBranches: this.config.destructive.protectedBranches, cacheSize: this.config.analysisCacheSize });
  private ready: Promise<void> = Promise.resolve();
  private readonly environment: ProcessorEnvironment;

  constructor(environment: ProcessorEnvironment) {
    this.environment = environment;
  }

  assigned(partitions: readonly number[]): Promise<void> {
    this.ready = this.restore(partitions);
    return this.ready;
  }

  private async restore(partitions: readonly number[]): Promise<void> {
    this.monitors.clear();
    const states = new Map<number, Map<string, RunState>>(partitions.map((partition) => [partition, new Map()]));
    await readTopicToEnd(this.environment.kafka, this.environment.topics.runMonitorChangelog, (message, partition) => {
      const runs = states.get(partition);
      const runId = message.key?.toString("utf8");
      if (runs === undefined || runId === undefined) return;
      if (message.value === null) runs.delete(runId);
      else runs.set(runId, restoreRunState(message.value.toString("utf8")));
    });
    for (const [partition, runs] of states) this.monitors.set(partition, createRunMonitor(this.config, { runs: [...runs.values()] }, this.analyser));
    this.environment.logger.info({ processor: "run-monitor", partitions, restoredRuns: [...states.values()].reduce((sum, runs) => sum + runs.size, 0) }, "run monitor state restored");
  }

  async handleBatch(payload: EachBatchPayload): Promise<void> {
    await this.ready;
    const { batch } = payload;
    const monitor = this.monitors.get(batch.partition);
    if (monitor === undefined) return;
    const { serde, topics, telemetry } = this.environment;
    const deadLetters: Message[] = [];
    const events: AgentEvent[] = [];
    let lastOffset: string | undefined;
    for (const message of batch.messages) {
      if (!payload.isRunning() || payload.isStale()) break;
      const parsed = await decodeAgentEventRecord(this.environment.registry, message.value);
      const source = { topic: batch.topic, partition: batch.partition, offset: message.offset };
      if (!parsed.ok || !isAgentEvent(parsed.fact)) {
        const rejection = parsed.ok ? { reason: "UNKNOWN_TYPE" as const, field: "type", detail: "only agent_step and sandbox_event records belong on the agent-events topic" } : parsed.rejection;
        deadLetters.push(await deadLetterMessage(serde, telemetry, { ...rejection, source, factId: parsed.factId, key: message.key, value: message.value }));
      } else {
        events.push(parsed.fact);
      }
      lastOffset = message.offset;
    }
    const output = processAgentEvents(monitor, events);
    const alerts: Message[] = [];
    for (const alert of output.alerts) alerts.push({ key: alert.run_id, value: await serde.encodeAlert(alert) });
    // Alerts first, on their own: an operator waits for them; run state and changelog can follow.
    if (alerts.length > 0 || deadLetters.length > 0) {
      await this.environment.send([{ topic: topics.alerts, messages: alerts }, { topic: topics.deadLetters, messages: deadLetters }].filter((entry) => entry.messages.length > 0));
    }
    // The changelog goes to the partition the runs' events came from, so a member restores exactly its runs.
    const changelog: Message[] = [...output.changelog].map(([runId, value]) => ({ key: runId, value, partition: batch.partition }));
    const runState: Message[] = [...output.runStates].map(([runId, summary]) => ({ key: runId, value: JSON.stringify(summary) }));
    const stateMessages = [
      { topic: topics.runState, messages: runState },
      { topic: topics.runMonitorChangelog, messages: changelog },
    ].filter((entry) => entry.messages.length > 0);
    if (stateMessages.length > 0) await this.environment.send(stateMessages);
    if (alerts.length > 0) telemetry.count("agentops_alerts_total", "Tripwire alerts written", {}, alerts.length);
    telemetry.gauge("agentops_active_runs", "Runs held by this member's run monitors", { partition: String(batch.partition) }, monitor.activeRuns());
    if (lastOffset !== undefined) {
      payload.resolveOffset(lastOffset);
      telemetry.count("agentops_records_processed_total", "Records processed, by processor", { processor: "run-monitor" }, batch.messages.length);
    }
    await payload.heartbeat();
  }
}
