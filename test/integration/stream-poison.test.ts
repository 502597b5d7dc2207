import type { Kafka, RecordMetadata } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fact } from "../../src/contract/facts.ts";
import { parseDecodedFact } from "../../src/contract/parse-fact.ts";
import { evaluateFacts } from "../support/evaluate-facts.ts";
import type { MetricResult } from "../../src/contract/result-record.ts";
import { topicNames } from "../../src/stream/topic-names.ts";
import { closeAll, connectedProducer, testKafka, uniqueName } from "../support/kafka.ts";
import {
  describeDifferences,
  fetchMetrics,
  killAllProcessors,
  metricSum,
  readDeadLetters,
  resultsByKey,
  startProcessor,
  testDir,
  topicSerde,
  waitFor,
  waitForResults,
  type MetricSample,
  type ProcessorInstance,
} from "../support/processes.ts";
import { validFact } from "../support/valid-fact.ts";

/**
 * Issue #5, poison records: bytes that are not Avro, a wire-format record with a schema id the
 * registry does not know, a real Avro record of an unsupported contract, and two different
 * records sharing a fact_id each land on the dead-letter topic with their reason and the
 * coordinates they were read at; a valid fact produced after them still updates the results.
 */

let kafka: Kafka;

beforeAll(() => {
  kafka = testKafka();
});

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

const envelope = { contract: "agentops.observation@1.0.0", provenance: { basis: "DIRECT_HOST", source: "test" } };

function coordinates(
  metadata: RecordMetadata[] | undefined,
  topic: string,
): { topic: string; partition: number; offset: string } {
  const [record] = metadata ?? [];
  if (record === undefined || record.baseOffset === undefined) throw new Error("no record metadata from the broker");
  return { topic, partition: record.partition, offset: record.baseOffset };
}

/**
 * The instance's /metrics once it counts a dead letter of `reason`. The engine's dead letters
 * (CONFLICT, LATER_TERMINAL_SUMMARY) are counted on its thread, which reports to the instance
 * every 250 ms: the letter can be on the topic before its count is in /metrics.
 */
async function metricsCounting(instance: ProcessorInstance, reason: string): Promise<MetricSample[]> {
  return waitFor(`${reason} counted in ${instance.name} /metrics`, async () => {
    const samples = await fetchMetrics(instance);
    return metricSum(samples, "agentops_dead_letters_total", { reason }) > 0 ? samples : undefined;
  });
}

