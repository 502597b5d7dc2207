import { canonicalJson } from "../../contract/canonical-json.ts";
import type { Fact } from "../../contract/facts.ts";
import { parseFact } from "../../contract/parse-fact.ts";
import { claudeCodeEventName, mapClaudeCodeEvent } from "./map-claude-code-event.ts";
import { mapGenAiSpan } from "./map-genai-span.ts";
import type { OtlpMappingConfig } from "./mapping-config.ts";
import { ignored, unmappable, type MappingOutcome, type UnmappableReason } from "./mapping-outcome.ts";
import type { OtlpRecord } from "./otlp-records.ts";

/** A record that could not be mapped: its position in the request, why, and the record itself. */
export interface UnmappedRecord {
  readonly index: number;
  readonly reason: UnmappableReason;
  readonly field: string;
  readonly detail: string;
  /** The record as decoded (attributes as objects), kept for the dead letter. */
  readonly record: string;
}

export interface MappedRequest {
  /** Validated facts with their contract JSON (canonical), in request order. */
  readonly facts: readonly { readonly fact: Fact; readonly json: string }[];
  readonly unmapped: readonly UnmappedRecord[];
  /** Records that are not agent telemetry this receiver maps, by reason. */
  readonly ignored: Readonly<Record<string, number>>;
  readonly records: number;
}

/** Maps every record of one request; pure. Each produced fact is checked against the contract. */
export function mapOtlpRecords(records: readonly OtlpRecord[], config: OtlpMappingConfig): MappedRequest {
  const facts: { fact: Fact; json: string }[] = [];
  const unmapped: UnmappedRecord[] = [];
  const ignoredCounts: Record<string, number> = {};
  for (const record of records) {
    const outcome = validated(mapRecord(record, config));
    if (outcome.kind === "ignored") ignoredCounts[outcome.reason] = (ignoredCounts[outcome.reason] ?? 0) + 1;
    else if (outcome.kind === "unmappable")
      unmapped.push({
        index: record.index,
        reason: outcome.reason,
        field: outcome.field,
        detail: outcome.detail,
        record: describe(record),
      });
    else facts.push(...outcome.facts);
  }
  return { facts, unmapped, ignored: ignoredCounts, records: records.length };
}

export function mapRecord(record: OtlpRecord, config: OtlpMappingConfig): MappingOutcome {
  switch (record.signal) {
    case "traces":
      return mapGenAiSpan(record, config);
    case "logs": {
      const event = claudeCodeEventName(record, config);
      return event === undefined
        ? ignored("log record that is not a Claude Code event")
        : mapClaudeCodeEvent(record, event, config);
    }
    case "metrics":
      // Metric points are aggregates without a call's identity; the events carry the same usage per call.
      return ignored(`metric point (${record.metricName}): aggregates are not facts`);
  }
}

type ValidatedOutcome =
  | Exclude<MappingOutcome, { kind: "facts" }>
  | { readonly kind: "facts"; readonly facts: readonly { fact: Fact; json: string }[] };

// A mapping that produces a fact the contract rejects is a mapping gap: the whole record is
// reported, never half of it published.
function validated(outcome: MappingOutcome): ValidatedOutcome {
  if (outcome.kind !== "facts") return outcome;
  const facts: { fact: Fact; json: string }[] = [];
  for (const raw of outcome.facts) {
    const parsed = parseFact(raw);
    if (!parsed.ok)
      return unmappable(
        "INVALID_FACT",
        parsed.rejection.field,
        `${parsed.rejection.reason}: ${parsed.rejection.detail}`,
      );
    // Canonical JSON (the fact's identity bytes) has no form for a lone UTF-16 surrogate.
    const illFormed = illFormedString(raw, "");
    if (illFormed !== undefined) {
      return unmappable("INVALID_FACT", illFormed, "a string that is not well-formed Unicode (a lone surrogate)");
    }
    facts.push({ fact: parsed.fact, json: canonicalJson(raw) });
  }
  return { kind: "facts", facts };
}

/** In unicode mode a well-formed surrogate pair is one code point, so only a lone surrogate matches. */
const LONE_SURROGATE = /\p{Cs}/u;

/** The path of the first string (value or key) that is not well-formed UTF-16, if any. */
function illFormedString(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return LONE_SURROGATE.test(value) ? path || "(value)" : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  for (const [key, field] of Object.entries(value)) {
    const at = path === "" ? key : `${path}.${key}`;
    if (LONE_SURROGATE.test(key)) return at;
    const found = illFormedString(field, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

function describe(record: OtlpRecord): string {
  const { resource, attributes, ...rest } = record;
  return JSON.stringify(
    { ...rest, resource: Object.fromEntries(resource), attributes: Object.fromEntries(attributes) },
    (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value),
  );
}
