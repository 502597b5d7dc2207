import { isAgentEvent, type AgentEvent, type MetricFact } from "../../contract/facts.ts";
import type { ParseResult } from "../../contract/parse-fact.ts";
import type { Rejection } from "../../contract/rejection.ts";

/** Where one decoded record goes. */
export type Route =
  | { readonly to: "dead-letters"; readonly rejection: Rejection }
  | { readonly to: "run-monitor"; readonly event: AgentEvent; readonly invalidMeasures: readonly Rejection[] }
  | { readonly to: "engine"; readonly fact: MetricFact; readonly invalidMeasures: readonly Rejection[] };

/**
 * The ingest rule, the one place it is written: a record the contract rejects goes to the dead
 * letters, an agent event to the run monitor, a metric fact to the engine; an accepted record
 * carries its invalid measures, reported without rejecting it (contract revision 2 §1). The Kafka ingest
 * processor, the embedded replay and the audit rebuild all route through it, so they cannot
 * disagree about a record.
 */
export function routeRecord(parsed: ParseResult): Route {
  if (!parsed.ok) return { to: "dead-letters", rejection: parsed.rejection };
  return isAgentEvent(parsed.fact)
    ? {
        to: "run-monitor",
        event: parsed.fact,
        invalidMeasures: parsed.invalidMeasures,
      }
    : { to: "engine", fact: parsed.fact, invalidMeasures: parsed.invalidMeasures };
}
