import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import type { Kafka, Producer } from "kafkajs";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deadLetterKey, type DeadLetterRecord } from "../../src/contract/dead-letter.ts";
import { startExporterServer } from "../../src/export/exporter-server.ts";
import { DEFAULT_EXPORT_LIMITS } from "../../src/export/openmetrics.ts";
import { ensureTopics } from "../../src/kafka/ensure-topics.ts";
import { readTopicToEnd } from "../../src/kafka/read-topic.ts";
import type { AvroTopicSerde } from "../../src/kafka/serde/avro-serde.ts";
import type { MetricResult } from "../../src/contract/result-record.ts";
import { resultKey } from "../../src/metrics/scope.ts";
import { topicDeadLetters } from "../../src/notify/dead-letter-sinks.ts";
import { Notifier } from "../../src/notify/notifier.ts";
import { notifyFromTopics, type TopicNotifyHandle } from "../../src/notify/notify-sources.ts";
import { parseNotifyConfig } from "../../src/notify/webhook-config.ts";
import { startKafkaSource } from "../../src/serve/kafka-source.ts";
import { ViewState } from "../../src/serve/view-state.ts";
import { topicNames, type TopicNames } from "../../src/stream/topic-names.ts";
import { createRunMonitor } from "../../src/tripwires/index.ts";
import { closeAll, connectedAdmin, connectedProducer, testKafka, testRegistry, uniqueName } from "../support/kafka.ts";
import { parseOpenMetrics } from "../support/openmetrics-parser.ts";
import { topicSerde, waitFor } from "../support/processes.ts";
import { startReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { exec } from "../unit/tripwires/events.ts";

/**
 * `agentops export --from-topics` and `agentops notify --from-topics` on the shared broker, each
 * over its own prefixed topic set: the exporter serves what is written to the results topic, and
 * notify delivers alerts and LOW_COVERAGE changes, dead-letters a delivery that keeps failing on
 * the dead-letter topic, and after a restart in the same consumer group resumes where it committed.
 */
let kafka: Kafka;
let producer: Producer;
let serde: AvroTopicSerde;
let registry: SchemaRegistry;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  kafka = testKafka();
  producer = await connectedProducer(kafka);
  serde = topicSerde();
  registry = testRegistry();
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await closeAll();
});

const window = { kind: "window", start: "2026-10-01T00:00:00.000Z", end: "2026-10-02T00:00:00.000Z" } as const;

function latency(model: string, coverageNumerator: number): MetricResult {
  const low = coverageNumerator * 10 < 20;
  return {
    catalog: "agentops.evaluation.metric-catalog@1.0.0",
    metric_id: "operational-latency-ms",
    metric_version: "1.0.0",
    scope: window,
    cohort: { model, provider: "p", role: "writer", runtime: "r" },
    status: "PUBLISHED",
    value: 812.5,
    na_reason: null,
    measures: null,
    eligible_units: coverageNumerator,
    minimum_sample: 1,
    coverage: {
      numerator: coverageNumerator,
      denominator: 20,
      raw_ratio: coverageNumerator / 20,
      state: "PARTIAL",
      alert: low,
      threshold_hundredths: 10,
    },
    exclusions: {},
    as_of: "2026-10-01T21:00:00.000Z",
  };
}

async function freshTopics(name: string): Promise<TopicNames> {
  const prefix = uniqueName(name);
  const admin = await connectedAdmin(kafka);
  await ensureTopics(admin, prefix);
  return topicNames(prefix);
}

async function writeResult(topics: TopicNames, result: MetricResult): Promise<void> {
  const key = resultKey(result.metric_id, result.scope, result.cohort);
  await producer.send({ topic: topics.results, messages: [{ key, value: await serde.encodeResult(result) }] });
}

async function writeAlert(topics: TopicNames, runId: string): Promise<string> {
  const [alert] = createRunMonitor().process(exec(runId, 3, "sudo rm -rf /")).alerts;
  if (alert === undefined) throw new Error("the run monitor raised no alert");
  const value = await serde.encodeAlert(alert);
  await producer.send({ topic: topics.alerts, messages: [{ key: alert.run_id, value }] });
  return alert.alert_id;
}

describe("agentops export over the results topic", () => {
  it("serves the topic's latest results as OpenMetrics and follows new records", async () => {
    const topics = await freshTopics("export");
    await writeResult(topics, latency("m1", 12));
    const state = new ViewState({ mode: "kafka", description: topics.results, error: null });
    const source = await startKafkaSource(kafka, serde, topics, state);
    cleanups.push(() => source.stop());
    const server = await startExporterServer(state, "127.0.0.1", 0, DEFAULT_EXPORT_LIMITS);
    cleanups.push(() => server.close());

    const values = async (): Promise<Record<string, number>> => {
      const response = await fetch(server.url);
      expect(response.headers.get("content-type")).toMatch(/^application\/openmetrics-text; version=1.0.0/);
      const families = parseOpenMetrics(await response.text());
      const family = families.find((entry) => entry.name === "agentops_metric_low_coverage");
      return Object.fromEntries((family?.samples ?? []).map((sample) => [sample.labels["model"] ?? "", sample.value]));
    };
    await waitFor("m1 on /metrics", async () => ((await values())["m1"] === 0 ? true : undefined));
    await writeResult(topics, latency("m2", 1));
    const both = await waitFor("m2 on /metrics", async () => {
      const current = await values();
      return current["m2"] === undefined ? undefined : current;
    });
    expect(both).toEqual({ m1: 0, m2: 1 });
  });
});

