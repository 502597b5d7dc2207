import type { Conflict } from "../metrics/fact-ledger.ts";

/**
 * A conflict as a line of a replay's dead-letter file: its reason (CONFLICT: every version
 * quarantined; LATER_TERMINAL_SUMMARY: the earliest TERMINAL summary is read, the later ones
 * ignored), and the line of every version (contract revision 2 §3).
 */
export function conflictDeadLetter(conflict: Conflict, file: string) {
  const identity = conflict.identity.replace("\u0000", " ");
  const detail =
    conflict.reason === "CONFLICT"
      ? `${conflict.factIds.length} distinct records share identity ${identity}; all are quarantined`
      : `${identity} has ${conflict.factIds.length} TERMINAL summaries; the earliest by (event_time, fact_id) is read, the later ones are ignored`;
  return {
    reason: conflict.reason,
    field: "",
    detail,
    record_rejected: conflict.reason === "CONFLICT",
    source: { file, fact_ids: conflict.factIds, versions: conflict.versions.map((version) => ({ fact_id: version.factId, line: version.origin })) },
    raw: null,
  };
}
