import { createHash } from "node:crypto";
import { canonicalJson } from "../contract/canonical-json.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import type { DestructiveRule, DestructiveRuleId, Severity } from "./rules/rule-definition.ts";
import type { RunRule, RunRuleId } from "./rules/run-rules.ts";

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
  return createHash("sha256")
    .update(canonicalJson([runId, ruleId, seqFrom, seqTo]))
    .digest("hex")
    .slice(0, 32);
}

/** What a detector knows about one alert; the rule supplies id, version, kind and severity. */
type AlertFields = Pick<TripwireAlert, "run_id" | "event_time" | "message"> & { readonly evidence: AlertEvidence };

/** An alert raised by `rule`: destructive rules are DESTRUCTIVE, run rules carry their own kind. */
export function makeAlert(rule: DestructiveRule | RunRule, fields: AlertFields): TripwireAlert {
  const evidence: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(fields.evidence))
    if (value !== undefined) evidence[key] = value as string | number;
  return {
    alert_id: alertId(fields.run_id, rule.id, fields.evidence.seq_from, fields.evidence.seq_to),
    run_id: fields.run_id,
    rule_id: rule.id,
    rule_version: String(rule.version),
    kind: "kind" in rule ? rule.kind : "DESTRUCTIVE",
    severity: rule.severity,
    event_time: fields.event_time,
    evidence: evidence as unknown as AlertEvidence,
    message: fields.message,
  };
}

/** Total order for replay output: event time, then run, then seq range, then rule. */
export function compareAlerts(left: TripwireAlert, right: TripwireAlert): number {
  return (
    left.event_time - right.event_time ||
    byUtf8(left.run_id, right.run_id) ||
    left.evidence.seq_to - right.evidence.seq_to ||
    left.evidence.seq_from - right.evidence.seq_from ||
    byUtf8(left.rule_id, right.rule_id) ||
    byUtf8(left.alert_id, right.alert_id)
  );
}
