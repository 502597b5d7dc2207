import { Effect } from "effect";
import type { Consumer, EachBatchPayload, Message } from "kafkajs";
import type { Conflict } from "../../metrics/fact-ledger.ts";
import { MetricEngine } from "../../metrics/metric-engine.ts";
import type { ResultChange } from "../../metrics/result-record.ts";
import { reconcileResults } from "./reconcile-results.ts";
import type { DeadLetterRecord } from "../../contract/dead-letter.ts";
import { conflictRejection } from "./conflict-rejection.ts";
import { deadLetterMessage } from "./dead-letter-message.ts";
import { decodeEngineFact } from "../../kafka/serde/engine-facts-record.ts";
import { Processors, type ProcessorEnvironment } from "../runtime/processor-environment.ts";
import { readTopicToEnd } from "../../kafka/read-topic.ts";
import { runConsumer } from "../runtime/run-consumer.ts";
import { TOPOLOGY } from "../topology.ts";

/**
 * The metric engine on Kafka. Its input topic (accepted facts, one partition, compacted by fact
 * version) is also its changelog: on every assignment the member rebuilds the engine from offset
 * 0 without publishing, then reconciles the results topic (upserts each result whose value differs
 * from the topic's, tombstones keys that no longer exist: a restart with no new facts writes
 * nothing), then goes live, publishing each batch's changed results.
 * Results are upserts of whole values under a stable key, so a re-processed batch rewrites the
 * same values: nothing can be counted twice. See docs/architecture.md for why one partition.
 */
export const engineProcessor = Effect.gen(function* () {
  const environment = yield* Processors;
  const state = new EngineMember(environment);
  yield* runConsumer(environment, {
    role: "engine",
    topic: environment.topics[TOPOLOGY.engine.source],
    fromBeginning: true,
    commitOffsets: false,
    onAssignment: (partitions, consumer) => state.assigned(partitions, consumer),
    eachBatch: (payload) => state.handleBatch(payload),
  });
});

/** Backlog (records behind the high watermark) above which a batch's flush may be deferred. */
const FLUSH_BACKLOG_THRESHOLD = 20_000n;
/** Deferred flushes still happen at least this often, so results keep moving during catch-up. */
const FLUSH_EVERY_FACTS = 100_000;

class EngineMember {
  private engine: MetricEngine | undefined;
  /** Offset (exclusive) up to which the member is restoring silently; undefined once live. */
  private restoreEnd: bigint | undefined;
  /** Facts ingested since the last flush (see handleBatch). */
  private unflushed = 0;
  /** Settles when the latest assignment has been prepared; batches wait for it. */
  private ready: Promise<void> = Promise.resolve();
  private readonly environment: ProcessorEnvironment;

  constructor(environment: ProcessorEnvironment) {
    this.environment = environment;
  }

  assigned(partitions: readonly number[], consumer: Consumer): Promise<void> {
    this.ready = this.prepare(partitions, consumer);
    return this.ready;
  }

  private async prepare(partitions: readonly number[], consumer: Consumer): Promise<void> {
    if (!partitions.includes(0)) {
      this.engine = undefined;
      this.restoreEnd = undefined;
      return;
    }
    const admin = this.environment.kafka.admin();
    await admin.connect();
    try {
      const offsets = await admin.fetchTopicOffsets(this.environment.topics.engineFacts);
      this.restoreEnd = BigInt(offsets.find((entry) => entry.partition === 0)?.high ?? "0");
    } finally {
      await admin.disconnect();
    }
    this.unflushed = 0;
    this.engine = new MetricEngine({ windowMillis: this.environment.config.windowMillis, coverageThresholdHundredths: this.environment.config.coverageThresholdHundredths }, this.environment.catalog);
    // Rebuild from the very beginning whatever position the group client would resume from.
    consumer.seek({ topic: this.environment.topics.engineFacts, partition: 0, offset: "0" });
    this.environment.logger.info({ processor: "engine", restoreEnd: this.restoreEnd.toString() }, "rebuilding engine state from its input topic");
    if (this.restoreEnd === 0n) await this.goLive();
  }

