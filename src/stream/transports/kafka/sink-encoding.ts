import type { DeadLetterRecord } from "../../../contract/dead-letter.ts";
import { InvariantError } from "../../../errors.ts";
import { isTopicPosition, type DeadLetter, type SourceRecord, type TopicPosition } from "../../processor.ts";
import { conflictRejection } from "../../processors/conflict-rejection.ts";

/** The header naming the stage partition that wrote a record (read back by the reconciler after a restart). */
export const WRITER_HEADER = "agentops-writer";

/** The writer header of a record some stage partition wrote (results and the records between stages). */
export function writerHeader(writer: string | undefined): Record<string, string> {
  if (writer === undefined) {
    throw new InvariantError({
      problem:
        "a partitioned engine stage's record must name its writer (results are otherwise written as a store's changelog)",
    });
  }
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

/** A record's topic coordinates: a record read from a file has none to write to Kafka. */
export function topicPosition(position: SourceRecord<unknown>["position"]): TopicPosition {
  if (!isTopicPosition(position)) {
    throw new InvariantError({
      problem: `a record read from a file (${position.file}:${position.line}) cannot be written to Kafka with topic coordinates`,
    });
  }
  return position;
}