describe("poison records", () => {
  it("each lands in the dead-letter topic with its reason and source coordinates, and the stream goes on", async () => {
    const dir = testDir("agentops-poison-");
    const prefix = uniqueName("poison");
    const topics = topicNames(prefix);
    const instance = await startProcessor({ topicPrefix: prefix, name: "poison", dir });
    const producer = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
    const serde = topicSerde();
    const send = async (partition: number, key: string, value: Buffer) =>
      coordinates(await producer.send({ topic: topics.facts, messages: [{ key, value, partition }] }), topics.facts);

    const garbageBytes = Buffer.from("this is not Avro at all", "utf8");
    const unknownIdBytes = Buffer.concat([
      Buffer.from([0]),
      Buffer.from([0x00, 0x0f, 0x42, 0x3f]),
      Buffer.from("junk after schema id 999999"),
    ]);
    const callJson = {
      ...envelope,
      type: "model_call",
      fact_id: "poison-call-1",
      event_time: "2026-03-01T10:00:00.000Z",
      call_id: "poison-call-1",
      run_id: "poison-run",
      operational: true,
      provider: "anthropic",
      model: "claude-x",
      role: "writer",
      runtime: "claude-code",
      span_duration_ms: 1200,
      input_tokens: 100,
      output_tokens: 20,
      usage_source: "PROVIDER",
    };
    const call = validFact(callJson);
    const unsupported = {
      ...validFact({
        ...envelope,
        type: "model_call",
        fact_id: "poison-old-contract",
        event_time: "2026-03-01T11:00:00.000Z",
        call_id: "poison-old-call",
        run_id: "poison-run",
        operational: true,
      }),
      contract: "agentops.observation@0.9.0",
    } as unknown as Fact;
    const unsupportedBytes = await serde.encodeFact(unsupported);
    expect(unsupportedBytes[0]).toBe(0); // a real wire-format record of the registered schema
    const conflicting = validFact({ ...callJson, input_tokens: 999 });
    const valid = validFact({
      ...envelope,
      type: "delivery_summary",
      fact_id: "poison-summary-1",
      event_time: "2026-03-05T09:00:00.000Z",
      delivery_id: "poison-dlv-1",
      status: "TERMINAL",
      outcome: "SUCCEEDED",
      requirement_changed: false,
      elapsed_ms: 60_000,
      stage_reached: "review",
    });

    const garbageAt = await send(0, "garbage", garbageBytes);
    const unknownIdAt = await send(1, "unknown-schema", unknownIdBytes);
    const unsupportedAt = await send(2, "poison-old-contract", unsupportedBytes);
    const firstVersionAt = await send(0, call.fact_id, await serde.encodeFact(call));
    const secondVersionAt = await send(1, call.fact_id, await serde.encodeFact(conflicting));

    const letters = await waitFor(
      "four dead letters",
      async () => {
        const found = await readDeadLetters(kafka, topics.deadLetters, serde);
        return found.length >= 4 ? found : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1_000 },
    );
    const byReason = new Map(letters.map((letter) => [letter.reason, letter] as const));
    expect([...byReason.keys()].sort()).toEqual([
      "CONFLICT",
      "UNDECODABLE_BYTES",
      "UNKNOWN_SCHEMA_ID",
      "UNSUPPORTED_CONTRACT",
    ]);

    expect(byReason.get("UNDECODABLE_BYTES")).toMatchObject({
      source: garbageAt,
      key: Buffer.from("garbage"),
      value: garbageBytes,
    });
    expect(byReason.get("UNKNOWN_SCHEMA_ID")).toMatchObject({ source: unknownIdAt, value: unknownIdBytes });
    expect(byReason.get("UNKNOWN_SCHEMA_ID")?.detail).toContain("999999");
    expect(byReason.get("UNSUPPORTED_CONTRACT")).toMatchObject({
      source: unsupportedAt,
      factId: "poison-old-contract",
      value: unsupportedBytes,
    });
    // The engine finds the conflict when the second version reaches it; either may be second.
    const conflict = byReason.get("CONFLICT");
    expect(conflict?.factId).toBe(call.fact_id);
    expect([firstVersionAt, secondVersionAt]).toContainEqual(conflict?.source);
    expect(conflict?.detail).toContain(call.fact_id);
    // Revision 2: a conflict's dead letter names the offset of every version.
    for (const at of [firstVersionAt, secondVersionAt])
      expect(conflict?.detail).toContain(`${at.topic}/${at.partition}/${at.offset}`);

    // The stream goes on: a valid fact produced after the poison updates the results, and the
    // quarantined call contributes nothing (its window would otherwise have results).
    await send(2, valid.fact_id, await serde.encodeFact(valid));
    const expected = resultsByKey(
      evaluateFacts([call, conflicting, valid] as Parameters<typeof evaluateFacts>[0]).lines.map(
        (line) => JSON.parse(line) as MetricResult,
      ),
    );
    expect(expected.size).toBeGreaterThan(0);
    expect(
      [...expected.values()].every(
        (result) => result.scope.kind !== "window" || result.scope.start.startsWith("2026-03-05"),
      ),
    ).toBe(true);
    const quiet = await waitForResults(kafka, topics.results, expected, 90_000, serde);
    expect(quiet.comparison.differingKeys, describeDifferences(expected, quiet.actual, quiet.comparison)).toEqual([]);

    const samples = await metricsCounting(instance, "CONFLICT");
    for (const reason of ["UNDECODABLE_BYTES", "UNKNOWN_SCHEMA_ID", "UNSUPPORTED_CONTRACT", "CONFLICT"])
      expect(metricSum(samples, "agentops_dead_letters_total", { reason }), reason).toBeGreaterThanOrEqual(1);
    // Three poison records, and the conflict once per identity it breaks (its fact_id and its call
    // id), as the embedded replay's dead-letter file reports it.
    const all = await readDeadLetters(kafka, topics.deadLetters, serde);
    expect(all).toHaveLength(5);
    expect(
      all
        .filter((letter) => letter.reason === "CONFLICT")
        .map((letter) => letter.field)
        .sort(),
    ).toEqual(["call", "fact"]);
  });

  it("revision 2: an invalid measure is reported (INVALID_MEASURE, not rejecting, counted in /metrics) while its fact counts; a later TERMINAL summary is a conflict naming both offsets", async () => {
    const dir = testDir("agentops-measure-");
    const prefix = uniqueName("measure");
    const topics = topicNames(prefix);
    const instance = await startProcessor({ topicPrefix: prefix, name: "measure", dir });
    const producer = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
    const serde = topicSerde();
    const send = async (partition: number, key: string, value: Buffer) =>
      coordinates(await producer.send({ topic: topics.facts, messages: [{ key, value, partition }] }), topics.facts);

    const callJson = {
      ...envelope,
      type: "model_call",
      fact_id: "measure-call-1",
      event_time: "2026-03-01T10:00:00.000Z",
      call_id: "measure-call-1",
      run_id: "measure-run",
      operational: true,
      provider: "anthropic",
      model: "claude-x",
      role: "writer",
      runtime: "claude-code",
      span_duration_ms: 1200,
      input_tokens: 100,
      output_tokens: 20,
      usage_source: "PROVIDER",
    };
    // A real Avro record whose span duration is negative: valid Avro, an invalid measure of the contract.
    const badSpan = { ...validFact(callJson), span_duration_ms: -5 } as Fact;
    const summaryJson = {
      ...envelope,
      type: "delivery_summary",
      delivery_id: "measure-dlv-1",
      status: "TERMINAL",
      requirement_changed: false,
      elapsed_ms: 60_000,
      stage_reached: "review",
    };
    const first = validFact({
      ...summaryJson,
      fact_id: "measure-sum-1",
      event_time: "2026-03-01T11:00:00.000Z",
      outcome: "SUCCEEDED",
    });
    const later = validFact({
      ...summaryJson,
      fact_id: "measure-sum-2",
      event_time: "2026-03-01T12:00:00.000Z",
      outcome: "FAILED",
    });

    const badSpanAt = await send(0, badSpan.fact_id, await serde.encodeFact(badSpan));
    const firstAt = await send(1, first.fact_id, await serde.encodeFact(first));
    const laterAt = await send(1, later.fact_id, await serde.encodeFact(later));

    const letters = await waitFor(
      "two dead letters",
      async () => {
        const found = await readDeadLetters(kafka, topics.deadLetters, serde);
        return found.length >= 2 ? found : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1_000 },
    );
    const byReason = new Map(letters.map((letter) => [letter.reason, letter] as const));
    expect([...byReason.keys()].sort()).toEqual(["INVALID_MEASURE", "LATER_TERMINAL_SUMMARY"]);
    expect(byReason.get("INVALID_MEASURE")).toMatchObject({
      source: badSpanAt,
      factId: badSpan.fact_id,
      field: "span_duration_ms",
      recordRejected: false,
    });
    const laterLetter = byReason.get("LATER_TERMINAL_SUMMARY");
    expect(laterLetter?.recordRejected).toBe(false);
    for (const at of [firstAt, laterAt])
      expect(laterLetter?.detail).toContain(`${at.topic}/${at.partition}/${at.offset}`);

    // The call still counts (its tokens), without its duration; the Delivery reads its earliest TERMINAL summary.
    const parsedBadSpan = parseDecodedFact(
      JSON.parse(JSON.stringify({ ...badSpan, event_time: new Date(badSpan.event_time).toISOString() })),
    );
    if (!parsedBadSpan.ok) throw new Error("the invalid-measure call must be accepted");
    const expected = resultsByKey(
      evaluateFacts([parsedBadSpan.fact, first, later] as Parameters<typeof evaluateFacts>[0]).lines.map(
        (line) => JSON.parse(line) as MetricResult,
      ),
    );
    expect([...expected.values()].find((result) => result.metric_id === "operational-token-usage")?.status).toBe(
      "PUBLISHED",
    );
    expect([...expected.values()].find((result) => result.metric_id === "operational-latency-ms")?.status).toBe(
      "NOT_AVAILABLE",
    );
    const settled = await waitForResults(kafka, topics.results, expected, 90_000, serde);
    expect(settled.comparison.differingKeys, describeDifferences(expected, settled.actual, settled.comparison)).toEqual(
      [],
    );

    const samples = await metricsCounting(instance, "LATER_TERMINAL_SUMMARY");
    expect(metricSum(samples, "agentops_dead_letters_total", { reason: "INVALID_MEASURE" })).toBe(1);
    expect(metricSum(samples, "agentops_invalid_measures_total", { field: "span_duration_ms" })).toBe(1);
    expect(metricSum(samples, "agentops_dead_letters_total", { reason: "LATER_TERMINAL_SUMMARY" })).toBe(1);
  });
});
