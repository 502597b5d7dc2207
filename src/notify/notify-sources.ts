import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import type { Consumer, Kafka, KafkaMessage } from "kafkajs";
import type { DeadLetterRecord } from "../contract/dead-letter.ts";
import { decodeWireRecord, type WireDecoding } from "../kafka/serde/wire-decoder.ts";
import type { Logger } from "pino";
import type { TopicSerde } from "../kafka/serde/topic-serde.ts";
import type { MetricResult } from "../contract/result-record.ts";
import { resultKey } from "../metrics/scope.ts";
import type { TopicNames } from "../stream/topic-names.ts";
import { boundedLines } from "./bounded-lines.ts";
import { alertNotification, CoverageTransitions, type AlertLike } from "./notification.ts";
import type { Notifier } from "./notifier.ts";

/** A line longer than this is skipped (named in the log), never parsed. */
const MAX_LINE_BYTES = 1024 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isAlert = (value: unknown): value is AlertLike =>
  isObject(value) && typeof value["alert_id"] === "string" && typeof value["run_id"] === "string";
const isResult = (value: unknown): value is MetricResult =>
  isObject(value) &&
  typeof value["metric_id"] === "string" &&
  isObject(value["scope"]) &&
  isObject(value["cohort"]) &&
  isObject(value["coverage"]) &&
  typeof value["coverage"]["alert"] === "boolean";

async function eachRecord(
  path: string,
  logger: Logger,
  check: (value: unknown) => boolean,
  onRecord: (value: unknown, line: number) => Promise<void>,
): Promise<void> {
  for await (const entry of boundedLines(path, MAX_LINE_BYTES)) {
    const { line } = entry;
    if ("tooLong" in entry) {
      logger.warn({ file: path, line, reason: "LINE_TOO_LONG", max_bytes: MAX_LINE_BYTES }, "skipped a line");
      continue;
    }
    const text = entry.text;
    if (text.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      logger.warn({ file: path, line, reason: "MALFORMED_JSON" }, "skipped a line");
      continue;
    }
    if (!check(value)) {
      logger.warn({ file: path, line, reason: "NOT_A_RECORD_OF_THIS_FILE" }, "skipped a line");
      continue;
    }
    await onRecord(value, line);
  }
}

/**
 * File mode, one pass: every alert of the alerts file, then every result of the results file that
 * is in LOW_COVERAGE (a replay's results file is the final table, so each low key is a transition
 * from nothing). Returns when all deliveries have ended.
 */
export async function notifyFromFiles(
  paths: { alerts?: string | undefined; results?: string | undefined },
  notifier: Notifier,
  logger: Logger,
): Promise<void> {
  const { alerts, results } = paths;
  if (alerts !== undefined) {
    await eachRecord(alerts, logger, isAlert, async (value, line) => {
      await notifier.notify(alertNotification(value as AlertLike), { file: alerts, line });
    });
  }
  if (results !== undefined) {
    const transitions = new CoverageTransitions();
    await eachRecord(results, logger, isResult, async (value, line) => {
      const result = value as MetricResult;
      const notification = transitions.observe(resultKey(result.metric_id, result.scope, result.cohort), result);
      if (notification !== null) await notifier.notify(notification, { file: results, line });
    });
  }
}

export interface TopicNotifyHandle {
  stop(): Promise<void>;
}

/**
 * Topic mode: one consumer group (committed, so a restart resumes) over the alerts and results
 * topics. A record's offset is resolved only after every delivery it caused has ended (delivered
 * or dead-lettered): a stop or crash before that reads it again, and the unchanged delivery key
 * lets receivers drop the copy. LOW_COVERAGE transitions are judged against the records read
 * since start.
 */
export interface TopicNotifyOptions {
  readonly kafka: Kafka;
  readonly serde: TopicSerde;
  /** Tells an undecodable record (dead-lettered) from a registry outage (waited out). */
  readonly registry: SchemaRegistry;
  /** Where a record that can never be decoded goes, with its coordinates and bytes. */
  readonly undecodable: (letter: DeadLetterRecord) => Promise<void>;
  readonly topics: TopicNames;
  readonly groupId: string;
  readonly notifier: Notifier;
  /** Aborted on shutdown: the batch in hand stops after the record being delivered. */
  readonly stopping: AbortSignal;
  readonly logger: Logger;
  /** A new group starts at the topics' beginning (resending their history) instead of their end. */
  readonly fromBeginning: boolean;
  /** Called when the consumer crashed and kafkajs will not restart it: nothing more is read. */
  readonly onFatal?: (error: Error) => void;
}

