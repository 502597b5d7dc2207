import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MetricResult } from "../../src/contract/result-record.ts";
import { resultKey } from "../../src/metrics/scope.ts";
import { startKafkaSource } from "../../src/serve/kafka-source.ts";
import { startViewServer, type ViewServer } from "../../src/serve/server.ts";
import { ViewState, type ViewSnapshot } from "../../src/serve/view-state.ts";
import { ensureTopics } from "../../src/kafka/ensure-topics.ts";
import { topicNames } from "../../src/stream/topic-names.ts";
import { createRunMonitor } from "../../src/tripwires/index.ts";
import { closeAll, connectedAdmin, connectedProducer, testKafka, uniqueName } from "../support/kafka.ts";
import { topicSerde, waitFor } from "../support/processes.ts";
import { exec } from "../unit/tripwires/events.ts";

/**
 * `agentops serve --from-topics` on the shared broker: records written to the results, alerts and
 * run-state topics with the topics' own serde reach the view's HTTP snapshot and its event stream
 * while it runs; a tombstone on the compacted results topic removes the key.
 */
let kafka: Kafka;
let view: ViewServer | undefined;
let source: { stop(): Promise<void> } | undefined;

beforeAll(() => {
  kafka = testKafka();
});

afterAll(async () => {
  await view?.close();
  await source?.stop();
  await closeAll();
});

const window = { kind: "window", start: "2026-10-01T00:00:00.000Z", end: "2026-10-02T00:00:00.000Z" } as const;
function latency(cohort: Record<string, string>, value: number | null): MetricResult {
  return {
    catalog: "agentops.evaluation.metric-catalog@1.0.0",
    metric_id: "operational-latency-ms",
    metric_version: "1.0.0",
    scope: window,
    cohort,
    status: value === null ? "NOT_AVAILABLE" : "PUBLISHED",
    value,
    na_reason:
      value === null
        ? "N/A when no attributed operational model call with a valid native Span duration exists in the window; unavailable is never zero"
        : null,
    measures: null,
    eligible_units: value === null ? 0 : 12,
    minimum_sample: 1,
    coverage: {
      numerator: value === null ? 0 : 12,
      denominator: 15,
      raw_ratio: value === null ? 0 : 0.8,
      state: value === null ? "NO_COVERAGE" : "PARTIAL",
      alert: value === null,
      threshold_hundredths: 10,
    },
    exclusions: {},
    as_of: "2026-10-01T21:00:00.000Z",
  };
}

async function snapshot(): Promise<ViewSnapshot> {
  const response = await fetch(new URL("/api/snapshot", view?.url));
  return (await response.json()) as ViewSnapshot;
}

describe("agentops serve over the Kafka topics", () => {
  it("shows results, alerts and run states as they are written, and drops tombstoned keys", async () => {
    const prefix = uniqueName("serve");
    const topics = topicNames(prefix);
    const admin = await connectedAdmin(kafka);
    await ensureTopics(admin, prefix);
    const serde = topicSerde();
    const producer = await connectedProducer(kafka);

    const published = latency({ model: "m1", provider: "p", role: "writer", runtime: "r" }, 10251.7269);
    const missing = latency({}, null);
    const key = (result: MetricResult): string => resultKey(result.metric_id, result.scope, result.cohort);
    await producer.send({
      topic: topics.results,
      messages: await Promise.all(
        [published, missing].map(async (result) => ({ key: key(result), value: await serde.encodeResult(result) })),
      ),
    });

    const state = new ViewState({ mode: "kafka", description: `live from ${topics.results}`, error: null });
    source = await startKafkaSource(kafka, serde, topics, state);
    view = await startViewServer(state, "127.0.0.1", 0);

    const first = await waitFor(
      "both results in the view",
      async () => {
        const current = await snapshot();
        return current.results.length === 2 ? current : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const byKey = new Map(first.results.map((entry) => [entry.key, entry.result]));
    expect(byKey.get(key(published))).toEqual(published);
    expect(byKey.get(key(missing))).toEqual(missing);

    // Live: an alert raised by the real run monitor, written while the view is running, arrives
    // on the event stream.
    const events = await fetch(new URL("/events", view.url));
    const reader = events.body?.getReader();
    const monitor = createRunMonitor();
    const outcome = monitor.process(exec("run-serve-kafka", 3, "sudo rm -rf /"));
    const [alert] = outcome.alerts;
    await producer.send({
      topic: topics.alerts,
      messages: [{ key: alert?.run_id ?? "", value: await serde.encodeAlert(alert) }],
    });
    await producer.send({
      topic: topics.runState,
      messages: [{ key: outcome.runState.run_id, value: JSON.stringify(outcome.runState) }],
    });
    let streamed = "";
    const decoder = new TextDecoder();
    await waitFor(
      "the alert on the event stream",
      async () => {
        const chunk = await reader?.read();
        streamed += decoder.decode(chunk?.value ?? new Uint8Array());
        return streamed.includes("event: alert") && streamed.includes(alert?.alert_id ?? "-") ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 0 },
    );
    await reader?.cancel();

    const later = await waitFor(
      "alert and run state in the snapshot",
      async () => {
        const current = await snapshot();
        return current.alerts.length === 1 && current.runs.length === 1 ? current : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(later.alerts[0]).toMatchObject({
      alert_id: alert?.alert_id,
      rule_id: "fs-delete-critical-path",
      kind: "DESTRUCTIVE",
      severity: "critical",
    });
    expect(later.runs[0]).toEqual(outcome.runState);

    await producer.send({ topic: topics.results, messages: [{ key: key(missing), value: null }] });
    const afterTombstone = await waitFor(
      "the tombstoned key gone",
      async () => {
        const current = await snapshot();
        return current.results.length === 1 ? current : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(afterTombstone.results[0]?.key).toBe(key(published));
    expect(afterTombstone.status.error).toBeNull();
  });
});
