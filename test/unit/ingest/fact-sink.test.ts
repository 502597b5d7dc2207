import type { Producer, ProducerBatch, ProducerRecord } from "kafkajs";
import { describe, expect, it } from "vitest";
import type { DeadLetterRecord } from "../../../src/contract/dead-letter.ts";
import type { Fact } from "../../../src/contract/facts.ts";
import { parseFactJson } from "../../../src/contract/parse-fact.ts";
import { kafkaSink } from "../../../src/ingest/fact-sink.ts";
import { FactNotCarriableError } from "../../../src/kafka/serde/fact-record.ts";
import type { TopicSerde } from "../../../src/kafka/serde/topic-serde.ts";
import { Telemetry } from "../../../src/stream/runtime/telemetry.ts";
import { topicNames } from "../../../src/stream/topic-names.ts";

/**
 * The Kafka sink of the OTLP receiver and the hook fails closed: a fact without an Avro form goes
 * to the dead-letter topic with its reason and JSON, and the write succeeds (a failed write would
 * make the exporter send the same request again for ever).
 */

function factOf(factId: string): { fact: Fact; json: string } {
  const envelope = { contract: "agentops.observation@1.0.0", fact_id: factId, event_time: "2026-10-01T10:00:00Z" };
  const step = { type: "agent_step", run_id: "r", seq: 1, kind: "message" };
  const json = JSON.stringify({ ...envelope, provenance: null, ...step });
  const parsed = parseFactJson(json);
  if (!parsed.ok) throw new Error(parsed.rejection.detail);
  return { fact: parsed.fact, json };
}

function recordingProducer(): { producer: Producer; batches: ProducerBatch[]; sends: ProducerRecord[] } {
  const batches: ProducerBatch[] = [];
  const sends: ProducerRecord[] = [];
  const producer = {
    sendBatch: (batch: ProducerBatch) => Promise.resolve(void batches.push(batch)).then(() => []),
    send: (record: ProducerRecord) => Promise.resolve(void sends.push(record)).then(() => []),
    disconnect: () => Promise.resolve(),
  } as unknown as Producer;
  return { producer, batches, sends };
}

/** Writes a fact as its fact_id, refuses the one named "no-form", and a letter as JSON. */
const serde = {
  encodeFact: (fact: Fact) => {
    if (fact.fact_id === "no-form") return Promise.reject(new FactNotCarriableError("seq has no Avro form"));
    return Promise.resolve(Buffer.from(fact.fact_id));
  },
  encodeDeadLetter: (letter: DeadLetterRecord) => {
    const json = JSON.stringify({ ...letter, value: letter.value?.toString("utf8") ?? null });
    return Promise.resolve(Buffer.from(json));
  },
} as unknown as TopicSerde;

describe("kafkaSink", () => {
  it("dead-letters a fact without an Avro form (UNENCODABLE_FACT, with its JSON) and sends the others", async () => {
    const topics = topicNames("sink-test");
    const { producer, batches, sends } = recordingProducer();
    const carried = factOf("carried");
    const refused = factOf("no-form");
    await kafkaSink(producer, serde, topics, new Telemetry()).write([carried, refused], []);
    const sent = batches.flatMap((batch) => batch.topicMessages ?? []).flatMap((topic) => topic.messages);
    expect(sent.map((message) => String(message.value))).toEqual(["carried"]);
    expect(sends).toHaveLength(1);
    expect(sends[0]?.topic).toBe(topics.deadLetters);
    const letter = JSON.parse(String(sends[0]?.messages[0]?.value)) as Record<string, unknown>;
    expect(letter).toMatchObject({ reason: "UNENCODABLE_FACT", factId: "no-form", value: refused.json });
    expect(String(letter["detail"])).toContain("seq has no Avro form");
  });

  it("still fails the write on any other error, so the client retries", async () => {
    const { producer } = recordingProducer();
    const unreachable = () => Promise.reject(new Error("registry unreachable"));
    const failing = { ...serde, encodeFact: unreachable } as unknown as TopicSerde;
    const sink = kafkaSink(producer, failing, topicNames("sink-test"), new Telemetry());
    await expect(sink.write([factOf("x")], [])).rejects.toThrow("registry unreachable");
  });
});
