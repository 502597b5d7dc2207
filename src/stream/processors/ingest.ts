import { invalidFieldLetter } from "../../contract/rejection.ts";
import type { DecodedFact } from "../../kafka/serde/decode-fact.ts";
import type { DeadLetter, Processor, SinkRecord, SourceRecord } from "../processor.ts";
import { routeRecord } from "./ingest-router.ts";

/**
 * Ingest: decoded facts → validate (the transport decoded and the contract parsed them) → route.
 * A rejected record goes to the dead letters with its reason, position and original form; an agent
 * event to the run monitor's topic keyed by run_id; a metric fact, normalised, to the engine's
 * topic with where it was read. An accepted record's invalid measures and task entries are reported
 * as non-rejecting dead letters (contract revision 2 §1, revision 3 change 5). Stateless: any instance may take any
 * partition, and a re-processed batch produces the same records again.
 */
export function ingestTo(engineInput: EngineInput): Processor<DecodedFact> {
  return {
    name: "ingest",
    open: () => ({
      process: (batch) => {
        const outputs: SinkRecord[] = [];
        for (const record of batch.records) routeInto(outputs, record, engineInput);
        return { outputs };
      },
    }),
  };
}

/** Where accepted metric facts go: the single engine's topic, or the partitioned engine's (--engine stages). */
export type EngineInput = "engineFacts" | "stageFacts";

export const ingestProcessor: Processor<DecodedFact> = ingestTo("engineFacts");

function routeInto(outputs: SinkRecord[], record: SourceRecord<DecodedFact>, engineInput: EngineInput): void {
  const { position, value: decoded } = record;
  const route = routeRecord(decoded);
  if (route.to === "dead-letters") {
    const letter: DeadLetter = {
      kind: "record",
      rejection: route.rejection,
      recordRejected: true,
      position,
      factId: decoded.factId,
      original: record.original,
    };
    outputs.push({ topic: "deadLetters", key: "", value: letter });
    return;
  }
  const fact = route.to === "run-monitor" ? route.event : route.fact;
  for (const measure of route.invalidMeasures) {
    outputs.push({
      topic: "deadLetters",
      key: "",
      value: {
        kind: "record",
        rejection: invalidFieldLetter(fact, measure),
        recordRejected: false,
        position,
        factId: fact.fact_id,
        original: null,
      },
    });
  }
  if (route.to === "run-monitor") {
    outputs.push({
      topic: "agentEvents",
      key: route.event.run_id,
      value: { event: route.event, bytes: "value" in record.original ? record.original.value : null },
    });
  } else {
    outputs.push({ topic: engineInput, key: route.fact.fact_id, value: { fact: route.fact, source: position } });
  }
}
