import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fact } from "../../src/contract/facts.ts";
import { topicNames } from "../../src/stream/topic-names.ts";
import type { TripwireAlert } from "../../src/tripwires/index.ts";
import { readTopicToEnd } from "../../src/kafka/read-topic.ts";
import { AGENT_EVENT_MARKER } from "../../src/kafka/serde/agent-events-record.ts";
import { closeAll, connectedConsumer, connectedProducer, testKafka, uniqueName } from "../support/kafka.ts";
import {
  fetchMetrics,
  killAllProcessors,
  metricSum,
  readDeadLetters,
  sleep,
  startProcessor,
  testDir,
  topicSerde,
  waitFor,
} from "../support/processes.ts";
import { validFact } from "../support/valid-fact.ts";

/**
 * Issue #6 on Kafka: a destructive command in a run's sandbox events raises an alert on the
 * alerts topic while the run is still going; the alert is readable before the run's last event
 * is even produced, not at the end of some batch or replay.
 */

let kafka: Kafka;

beforeAll(() => {
  kafka = testKafka();
});

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

describe("tripwire alerts on Kafka", () => {
  it("an alert for `rm -rf /` arrives on the alerts topic while the run's events keep flowing", async () => {
    const dir = testDir("agentops-alerts-");
    const prefix = uniqueName("alerts");
    const topics = topicNames(prefix);
    const instance = await startProcessor({ topicPrefix: prefix, name: "alerts", dir });
    const serde = topicSerde();
    const runId = uniqueName("run");
    const start = Date.parse("2026-04-01T12:00:00.000Z");
    const envelope = (seq: number) => ({
      contract: "agentops.observation@1.0.0",
      fact_id: `${runId}-${seq}`,
      event_time: new Date(start + seq * 1_000).toISOString(),
      provenance: { basis: "DIRECT_HOST", source: "agent-host" },
      run_id: runId,
      seq,
    });
    // Distinct, harmless steps: no loop or redundancy, so the only alert is the destructive one.
    const step = (seq: number): Fact =>
      validFact({
        ...envelope(seq),
        type: "agent_step",
        actor: "writer",
        kind: "message",
        input: JSON.stringify({ text: `note ${seq}` }),
        observation_digest: `sha256:${seq}`,
        status: "ok",
      });

    const received: Array<{ alert: TripwireAlert; eventsProduced: number }> = [];
    let eventsProduced = 0;
    const consumer = await connectedConsumer(kafka);
    await consumer.subscribe({ topic: topics.alerts, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (message.value !== null)
          received.push({ alert: (await serde.decodeAlert(message.value)) as TripwireAlert, eventsProduced });
      },
    });

    const producer = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
    const produce = async (event: Fact): Promise<void> => {
      await producer.send({
        topic: topics.agentEvents,
        messages: [{ key: runId, value: await serde.encodeFact(event) }],
      });
      eventsProduced += 1;
    };
    await produce(validFact({ ...envelope(0), type: "agent_step", actor: "writer", kind: "plan" }));
    await produce(
      validFact({
        ...envelope(1),
        type: "sandbox_event",
        kind: "exec",
        command: "rm -rf /",
        cwd: "/work/repo",
        workspace_root: "/work/repo",
        exit_code: 0,
      }),
    );

    // Keep the run going, one event at a time, until the alert shows up (or the run would end).
    const plannedEvents = 240;
    let seq = 2;
    const destructive = (): (typeof received)[number] | undefined =>
      received.find((entry) => entry.alert.kind === "DESTRUCTIVE" && entry.alert.run_id === runId);
    while (destructive() === undefined && seq < plannedEvents - 1) {
      await produce(step(seq));
      seq += 1;
      await sleep(250);
    }
    const seen = destructive();
    // The run's last event is produced only now: the alert was readable before it.
    await produce(step(seq));
    expect(seen, `no DESTRUCTIVE alert after ${eventsProduced} events`).toBeDefined();
    expect(seen?.eventsProduced).toBeLessThan(eventsProduced);
    expect(seen?.alert).toMatchObject({ run_id: runId, kind: "DESTRUCTIVE", severity: "critical" });
    expect(new Date(seen?.alert.event_time ?? 0).toISOString()).toBe(new Date(start + 1_000).toISOString());
    expect(seen?.alert.evidence.seq_from).toBeLessThanOrEqual(1);
    expect(seen?.alert.evidence.seq_to).toBeGreaterThanOrEqual(1);
    expect(seen?.alert.evidence.command).toContain("rm -rf /");

    // The monitor keeps consuming the run after the alert, and raises no other alert for it.
    await waitFor(
      "the run monitor to process every event",
      async () =>
        metricSum(await fetchMetrics(instance), "agentops_records_processed_total", { processor: "run-monitor" }) >=
        eventsProduced
          ? true
          : undefined,
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(received.filter((entry) => entry.alert.run_id === runId).map((entry) => entry.alert.kind)).toEqual([
      "DESTRUCTIVE",
    ]);
    await consumer.stop();
  });

  it("agent events sent to the facts topic reach the run monitor through ingest, in the internal layout; an unreadable internal record is dead-lettered", async () => {
    const prefix = uniqueName("alerts-ingest");
    const topics = topicNames(prefix);
    await startProcessor({ topicPrefix: prefix, name: "alerts-ingest", dir: testDir("agentops-alerts-ingest-") });
    const serde = topicSerde();
    const runId = uniqueName("run");
    const envelope = (seq: number) => ({
      contract: "agentops.observation@1.0.0",
      fact_id: `${runId}-${seq}`,
      event_time: new Date(Date.parse("2026-04-01T12:00:00.000Z") + seq * 1_000).toISOString(),
      provenance: null,
      run_id: runId,
      seq,
    });
    const producer = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
    for (const event of [
      validFact({ ...envelope(0), type: "agent_step", kind: "plan" }),
      validFact({
        ...envelope(1),
        type: "sandbox_event",
        kind: "exec",
        command: "rm -rf /",
        cwd: "/work/repo",
        workspace_root: "/work/repo",
      }),
    ]) {
      await producer.send({
        topic: topics.facts,
        messages: [{ key: event.fact_id, value: await serde.encodeFact(event) }],
      });
    }
    const garbled = Buffer.from([AGENT_EVENT_MARKER, 1, 6, 0xff]);
    await producer.send({ topic: topics.agentEvents, messages: [{ key: "garbled", value: garbled }] });

    const alert = await waitFor(
      "the DESTRUCTIVE alert",
      async () => {
        const found: TripwireAlert[] = [];
        await readTopicToEnd(kafka, topics.alerts, async (message) => {
          if (message.value !== null) found.push((await serde.decodeAlert(message.value)) as TripwireAlert);
        });
        return found.find((entry) => entry.run_id === runId && entry.kind === "DESTRUCTIVE");
      },
      { timeoutMs: 90_000, intervalMs: 1_000 },
    );
    expect(alert.evidence.command).toContain("rm -rf /");
    const letter = await waitFor(
      "the unreadable record's dead letter",
      async () =>
        (await readDeadLetters(kafka, topics.deadLetters, serde)).find((entry) => entry.reason === "UNDECODABLE_BYTES"),
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect(letter).toMatchObject({
      source: { topic: topics.agentEvents },
      key: Buffer.from("garbled"),
      value: garbled,
    });
    expect(letter.detail).toContain("internal agent-event record");
    // What ingest forwarded is the internal layout, not the registry's bytes.
    const forwarded: Buffer[] = [];
    await readTopicToEnd(kafka, topics.agentEvents, (message) => {
      if (message.key?.toString("utf8") === runId && message.value !== null) forwarded.push(message.value);
    });
    expect(forwarded.map((value) => value[0])).toEqual([AGENT_EVENT_MARKER, AGENT_EVENT_MARKER]);
  });
});