/** A registry outage is waited out (the record is never skipped); the wait between tries grows to this. */
const MAX_OUTAGE_BACKOFF_MS = 30_000;

/**
 * The record's wire decoding, or undefined when the stop came first. An unreachable registry
 * throws in decodeWireRecord and is tried again, a second apart and growing, heartbeating between.
 */
async function decodeThroughOutage(
  registry: SchemaRegistry,
  bytes: Buffer,
  heartbeat: () => Promise<void>,
  stopping: AbortSignal,
  logger: Logger,
): Promise<WireDecoding | undefined> {
  for (let waitMs = 1_000; !stopping.aborted; waitMs = Math.min(waitMs * 2, MAX_OUTAGE_BACKOFF_MS)) {
    try {
      return await decodeWireRecord(registry, bytes);
    } catch (error) {
      logger.warn({ err: error, retry_in_ms: waitMs }, "schema registry unavailable; the record waits");
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      await heartbeat();
    }
  }
  return undefined;
}

export async function notifyFromTopics(options: TopicNotifyOptions): Promise<TopicNotifyHandle> {
  const { kafka, serde, registry, undecodable, topics, groupId, notifier, stopping, logger, fromBeginning } = options;
  const consumer: Consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 500, sessionTimeout: 30_000 });
  const transitions = new CoverageTransitions();
  consumer.on(consumer.events.CRASH, (event) => {
    const { error, restart } = event.payload;
    logger.error({ err: error, restart }, "notify consumer crashed");
    if (!restart) options.onFatal?.(error);
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topics.alerts, topics.results], fromBeginning });

  const handle = async (
    topic: string,
    partition: number,
    message: KafkaMessage,
    heartbeat: () => Promise<void>,
  ): Promise<boolean> => {
    const source = { topic, partition, offset: message.offset, key: message.key };
    // A record that can never be decoded cannot be delivered whatever is retried: it is dead-lettered.
    const deadLetter = async (reason: DeadLetterRecord["reason"], detail: string): Promise<boolean> => {
      const coordinates = { topic, partition, offset: message.offset };
      logger.error({ ...coordinates, reason, detail }, "undecodable record dead-lettered");
      await undecodable({
        reason,
        field: "",
        detail,
        source: coordinates,
        factId: null,
        key: message.key,
        value: message.value,
      });
      return true;
    };
    const { value } = message;
    const key = message.key?.toString("utf8");
    if (value === null) {
      if (topic === topics.alerts) return true;
      if (key === undefined) return deadLetter("UNDECODABLE_BYTES", "a result tombstone without a key");
      const notification = transitions.observe(key, null);
      return notification === null || notifier.notify(notification, source, heartbeat);
    }
    const wire = await decodeThroughOutage(registry, value, heartbeat, stopping, logger);
    if (wire === undefined) return false;
    if (!wire.ok) return deadLetter(wire.reason, wire.detail);
    if (topic === topics.alerts) {
      const alert = wire.value;
      if (!isAlert(alert)) return deadLetter("UNDECODABLE_BYTES", "not a tripwire alert");
      return notifier.notify(alertNotification(alert), source, heartbeat);
    }
    if (key === undefined) return deadLetter("UNDECODABLE_BYTES", "a result without a key");
    let result: MetricResult;
    try {
      result = await serde.decodeResult(value);
    } catch (error) {
      return deadLetter("UNDECODABLE_BYTES", error instanceof Error ? error.message : String(error));
    }
    const notification = transitions.observe(key, result);
    return notification === null || notifier.notify(notification, source, heartbeat);
  };

  await consumer.run({
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
      for (const message of batch.messages) {
        if (!isRunning() || isStale() || stopping.aborted) break;
        const complete = await handle(batch.topic, batch.partition, message, heartbeat);
        if (!complete) break;
        resolveOffset(message.offset);
        await heartbeat();
        await commitOffsetsIfNecessary();
      }
    },
  });
  return {
    async stop(): Promise<void> {
      await consumer.disconnect();
    },
  };
}
