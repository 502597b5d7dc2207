import type { Message } from "kafkajs";
import { deadLetterKey, type DeadLetterRecord } from "../../../contract/dead-letter.ts";
import { partitionOf } from "../../../partitioned/partitioner.ts";
import { encodeAgentEvent } from "../../../kafka/serde/agent-events-record.ts";
import { encodeEngineFact } from "../../../kafka/serde/engine-facts-record.ts";
import type { TopicSerde } from "../../../kafka/serde/topic-serde.ts";
import {
  isTopicPosition,
  type DeadLetter,
  type SinkRecord,
  type SourceRecord,
  type TopicPosition,
} from "../../processor.ts";
import { conflictRejection } from "../../processors/conflict-rejection.ts";
import { countDeadLetter } from "../../runtime/task-writes.ts";
import type { Telemetry } from "../../runtime/telemetry.ts";

/** What encoding a sink record needs besides the record. */
export interface SinkEncoding {
  readonly serde: TopicSerde;
  readonly telemetry: Telemetry;
  /** The partitioned engine's partition count: where a fact is placed on the stage facts topic. */
  readonly enginePartitions: number;
}

/** A sink record as a Kafka message, in the form its topic carries. */
export async function encodeOutput(encoding: SinkEncoding, output: SinkRecord): Promise<Message> {
  switch (output.topic) {
    case "deadLetters": {
      countDeadLetter(encoding.telemetry, output.value);
      const letter = deadLetterRecord(output.value);
      return { key: deadLetterKey(letter), value: await encoding.serde.encodeDeadLetter(letter) };
    }
    case "agentEvents":
      return { key: output.key, value: encodeAgentEvent(output.value.event) };
    case "engineFacts":
    case "stageFacts": {
      const encoded = encodeEngineFact(output.value.fact, topicPosition(output.value.source));
      // The single engine's topic has one partition by design (naming it skips the key hash per
      // record); the partitioned engine's is placed by fact_id, with the stages' own placement.
      const partition =
        output.topic === "engineFacts" ? 0 : partitionOf(output.value.fact.fact_id, encoding.enginePartitions);
      return { key: encoded.key, value: encoded.value, partition };
    }
    case "engineContributions":
      // Partitioned like the engine-facts topic it accompanies (one partition today).
      return { key: output.key, value: output.value, partition: 0 };
    case "stageClaims":
    case "stageEntities":
    case "stagePartials":
      return {
        key: output.key,
        value: output.value.value,
        partition: output.value.partition,
        headers: writerHeader(output.writer),
      };
    case "alerts":
      return { key: output.key, value: await encoding.serde.encodeAlert(output.value) };
    case "runState":
      return { key: output.key, value: JSON.stringify(output.value) };
    case "results":
      // The single engine writes results through its published-results store; the partitioned
      // engine's aggregation stage writes them itself, naming its partition.
      if (output.writer === undefined) {
        throw new Error("results are written as a store's changelog, or by a writer that names itself");
      }
      return {
        key: output.key,
        value: output.value === null ? null : await encoding.serde.encodeResult(output.value),
        headers: writerHeader(output.writer),
      };
    case "runMonitorChangelog":
    case "facts":
      throw new Error(`${output.topic} is written as a store's changelog, not as an output`);
  }
}

/** The header naming the stage partition that wrote a record (read back by the reconciler after a restart). */
export const WRITER_HEADER = "agentops-writer";

function writerHeader(writer: string | undefined): Record<string, string> {
  if (writer === undefined) throw new Error("a partitioned engine stage's record must name its writer");
  return { [WRITER_HEADER]: writer };
}

/** A header's value as text (kafkajs reads headers as buffers). */
export function headerText(value: unknown): string | undefined {
  if (Buffer.isBuffer(value)) return value.toString("utf8");
  return typeof value === "string" ? value : undefined;
}

/** A dead letter as the dead-letter topic's record. */
export function deadLetterRecord(letter: DeadLetter): DeadLetterRecord {
  const source = topicPosition(letter.position);
  if (letter.kind === "conflict") {
    const { recordRejected, ...rejection } = conflictRejection(letter.conflict);
    return { ...rejection, source, factId: letter.factId, key: null, value: null, recordRejected };
  }
  const original =
    letter.original !== null && "value" in letter.original ? letter.original : { key: null, value: null };
  return {
    ...letter.rejection,
    source,
    factId: letter.factId,
    key: original.key,
    value: original.value,
    recordRejected: letter.recordRejected,
  };
}

function topicPosition(position: SourceRecord<unknown>["position"]): TopicPosition {
  if (!isTopicPosition(position)) {
    throw new Error(
      `a record read from a file (${position.file}:${position.line}) cannot be written to Kafka with topic coordinates`,
    );
  }
  return position;
}
