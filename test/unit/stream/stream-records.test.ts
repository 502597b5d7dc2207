import { createHash } from "node:crypto";
import type { Message, Producer, TopicMessages } from "kafkajs";
import { describe, expect, it } from "vitest";
import type { MetricFact } from "../../../src/contract/facts.ts";
import { parseFact } from "../../../src/contract/parse-fact.ts";
import { decodeEngineFact, encodeEngineFact } from "../../../src/kafka/serde/engine-facts-record.ts";
import { sendBounded } from "../../../src/kafka/send-bounded.ts";
import { Telemetry } from "../../../src/stream/runtime/telemetry.ts";

function packet(overrides: Record<string, unknown> = {}): MetricFact {
  const parsed = parseFact({
    contract: "agentops.observation@1.0.0",
    type: "packet",
    fact_id: "f1",
    event_time: "2026-10-01T00:00:00Z",
    provenance: null,
    packet_id: "p1",
    governance_revision: "0.2",
    repair_attribution: "AVAILABLE",
    ...overrides,
  });
  if (!parsed.ok || parsed.fact.type !== "packet") throw new Error("bad test fact");
  return parsed.fact;
}

const source = { topic: "facts", partition: 2, offset: "41" };

describe("engine-facts records (the engine's input and changelog)", () => {
  it("round-trip the normalised fact and its source coordinates", () => {
    const encoded = encodeEngineFact(packet(), source);
    expect(decodeEngineFact(Buffer.from(encoded.value))).toEqual({ fact: packet(), source });
  });

  it("a redelivery has the same key (compaction collapses it); two versions of one fact_id have different keys (both survive)", () => {
    expect(encodeEngineFact(packet(), source).key).toBe(encodeEngineFact(packet(), { ...source, offset: "99" }).key);
    expect(encodeEngineFact(packet(), source).key).not.toBe(
      encodeEngineFact(packet({ repair_attribution: "UNAVAILABLE" }), source).key,
    );
  });

  it("the key format is stable (fact_id, NUL, 32 hex digits of SHA-256 of the canonical fact): existing compacted topics keep their keys", () => {
    const fact = packet();
    const digest = createHash("sha256").update(JSON.stringify(fact)).digest("hex").slice(0, 32);
    expect(encodeEngineFact(fact, source).key).toBe(`f1\u0000${digest}`);
  });

  it("a record that no longer validates is not fed to the engine", () => {
    expect(decodeEngineFact(Buffer.from(JSON.stringify({ fact: { type: "packet" }, source })))).toBeUndefined();
  });
});

describe("sendBounded", () => {
  it("splits a batch into requests under the size bound, keeping every message in order", async () => {
    const requests: TopicMessages[][] = [];
    const producer = {
      sendBatch: async ({ topicMessages }: { topicMessages: TopicMessages[] }) => void requests.push(topicMessages),
    } as unknown as Producer;
    const messages: Message[] = Array.from({ length: 10 }, (_, index) => ({
      key: `k${index}`,
      value: "x".repeat(100),
    }));
    await sendBounded(
      producer,
      [
        { topic: "a", messages: messages.slice(0, 6) },
        { topic: "b", messages: messages.slice(6) },
      ],
      400,
    );
    expect(requests.length).toBeGreaterThan(2);
    for (const request of requests) {
      const bytes = request
        .flatMap((entry) => entry.messages)
        .reduce((sum, message) => sum + String(message.key).length + String(message.value).length + 64, 0);
      expect(bytes).toBeLessThanOrEqual(400);
    }
    const sent = requests.flatMap((request) =>
      request.flatMap((entry) => entry.messages.map((message) => `${entry.topic}:${String(message.key)}`)),
    );
    expect(sent).toEqual([
      ...messages.slice(0, 6).map((message) => `a:${String(message.key)}`),
      ...messages.slice(6).map((message) => `b:${String(message.key)}`),
    ]);
  });
});

describe("telemetry (Prometheus text format)", () => {
  it("renders counters and gauges with sorted, escaped labels", () => {
    const telemetry = new Telemetry();
    telemetry.count("agentops_dead_letters_total", "Records sent to the dead-letter topic", { reason: "CONFLICT" });
    telemetry.count("agentops_dead_letters_total", "Records sent to the dead-letter topic", { reason: "CONFLICT" }, 2);
    telemetry.gauge("agentops_consumer_lag", "Lag", { topic: 't"1', partition: "0" }, 7);
    const text = telemetry.render();
    expect(text).toContain("# TYPE agentops_dead_letters_total counter");
    expect(text).toContain('agentops_dead_letters_total{reason="CONFLICT"} 3');
    expect(text).toContain('agentops_consumer_lag{partition="0",topic="t\\"1"} 7');
    expect(telemetry.value("agentops_dead_letters_total", { reason: "CONFLICT" })).toBe(3);
  });

  it("keeps series apart whatever their label values hold, and finds one series whatever the order of its labels", () => {
    const telemetry = new Telemetry();
    // Values that a key joined with separators would confuse: each is a series of its own.
    telemetry.count("agentops_x_total", "x", { a: "1b", b: "" });
    telemetry.count("agentops_x_total", "x", { a: "1", b: "b" });
    telemetry.count("agentops_x_total", "x", { a: "1:1", b: "" }, 5);
    telemetry.count("agentops_x_total", "x", { b: "b", a: "1" }, 2);
    expect(telemetry.value("agentops_x_total", { a: "1b", b: "" })).toBe(1);
    expect(telemetry.value("agentops_x_total", { a: "1", b: "b" })).toBe(3);
    expect(telemetry.value("agentops_x_total", { a: "1:1", b: "" })).toBe(5);
    expect(telemetry.render().match(/^agentops_x_total\{/gm)).toHaveLength(3);
  });

  it("reports the process's anonymous and file-backed resident memory apart (Linux), as a container's limit needs them", () => {
    const text = new Telemetry().render();
    const value = (name: string): number => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? Number.NaN);
    const anonymous = value("agentops_process_anonymous_memory_bytes");
    const file = value("agentops_process_mapped_file_bytes");
    expect(anonymous).toBeGreaterThan(10 * 1024 * 1024);
    expect(file).toBeGreaterThan(0);
    // The two parts are resident memory; their sum is the RSS read a moment earlier, within what allocation moved between the reads.
    expect(Math.abs(anonymous + file - value("agentops_process_resident_memory_bytes"))).toBeLessThan(64 * 1024 * 1024);
  });
});
