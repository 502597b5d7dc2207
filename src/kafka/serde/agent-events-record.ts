import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { isAgentEvent, type AgentEvent } from "../../contract/facts.ts";
import { BinaryReader, BinaryWriter, InternalRecordError } from "../../codec/binary-form.ts";
import { decodeFact, type DecodedFact } from "./decode-fact.ts";
import { FACT_LAYOUT_VERSION, readFact, writeFact } from "../../codec/fact-layout.ts";

/**
 * Records of the agent-events topic (the run monitor's input), keyed by run_id. The topic has two
 * writers: ingest forwards the agent events it validated in the internal binary layout
 * (src/codec/fact-layout.ts), read back without validating again; producers that publish
 * agent events straight to this topic (`agentops produce`, the OTLP receiver, the Claude Code
 * hook: src/ingest/fact-publisher.ts) write Avro through the registry, which the run monitor
 * decodes and validates as ingest would. The first byte tells them apart (the Confluent wire
 * format starts with 0). Either way each event is validated exactly once.
 */

/** First byte of an internal agent-event record. */
export const AGENT_EVENT_MARKER = 0xae;

const writer = new BinaryWriter();

/** An agent event ingest validated, in the internal layout. */
export function encodeAgentEvent(event: AgentEvent): Buffer {
  writer.start();
  writer.byte(AGENT_EVENT_MARKER);
  writer.byte(FACT_LAYOUT_VERSION);
  writeFact(writer, event);
  return writer.finish();
}

/** Reads an internal agent-event record; throws InternalRecordError (with the reason) when it cannot. */
export function decodeAgentEvent(bytes: Buffer): AgentEvent {
  if (bytes[0] !== AGENT_EVENT_MARKER)
    throw new InternalRecordError(`not an internal agent-event record (first byte ${String(bytes[0])})`);
  if (bytes[1] !== FACT_LAYOUT_VERSION)
    throw new InternalRecordError(
      `agent-event layout version ${String(bytes[1])}; this build reads version ${FACT_LAYOUT_VERSION}`,
    );
  const reader = new BinaryReader(bytes, 2);
  const fact = readFact(reader);
  reader.end();
  if (!isAgentEvent(fact))
    throw new InternalRecordError(`a ${fact.type} record does not belong on the agent-events topic`);
  return fact;
}

/**
 * Any record of the agent-events topic, in the form the ingest and run-monitor processors share:
 * internal records are read as written (no registry, no validation), registry records are
 * decoded and validated. An unreadable internal record is UNDECODABLE_BYTES with the reason.
 */
export async function decodeAgentEventRecord(registry: SchemaRegistry, bytes: Buffer | null): Promise<DecodedFact> {
  if (bytes === null || bytes[0] !== AGENT_EVENT_MARKER) return decodeFact(registry, bytes);
  try {
    const event = decodeAgentEvent(bytes);
    return { ok: true, fact: event, invalidMeasures: [], factId: event.fact_id };
  } catch (error) {
    if (!(error instanceof InternalRecordError)) throw error;
    return {
      ok: false,
      rejection: { reason: "UNDECODABLE_BYTES", field: "", detail: `internal agent-event record: ${error.message}` },
      factId: null,
    };
  }
}
