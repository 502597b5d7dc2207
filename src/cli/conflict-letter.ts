import type { Conflict } from "../metrics/fact-ledger.ts";
import { conflictRejection } from "../stream/processors/conflict-rejection.ts";

/** A conflict as a line of a replay's dead-letter file, with the line of every version. */
export function conflictDeadLetter(conflict: Conflict, file: string) {
  const { reason, field, detail, recordRejected } = conflictRejection(conflict);
  return {
    reason,
    field,
    detail,
    record_rejected: recordRejected,
    source: { file, fact_ids: conflict.factIds, versions: conflict.versions.map((version) => ({ fact_id: version.factId, line: version.origin })) },
    raw: null,
  };
}
