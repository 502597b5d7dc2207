import type { Conflict } from "../../../metrics/fact-ledger.ts";
import { isTopicPosition, type DeadLetter } from "../../processor.ts";
import { conflictRejection } from "../../processors/conflict-rejection.ts";

/**
 * A dead letter as a line of the replay's dead-letter file: the file's form of what the
 * dead-letter topic carries, with the line (or Avro record index) instead of topic coordinates
 * and the rejected line's text instead of its bytes.
 */
export function fileDeadLetterLine(letter: Extract<DeadLetter, { kind: "record" }>): string {
  const { position, rejection } = letter;
  if (isTopicPosition(position)) throw new Error("a file dead letter needs a file position");
  const raw = letter.original !== null && "text" in letter.original ? letter.original.text : null;
  return JSON.stringify({ reason: rejection.reason, field: rejection.field, detail: rejection.detail, record_rejected: letter.recordRejected, source: { file: position.file, line: position.line }, raw });
}

/** A conflict as a line of the dead-letter file, with the line of every version. */
export function fileConflictLine(conflict: Conflict, file: string): string {
  const { reason, field, detail, recordRejected } = conflictRejection(conflict);
  return JSON.stringify({
    reason,
    field,
    detail,
    record_rejected: recordRejected,
    source: { file, fact_ids: conflict.factIds, versions: conflict.versions.map((version) => ({ fact_id: version.factId, line: version.origin })) },
    raw: null,
  });
}
