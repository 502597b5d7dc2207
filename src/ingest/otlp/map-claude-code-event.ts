import { instantFromNanos, readCount, readNonNegative, readString, type AttributeScope } from "./attribute-reading.ts";
import { callMeasures, dropUndefined, envelope } from "./call-attribution.ts";
import { argumentsJson } from "./map-genai-span.ts";
import type { OtlpMappingConfig } from "./mapping-config.ts";
import { ignored, unmappable, type MappingOutcome, type RawFact } from "./mapping-outcome.ts";
import type { OtlpLogRecord } from "./otlp-records.ts";

/**
 * Claude Code's own events (OTLP logs, `CLAUDE_CODE_ENABLE_TELEMETRY=1`), by the attribute names
 * of its monitoring documentation: `api_request` → model_call (+ cost), `tool_result` →
 * agent_step (+ sandbox_event exec for Bash when tool parameters are exported), a rejected
 * `tool_decision` → agent_step. `session.id` is the run; `event.sequence` orders its steps.
 */
export function claudeCodeEventName(record: OtlpLogRecord, config: OtlpMappingConfig): string | undefined {
  const prefix = config.claudeCode.eventPrefix;
  const candidates = [record.eventName, typeof record.body === "string" ? record.body : undefined];
  for (const name of candidates) if (name?.startsWith(prefix) === true) return name.slice(prefix.length);
  // Older exports name the event only in the `event.name` attribute, without the prefix.
  const attribute = record.attributes.get("event.name");
  const service = record.resource.get("service.name");
  return typeof attribute === "string" && typeof service === "string" && service.startsWith("claude-code")
    ? attribute
    : undefined;
}

export function mapClaudeCodeEvent(record: OtlpLogRecord, event: string, config: OtlpMappingConfig): MappingOutcome {
  const scope: AttributeScope = { record: record.attributes, resource: record.resource };
  if (event !== "api_request" && event !== "tool_result" && event !== "tool_decision")
    return ignored(`Claude Code event "${event}" carries no call or step`);
  const runId = readString(scope, ["session.id"]);
  if (runId === undefined)
    return unmappable(
      "NO_RUN_ID",
      "session.id",
      `a Claude Code ${event} event without session.id belongs to no run (OTEL_METRICS_INCLUDE_SESSION_ID must stay on)`,
    );
  const eventTime = eventTimeOf(record, scope);
  if (eventTime === undefined)
    return unmappable(
      "NO_EVENT_TIME",
      "timeUnixNano",
      `the ${event} event has no time (timeUnixNano, event.timestamp, observedTimeUnixNano)`,
    );
  const sequence = readCount(scope, ["event.sequence"]);
  if (event === "api_request") return apiRequest(scope, config, runId, eventTime, sequence);
  if (sequence === undefined)
    return unmappable(
      "NO_SEQUENCE",
      "event.sequence",
      `a ${event} event without event.sequence cannot be placed in its run`,
    );
  if (event === "tool_decision") {
    const decision = readString(scope, ["decision"]);
    // An accepted call is reported again, with its outcome, by its tool_result event.
    if (decision !== "reject") return ignored("an accepted tool_decision: its tool_result is the step");
    return { kind: "facts", facts: [toolStep(scope, runId, eventTime, sequence, "error")] };
  }
  const success = readString(scope, ["success"]);
  const facts: RawFact[] = [
    toolStep(scope, runId, eventTime, sequence, success === "true" ? "ok" : success === "false" ? "error" : undefined),
  ];
  const exec = bashExec(scope, runId, eventTime, sequence);
  if (exec !== undefined) facts.push(exec);
  return { kind: "facts", facts };
}

