/**
 * What one OTLP record becomes. `ignored` is telemetry that is not agent work this receiver maps
 * (an HTTP span, a metric point): accepted, counted, nothing produced. `unmappable` is agent
 * telemetry that lacks what a fact needs: rejected in the partial-success answer and sent to the
 * dead-letter topic with the reason.
 */
export type UnmappableReason = "NO_RUN_ID" | "NO_EVENT_TIME" | "NO_STABLE_IDENTITY" | "NO_SEQUENCE" | "INVALID_FACT";

/** A fact in the contract's JSON form, before validation. */
export type RawFact = Record<string, unknown>;

export type MappingOutcome =
  | { readonly kind: "facts"; readonly facts: readonly RawFact[] }
  | { readonly kind: "ignored"; readonly reason: string }
  | { readonly kind: "unmappable"; readonly reason: UnmappableReason; readonly field: string; readonly detail: string };

export function unmappable(
  reason: UnmappableReason,
  field: string,
  detail: string,
): Extract<MappingOutcome, { kind: "unmappable" }> {
  return { kind: "unmappable", reason, field, detail };
}

export function ignored(reason: string): Extract<MappingOutcome, { kind: "ignored" }> {
  return { kind: "ignored", reason };
}
