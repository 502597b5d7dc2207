import { Effect } from "effect";
import type { EachBatchPayload, Message } from "kafkajs";
import { invalidMeasureLetter, type Rejection } from "../../contract/rejection.ts";
import { deadLetterMessage } from "./dead-letter-message.ts";
import { routeRecord } from "./ingest-router.ts";
import { encodeEngineFact } from "../../kafka/serde/engine-facts-record.ts";
import { encodeAgentEvent } from "../../kafka/serde/agent-events-record.ts";
import { Processors, type ProcessorEnvironment } from "../runtime/processor-environment.ts";
import { runConsumer } from "../runtime/run-consumer.ts";
import { TOPOLOGY } from "../topology.ts";
import { decodeFact } from "../../kafka/serde/decode-fact.ts";

/**
 * Ingest: facts topic → decode (registry) → validate (contract 1.0.0) → route. Rejected records go
 * to the dead-letter topic with their reason and source coordinates; agent events go to the run
 * monitor's topic keyed by run_id, and metric facts, normalised, to the engine's input topic,
 * both in the internal binary layout (validated here, not again by their readers). Offsets are
 * committed only after everything a batch produced is acknowledged, so a crash re-processes the
 * batch (at-least-once) and the engine's redelivery rule absorbs it.
 */
export const ingestProcessor = Effect.gen(function* () {
  const environment = yield* Processors;
  yield* runConsumer(environment, {
    role: "ingest",
    topic: environment.topics[TOPOLOGY.ingest.source],
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
    const decoded = await decodeFact(environment.registry, message.value);
    const route = routeRecord(decoded);
    if (route.to === "dead-letters") {
      deadLetters.push(await deadLetterMessage(serde, telemetry, { ...route.rejection, source, factId: decoded.factId, key: message.key, value: message.value }));
    } else if (route.to === "run-monitor") {
      for (const measure of route.invalidMeasures) deadLetters.push(await invalidMeasureMessage(environment, route.event.fact_id, measure, source));
      agentEvents.push({ key: route.event.run_id, value: encodeAgentEvent(route.event) });
    } else {
      for (const measure of route.invalidMeasures) deadLetters.push(await invalidMeasureMessage(environment, route.fact.fact_id, measure, source));
      const encoded = encodeEngineFact(route.fact, source);
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
  if (topicMessages.length > 0) await environment.send(topicMessages);
  if (lastOffset !== undefined) {
    payload.resolveOffset(lastOffset);
    telemetry.count("agentops_records_processed_total", "Records processed, by processor", { processor: "ingest" }, batch.messages.length);
  }
  await payload.heartbeat();
}

/** Contract revision 2 §1: an invalid measure is reported, not rejecting its (accepted) fact. */
function invalidMeasureMessage(environment: ProcessorEnvironment, factId: string, measure: Rejection, source: { topic: string; partition: number; offset: string }): Promise<Message> {
  return deadLetterMessage(environment.serde, environment.telemetry, { ...invalidMeasureLetter(factId, measure), source, factId, key: null, value: null, recordRejected: false });
}
