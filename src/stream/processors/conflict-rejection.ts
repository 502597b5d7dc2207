import type { Rejection } from "../../contract/rejection.ts";
import type { Conflict } from "../../metrics/fact-ledger.ts";

/**
 * A conflict's dead-letter reason, field and detail, worded once for the Kafka engine and the
 * embedded replay. `field` is the identity's kind (fact, call, cost, ...); the detail names where
 * every version was read (a file's line or a topic's `topic/partition/offset`, contract revision 2
 * §3). CONFLICT quarantines every version and rejects the records; LATER_TERMINAL_SUMMARY reads the
 * earliest TERMINAL summary and ignores the later ones, so nothing is rejected.
 */
const TERMINAL_RULE = "the earliest by (event_time, fact_id) is read, the later ones are ignored";

export function conflictRejection(conflict: Conflict): Rejection & { readonly recordRejected: boolean } {
  const [kind = "", id = ""] = conflict.identity.split("\u0000");
  const versions = conflict.versions
    .map((version) => `${version.factId} at ${version.origin ?? "unknown position"}`)
    .join(", ");
  const detail =
    conflict.reason === "CONFLICT"
      ? `${conflict.factIds.length} distinct records share ${kind} ${id} (versions: ${versions}); all are quarantined and none contributes`
      : `${kind} ${id} has ${conflict.factIds.length} TERMINAL summaries (versions: ${versions}); ${TERMINAL_RULE}`;
  return { reason: conflict.reason, field: kind, detail, recordRejected: conflict.reason === "CONFLICT" };
}