  async handleBatch(payload: EachBatchPayload): Promise<void> {
    await this.ready;
    const engine = this.engine;
    if (engine === undefined) return;
    const { batch } = payload;
    const conflicts: Message[] = [];
    for (const message of batch.messages) {
      if (!payload.isRunning() || payload.isStale()) return;
      const decoded = message.value === null ? undefined : decodeEngineFact(message.value);
      if (decoded !== undefined) {
        const outcome = engine.ingest(decoded.fact, originOf(decoded.source));
        const conflict = outcome.kind === "quarantined" ? outcome.conflict : engine.laterTerminalConflict(decoded.fact);
        if (conflict !== undefined && this.restoreEnd === undefined) conflicts.push(await this.conflictLetter(decoded.source, decoded.fact.fact_id, conflict));
      }
      payload.resolveOffset(message.offset);
      if (this.restoreEnd !== undefined && BigInt(message.offset) + 1n >= this.restoreEnd) await this.goLive();
    }
    this.environment.telemetry.count("agentops_records_processed_total", "Records processed, by processor", { processor: "engine" }, batch.messages.length);
    if (this.restoreEnd !== undefined) {
      await payload.heartbeat();
      return;
    }
    // Catching up on a backlog, results for facts the next batches will change again are not worth
    // publishing: flush once the backlog is small, or at least every FLUSH_EVERY_FACTS facts. At the
    // head of the stream every batch is flushed, so live latency is unchanged.
    this.unflushed += batch.messages.length;
    const backlog = BigInt(batch.highWatermark) - BigInt(batch.lastOffset()) - 1n;
    if (backlog > FLUSH_BACKLOG_THRESHOLD && this.unflushed < FLUSH_EVERY_FACTS) {
      await this.publish([], conflicts);
    } else {
      this.unflushed = 0;
      await this.publish(engine.flush(), conflicts);
    }
    await payload.heartbeat();
  }

  private async goLive(): Promise<void> {
    const engine = this.engine;
    if (engine === undefined) return;
    engine.flush();
    const current = new Map(engine.results().map((entry) => [entry.key, entry.result] as const));
    const onTopic = new Map<string, Buffer>();
    await readTopicToEnd(this.environment.kafka, this.environment.topics.results, (message) => {
      const key = message.key?.toString("utf8");
      if (key === undefined) return;
      if (message.value === null) onTopic.delete(key);
      else onTopic.set(key, message.value);
    });
    const { upserts, tombstones } = await reconcileResults(current, onTopic, (result) => this.environment.serde.encodeResult(result));
    await this.send([...upserts, ...tombstones.map((key) => ({ key, value: null }))], []);
    this.restoreEnd = undefined;
    this.environment.logger.info({ processor: "engine", results: current.size, upserts: upserts.length, tombstones: tombstones.length }, "engine state rebuilt; results reconciled; live");
  }

  private async publish(changes: readonly ResultChange[], conflicts: readonly Message[]): Promise<void> {
    const results: Message[] = [];
    for (const change of changes) results.push({ key: change.key, value: change.result === null ? null : await this.environment.serde.encodeResult(change.result) });
    await this.send(results, conflicts);
  }

  private async send(results: readonly Message[], conflicts: readonly Message[]): Promise<void> {
    const { topics, telemetry } = this.environment;
    const topicMessages = [
      { topic: topics.results, messages: [...results] },
      { topic: topics.deadLetters, messages: [...conflicts] },
    ].filter((entry) => entry.messages.length > 0);
    if (topicMessages.length === 0) return;
    await this.environment.send(topicMessages);
    telemetry.count("agentops_results_published_total", "Result upserts and tombstones written to the results topic", {}, results.length);
  }

  private conflictLetter(source: DeadLetterRecord["source"], factId: string, conflict: Conflict): Promise<Message> {
    return deadLetterMessage(this.environment.serde, this.environment.telemetry, { ...conflictRejection(conflict), source, factId, key: null, value: null });
  }
}

/** Where a fact was read on the facts topic, as conflict reports name it. */
function originOf(source: DeadLetterRecord["source"]): string {
  return `${source.topic}/${source.partition}/${source.offset}`;
}