describe("agentops notify over the alerts and results topics", () => {
  it("delivers, dead-letters a webhook that keeps failing, and resumes from its committed offsets", async () => {
    const topics = await freshTopics("notify");
    const good: WebhookReceiver = await startReceiver(() => 200);
    const down: WebhookReceiver = await startReceiver(() => 500);
    cleanups.push(
      () => good.close(),
      () => down.close(),
    );
    const config = parseNotifyConfig(
      {
        webhooks: [
          { name: "good", format: "json", url: { env: "GOOD_URL" } },
          { name: "down", format: "slack", url: { env: "DOWN_URL" }, events: ["alert"] },
        ],
        delivery: { attempts: 2, timeoutMs: 2_000, backoffMs: 10, maxBackoffMs: 10 },
      },
      "test config",
      { GOOD_URL: `${good.url}/hook`, DOWN_URL: `${down.url}/hook` },
    );
    const groupId = uniqueName("notify-group");
    const logger = pino({ level: "silent" });
    const start = async (): Promise<{ handle: TopicNotifyHandle; notifier: Notifier; stop: AbortController }> => {
      const stop = new AbortController();
      const notifier = new Notifier(config, topicDeadLetters(producer, serde, topics.deadLetters), logger, stop.signal);
      const stopping = stop.signal;
      const undecodable = async (letter: DeadLetterRecord): Promise<void> => {
        const value = await serde.encodeDeadLetter(letter);
        await producer.send({ topic: topics.deadLetters, messages: [{ key: deadLetterKey(letter), value }] });
      };
      const options = {
        kafka,
        serde,
        registry,
        undecodable,
        topics,
        groupId,
        notifier,
        stopping,
        logger,
        fromBeginning: true,
      };
      const handle = await notifyFromTopics(options);
      return { handle, notifier, stop };
    };
    const kinds = (): string[] => good.requests.map((request) => (JSON.parse(request.body) as { kind: string }).kind);

    await producer.send({ topic: topics.alerts, messages: [{ key: "run-garbage", value: Buffer.from("not avro") }] });
    const firstAlert = await writeAlert(topics, "run-notify-1");
    await writeResult(topics, latency("m1", 1));
    const first = await start();
    await waitFor("the alert and the LOW_COVERAGE change", () => (kinds().length >= 2 ? true : undefined));
    expect(kinds().sort()).toEqual(["low_coverage", "tripwire_alert"]);
    await writeResult(topics, latency("m1", 15));
    await waitFor("the recovery", () => (kinds().includes("coverage_recovered") ? true : undefined));

    const letters: DeadLetterRecord[] = await waitFor("the dead letter", async () => {
      const found: DeadLetterRecord[] = [];
      await readTopicToEnd(kafka, topics.deadLetters, async (message) => {
        if (message.value !== null) found.push(await serde.decodeDeadLetter(message.value));
      });
      return found.length > 1 ? found : undefined;
    });
    // The undecodable record is dead-lettered with its coordinates and bytes, never skipped.
    const garbage = letters.find((letter) => letter.reason === "UNDECODABLE_BYTES");
    expect(garbage?.source.topic).toBe(topics.alerts);
    expect(garbage?.source.offset).toBe("0");
    expect(garbage?.value?.toString("utf8")).toBe("not avro");
    const failed = letters.filter((letter) => letter.reason === "WEBHOOK_DELIVERY_FAILED");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ field: "webhook:down" });
    expect(failed[0]?.recordRejected).toBe(false);
    expect(failed[0]?.source.topic).toBe(topics.alerts);
    expect(failed[0]?.detail).toContain("HTTP_RETRYABLE");
    expect(failed[0]?.detail).not.toContain(down.url);
    expect(down.requests).toHaveLength(2);

    first.stop.abort();
    await first.handle.stop();
    const before = good.requests.length;
    const secondAlert = await writeAlert(topics, "run-notify-2");
    const second = await start();
    cleanups.push(() => second.handle.stop());
    await waitFor("the new alert after the restart", () => (good.requests.length > before ? true : undefined));
    const alertIds = good.requests
      .map((request) => JSON.parse(request.body) as { kind: string; subject: { alert_id?: string } })
      .filter((body) => body.kind === "tripwire_alert")
      .map((body) => body.subject.alert_id);
    expect(alertIds).toEqual([firstAlert, secondAlert]);
    expect(first.notifier.summary).toEqual({ delivered: 3, deadLettered: 1, aborted: 0 });
  });
});
