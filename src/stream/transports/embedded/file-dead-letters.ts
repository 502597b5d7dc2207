import type { Conflict } from "../../../metrics/fact-ledger.ts";
import { isTopicPosition, type DeadLetter } from "../../processor.ts";
import { conflictRejection } from "../../processors/conflict-rejection.ts";

/**
 * A dead letter as a line of the replay's dead-letter file: the file's form of what the
 * dead-letter topic carries, with the line (or Avro record index) of a file's record, and the
 * rejected line's text instead of its bytes.
 */
export function fileDeadLetterLine(letter: Extract<DeadLetter, { kind: "record" }>): string {
  const { position, rejection } = letter;
  // The audit runs the embedded transport over the facts topic: its records have topic coordinates.
  const source = isTopicPosition(position)
    ? { topic: position.topic, partition: position.partition, offset: position.offset }
    : { file: position.file, line: position.line };
  const raw = letter.original !== null && "text" in letter.original ? letter.original.text : null;
  return JSON.stringify({
    reason: rejection.reason,
    field: rejection.field,
    detail: rejection.detail,
    record_rejected: letter.recordRejected,
    source,
    raw,
  });
}

/** A conflict as a line of the dead-letter file, with the line of every version. */
export function fileConflictLine(conflict: Conflict, file: string): string {
  const { reason, field, detail, recordRejected } = conflictRejection(conflict);
  return JSON.stringify({
    reason,
    field,
    detail,
    record_rejected: recordRejected,
    source: {
      file,
      fact_ids: conflict.factIds,
      versions: conflict.versions.map((version) => ({ fact_id: version.factId, line: version.origin })),
    },
    raw: null,
  });
}
