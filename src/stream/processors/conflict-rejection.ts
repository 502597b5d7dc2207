import type { Rejection } from "../../contract/rejection.ts";
import type { Conflict } from "../../metrics/fact-ledger.ts";

/**
 * The dead letter's reason, field and detail for a quarantined conflict, worded once for the
 * Kafka engine and the embedded replay. `field` is the identity's kind (fact, call, cost, ...).
 */
export function conflictRejection(conflict: Conflict): Rejection {
  const [kind = "", id = ""] = conflict.identity.split("\u0000");
  return {
    reason: "CONFLICT",
    field: kind,
    detail: `${conflict.factIds.length} distinct records share ${kind} ${id} (fact ids ${conflict.factIds.join(", ")}); all are quarantined and none contributes`,
  };
}
