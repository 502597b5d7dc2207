import { OBSERVATION_CONTRACT } from "../../contract/fact-schema.ts";
import { attributeEquals, readCount, readString, type AttributeScope } from "./attribute-reading.ts";
import type { OtlpMappingConfig } from "./mapping-config.ts";
import type { RawFact } from "./mapping-outcome.ts";

/**
 * The parts of a model_call that GenAI spans and Claude Code events read the same way: the
 * attribution tuple, tokens and the operational flag. Absent attributes leave a field out.
 */
export function callMeasures(scope: AttributeScope, config: OtlpMappingConfig): RawFact {
  const inputTokens = readCount(scope, config.inputTokens);
  const outputTokens = readCount(scope, config.outputTokens);
  return dropUndefined({
    operational: !config.nonOperational.some((rule) => attributeEquals(scope, rule.attribute, rule.equals)),
    provider: readString(scope, config.provider),
    model: readString(scope, config.model),
    role: readString(scope, config.role),
    runtime: runtimeOf(scope, config),
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    // Classified only when the record reports usage; with no counts it stays unclassified.
    usage_source: inputTokens !== undefined || outputTokens !== undefined ? config.usageSource : undefined,
  });
}

function runtimeOf(scope: AttributeScope, config: OtlpMappingConfig): string | undefined {
  const explicit = readString(scope, config.runtime);
  if (explicit !== undefined) return explicit;
  const service = readString({ record: new Map(), resource: scope.resource }, ["service.name"]);
  const version = readString({ record: new Map(), resource: scope.resource }, ["service.version"]);
  return service !== undefined && version !== undefined && config.runtimeFromService.includes(service)
    ? `${service}@${version}`
    : undefined;
}

/** The envelope every produced fact carries; `source` names the host that reported it. */
export function envelope(
  type: string,
  factId: string,
  eventTime: string,
  basis: "DIRECT_HOST" | "ESTIMATED",
  scope: AttributeScope,
): RawFact {
  const service = readString({ record: new Map(), resource: scope.resource }, ["service.name"]) ?? "unknown-service";
  return {
    contract: OBSERVATION_CONTRACT,
    type,
    fact_id: factId,
    event_time: eventTime,
    provenance: { basis, source: `otlp:${service}` },
  };
}

export function dropUndefined(fields: Record<string, unknown>): RawFact {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
