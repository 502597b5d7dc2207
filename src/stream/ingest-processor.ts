import { Effect } from "effect";
import type { EachBatchPayload, Message } from "kafkajs";
import { isAgentEvent } from "../contract/facts.ts";
import { invalidMeasureLetter, type Rejection } from "../contract/rejection.ts";
import { deadLetterMessage } from "./dead-letter.ts";
import { encodeEngineFact } from "./engine-facts-record.ts";
import { Processors, type ProcessorEnvironment } from "./processor-environment.ts";
import { runConsumer } from "./run-consumer.ts";
import { sendBounded } from "./send-bounded.ts";
import { decodeFact } from "./decode-fact.ts";

/**
 * Ingest: facts topic → decode (registry) → validate (contract 1.0.0) → route. Rejected records go
 * to the dead-letter topic with their reason and source coordinates; agent events go to the run
 * monitor's topic keyed by run_id (same bytes); metric facts go, normalised, to the engine's
 * input topic. Offsets are committed only after everything a batch produced is acknowledged, so
 * a crash re-processes the batch (at-least-once) and the engine's redelivery rule absorbs it.
 */
export const ingestProcessor = Effect.gen(function* () {
  const environment = yield* Processors;
  yield* runConsumer(environment, {
    role: "ingest",
    topic: environment.topics.facts,
    fromBeginning: true,
    eachBatch: (payload) => handleBatch(environment, payload),
  });
});

async function handleBatch(environment: ProcessorEnvironment, payload: EachBatchPayload): Promise<void> {
  const { batch } = payload;
  const { topics, serde, telemetry } = environment;
  const deadLetters: Message[] = [];
  const agentEvents: Message[] = [];
  const engineFacts: Message[] = [];
  let lastOffset: string | undefined;
  for (const message of batch.messages) {
    if (!payload.isRunning() || payload.isStale()) break;
    const source = { topic: batch.topic, partition: batch.partition, offset: message.offset };
    const parsed = await decodeFact(environment.registry, message.value);
    if (!parsed.ok) {
      deadLetters.push(await deadLetterMessage(serde, telemetry, { ...parsed.rejection, source, factId: parsed.factId, key: message.key, value: message.value }));
    } else if (isAgentEvent(parsed.fact)) {
      agentEvents.push({ key: parsed.fact.run_id, value: message.value });
    } else {
      for (const measure of parsed.invalidMeasures) deadLetters.push(await invalidMeasureMessage(environment, parsed.fact.fact_id, measure, source));
      const encoded = encodeEngineFact(parsed.fact, source);
      // The engine topic has one partition by design: naming it skips the key hash per record.
      engineFacts.push({ key: encoded.key, value: encoded.value, partition: 0 });
    }
    lastOffset = message.offset;
  }
  const topicMessages = [
    { topic: topics.deadLetters, messages: deadLetters },
    { topic: topics.agentEvents, messages: agentEvents },
    { topic: topics.engineFacts, messages: engineFacts },
  ].filter((entry) => entry.messages.length > 0);
  if (topicMessages.length > 0) await sendBounded(environment.producer, topicMessages);
  if (lastOffset !== undefined) {
    payload.resolveOffset(lastOffset);
    telemetry.count("agentops_records_processed_total", "Records processed, by processor", { processor: "ingest" }, batch.messages.length);
  }
  await payload.commitOffsetsIfNecessary();
  await payload.heartbeat();
}

/** Contract revision 2 §1: an invalid measure is reported, not rejecting its (accepted) fact. */
function invalidMeasureMessage(environment: ProcessorEnvironment, factId: string, measure: Rejection, source: { topic: string; partition: number; offset: string }): Promise<Message> {
  return deadLetterMessage(environment.serde, environment.telemetry, { ...invalidMeasureLetter(factId, measure), source, factId, key: null, value: null, recordRejected: false });
}
