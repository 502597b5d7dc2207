import { canonicalJson } from "../../contract/canonical-json.ts";
import { instantFromNanos, readString, type AttributeScope } from "./attribute-reading.ts";
import { callMeasures, dropUndefined, envelope } from "./call-attribution.ts";
import type { OtlpMappingConfig } from "./mapping-config.ts";
import { ignored, unmappable, type MappingOutcome } from "./mapping-outcome.ts";
import type { OtlpSpan } from "./otlp-records.ts";

/**
 * OTel GenAI semantic-convention spans: a model operation becomes a `model_call`, an
 * `execute_tool` span an `agent_step` tool call. Every other span is ignored.
 */
export function mapGenAiSpan(span: OtlpSpan, config: OtlpMappingConfig): MappingOutcome {
  const scope: AttributeScope = { record: span.attributes, resource: span.resource };
  const operation = readString(scope, config.genAi.operation);
  if (operation === undefined) return ignored("span without a GenAI operation");
  const isCall = config.genAi.modelCallOperations.includes(operation);
  const isTool = config.genAi.toolOperations.includes(operation);
  if (!isCall && !isTool) return ignored(`GenAI operation "${operation}" is neither a model call nor a tool call`);
  const missingId = span.traceId === "" ? "traceId" : span.spanId === "" ? "spanId" : undefined;
  if (missingId !== undefined) {
    const detail = "a GenAI span needs its trace and span ids: they are the call's identity";
    return unmappable("NO_STABLE_IDENTITY", missingId, detail);
  }
  if (span.startTimeUnixNano === undefined)
    return unmappable("NO_EVENT_TIME", "startTimeUnixNano", "the span has no start time");
  const eventTime = instantFromNanos(span.startTimeUnixNano);
  if (eventTime === undefined)
    return unmappable("NO_EVENT_TIME", "startTimeUnixNano", "the span's start time is not a representable instant");
  const runId = readString(scope, config.runId) ?? (config.runIdFromTraceId ? span.traceId : undefined);
  if (runId === undefined)
    return unmappable("NO_RUN_ID", config.runId.join("|"), "no run attribute and runIdFromTraceId is off");
  const identity = `${span.traceId}:${span.spanId}`;
  if (isCall) {
    const duration =
      span.endTimeUnixNano !== undefined && span.endTimeUnixNano >= span.startTimeUnixNano
        ? Number(span.endTimeUnixNano - span.startTimeUnixNano) / 1e6
        : undefined;
    return {
      kind: "facts",
      facts: [
        {
          ...envelope("model_call", `otlp:model_call:${identity}`, eventTime, "DIRECT_HOST", scope),
          call_id: `otlp:${identity}`,
          run_id: runId,
          ...callMeasures(scope, config),
          ...dropUndefined({ span_duration_ms: duration }),
        },
      ],
    };
  }
  const args = readString(scope, config.genAi.toolArguments);
  return {
    kind: "facts",
    facts: [
      {
        ...envelope("agent_step", `otlp:agent_step:${identity}`, eventTime, "DIRECT_HOST", scope),
        run_id: runId,
        // Spans carry no step counter: the start time in microseconds orders the run's tool calls.
        seq: Number(span.startTimeUnixNano / 1000n),
        kind: "tool_call",
        ...dropUndefined({
          tool: readString(scope, config.genAi.toolName),
          input: args === undefined ? undefined : argumentsJson(args),
          status: span.statusCode === 2 ? "error" : span.statusCode === 1 ? "ok" : undefined,
        }),
      },
    ],
  };
}

/** Tool arguments as canonical JSON; text that is not JSON is kept as a JSON string. */
export function argumentsJson(text: string): string {
  try {
    return canonicalJson(JSON.parse(text));
  } catch {
    return canonicalJson(text);
  }
}