function apiRequest(
  scope: AttributeScope,
  config: OtlpMappingConfig,
  runId: string,
  eventTime: string,
  sequence: number | undefined,
): MappingOutcome {
  // The API's request id is the call's identity; without it, the session's event counter is.
  const requestId = readString(scope, ["request_id"]);
  const identity = requestId ?? (sequence === undefined ? undefined : `${runId}/${sequence}`);
  if (identity === undefined)
    return unmappable(
      "NO_STABLE_IDENTITY",
      "request_id",
      "an api_request event with neither request_id nor event.sequence has no stable identity",
    );
  const callId = `claude-code:${identity}`;
  const call: RawFact = {
    ...envelope("model_call", `claude-code:model_call:${identity}`, eventTime, "DIRECT_HOST", scope),
    call_id: callId,
    run_id: runId,
    ...callMeasures(scope, config),
    ...dropUndefined({ span_duration_ms: readNonNegative(scope, ["duration_ms"]) }),
  };
  const cents = costCents(scope);
  if (cents === undefined) return { kind: "facts", facts: [call] };
  const { currency, source, costBasis, attribution, estimated } = config.claudeCode.cost;
  const cost: RawFact = {
    // The amount is the client's own list-price estimate: its provenance says so.
    ...envelope("cost", `claude-code:cost:${identity}`, eventTime, estimated ? "ESTIMATED" : "DIRECT_HOST", scope),
    cost_id: `claude-code:cost:${identity}`,
    call_id: callId,
    amount_minor: cents,
    currency,
    source,
    cost_basis: costBasis,
    attribution,
    estimated,
  };
  return { kind: "facts", facts: [call, cost] };
}

/** USD in cents (the currency's minor unit), rounded half up from the exact micro-dollars when exported. */
function costCents(scope: AttributeScope): number | undefined {
  const micros = readCount(scope, ["cost_usd_micros"]);
  if (micros !== undefined) return Math.floor((micros + 5_000) / 10_000);
  const usd = readNonNegative(scope, ["cost_usd"]);
  return usd === undefined ? undefined : Math.floor((Math.round(usd * 1e6) + 5_000) / 10_000);
}

function toolStep(
  scope: AttributeScope,
  runId: string,
  eventTime: string,
  seq: number,
  status: "ok" | "error" | undefined,
): RawFact {
  const input = readString(scope, ["tool_input"]) ?? readString(scope, ["tool_parameters"]);
  return {
    ...envelope("agent_step", `claude-code:agent_step:${runId}:${seq}`, eventTime, "DIRECT_HOST", scope),
    run_id: runId,
    seq,
    kind: "tool_call",
    ...dropUndefined({
      actor: readString(scope, ["agent_id"]),
      tool: readString(scope, ["tool_name"]),
      input: input === undefined ? undefined : argumentsJson(input),
      status,
    }),
  };
}

/** A Bash tool_result with exported parameters (`OTEL_LOG_TOOL_DETAILS=1`) ran that command line. */
function bashExec(scope: AttributeScope, runId: string, eventTime: string, seq: number): RawFact | undefined {
  if (readString(scope, ["tool_name"]) !== "Bash") return undefined;
  const parameters = readString(scope, ["tool_parameters"]);
  if (parameters === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(parameters);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const fields = parsed as Record<string, unknown>;
  const command =
    typeof fields["full_command"] === "string"
      ? fields["full_command"]
      : typeof fields["bash_command"] === "string"
        ? fields["bash_command"]
        : undefined;
  if (command === undefined || command === "") return undefined;
  return {
    ...envelope("sandbox_event", `claude-code:sandbox_event:${runId}:${seq}`, eventTime, "DIRECT_HOST", scope),
    run_id: runId,
    seq,
    kind: "exec",
    command,
  };
}

function eventTimeOf(record: OtlpLogRecord, scope: AttributeScope): string | undefined {
  if (record.timeUnixNano !== undefined) return instantFromNanos(record.timeUnixNano);
  const stamp = readString(scope, ["event.timestamp"]);
  if (stamp !== undefined) {
    const parsed = Date.parse(stamp);
    if (!Number.isNaN(parsed)) return new Date(parsed).toISOString();
  }
  return record.observedTimeUnixNano === undefined ? undefined : instantFromNanos(record.observedTimeUnixNano);
}
