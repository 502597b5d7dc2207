import { createHash } from "node:crypto";
import { canonicalJson } from "../contract/canonical-json.ts";
import type { DestructiveRuleId, Severity } from "./destructive-rules.ts";
import type { RunRuleId } from "./run-rules.ts";

/** A tripwire alert, contract §5 (alerts topic, keyed by run_id). */
export interface TripwireAlert {
  readonly alert_id: string;
  readonly run_id: string;
  readonly rule_id: DestructiveRuleId | RunRuleId;
  /** The rule's version as text (the Avro schema's string), e.g. "1". */
  readonly rule_version: string;
  readonly kind: "LOOP" | "REDUNDANCY" | "DESTRUCTIVE";
  readonly severity: Severity;
  /** Epoch ms of the record that triggered the alert. */
  readonly event_time: number;
  readonly evidence: AlertEvidence;
  readonly message: string;
}

export interface AlertEvidence {
  readonly seq_from: number;
  readonly seq_to: number;
  readonly repetitions?: number;
  readonly cycle_length?: number;
  readonly command?: string;
  readonly path?: string;
  readonly detail?: string;
}

/**
 * Deterministic id: the same run, rule and seq range always give the same id, so a replay or a
 * redelivery produces an alert the alerts topic (and any consumer) can recognise as the same.
 */
export function alertId(runId: string, ruleId: string, seqFrom: number, seqTo: number): string {
  return createHash("sha256").update(canonicalJson([runId, ruleId, seqFrom, seqTo])).digest("hex").slice(0, 32);
}

type AlertFields = Omit<TripwireAlert, "alert_id" | "evidence" | "rule_version"> & { readonly rule_version: number; readonly evidence: AlertEvidence };

export function makeAlert(fields: AlertFields): TripwireAlert {
  const evidence: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(fields.evidence)) if (value !== undefined) evidence[key] = value as string | number;
  return { alert_id: alertId(fields.run_id, fields.rule_id, fields.evidence.seq_from, fields.evidence.seq_to), ...fields, rule_version: String(fields.rule_version), evidence: evidence as unknown as AlertEvidence };
}

/** Total order for replay output: event time, then run, then seq range, then rule. */
export function compareAlerts(left: TripwireAlert, right: TripwireAlert): number {
  return left.event_time - right.event_time || compareText(left.run_id, right.run_id) || left.evidence.seq_to - right.evidence.seq_to || left.evidence.seq_from - right.evidence.seq_from || compareText(left.rule_id, right.rule_id) || compareText(left.alert_id, right.alert_id);
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
