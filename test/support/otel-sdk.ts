import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { SeverityNumber } from "@opentelemetry/api-logs";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { LoggerProvider, SimpleLogRecordProcessor, type LogRecordExporter } from "@opentelemetry/sdk-logs";
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";

/**
 * Telemetry recorded by the real OpenTelemetry JS SDK and sent by a real OTLP exporter: what an
 * instrumented agent (GenAI semantic conventions) or Claude Code itself would send.
 */

const BASE_MS = Date.parse("2026-11-30T10:00:00.000Z");

/** One agent turn by an OpenAI-Agents-style app: a chat span and an execute_tool span. */
export async function emitGenAiSpans(exporter: SpanExporter, runId: string): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      "service.name": "support-agent",
      "agentops.runtime": "openai-agents@0.4",
      "agentops.role": "writer",
    }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("openai-agents");
  const chat = tracer.startSpan("chat gpt-5", {
    kind: SpanKind.CLIENT,
    startTime: BASE_MS,
    attributes: {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-5",
      "gen_ai.conversation.id": runId,
    },
  });
  chat.setAttributes({
    "gen_ai.response.model": "gpt-5-2026-08-07",
    "gen_ai.usage.input_tokens": 120,
    "gen_ai.usage.output_tokens": 30,
  });
  chat.end(BASE_MS + 1250);
  const tool = tracer.startSpan("execute_tool get_weather", {
    kind: SpanKind.INTERNAL,
    startTime: BASE_MS + 1300,
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "get_weather",
      "gen_ai.tool.call.arguments": '{"city":"Paris"}',
      "gen_ai.conversation.id": runId,
    },
  });
  tool.setStatus({ code: SpanStatusCode.OK });
  tool.end(BASE_MS + 1400);
  await provider.forceFlush();
  await provider.shutdown();
}

/**
 * A Claude Code session as its telemetry documents it (CLAUDE_CODE_ENABLE_TELEMETRY=1,
 * OTEL_LOG_TOOL_DETAILS=1, OTEL_RESOURCE_ATTRIBUTES=agentops.provider=anthropic,agentops.role=implementer):
 * per command an api_request event and the Bash tool_result that ran it. Values are strings, as
 * Claude Code exports them.
 */
export async function emitClaudeCodeSession(
  exporter: LogRecordExporter,
  sessionId: string,
  commands: readonly string[],
  startMs = BASE_MS,
): Promise<void> {
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({
      "service.name": "claude-code",
      "service.version": "2.1.240",
      "os.type": "linux",
      "agentops.provider": "anthropic",
      "agentops.role": "implementer",
    }),
    processors: [new SimpleLogRecordProcessor({ exporter })],
  });
  const logger = provider.getLogger("com.anthropic.claude_code", "2.1.240");
  let sequence = 0;
  const emit = (name: string, atMs: number, attributes: Record<string, string | number>) => {
    sequence += 1;
    logger.emit({
      timestamp: atMs,
      severityNumber: SeverityNumber.INFO,
      body: `claude_code.${name}`,
      attributes: {
        "session.id": sessionId,
        "event.name": name,
        "event.timestamp": new Date(atMs).toISOString(),
        "event.sequence": sequence,
        ...attributes,
      },
    });
  };
  commands.forEach((command, i) => {
    const at = startMs + i * 10_000;
    emit("api_request", at, {
      model: "claude-sonnet-5",
      cost_usd: "0.0421",
      cost_usd_micros: 42_100,
      duration_ms: "2100",
      input_tokens: "5200",
      output_tokens: "310",
      request_id: `req_${sessionId}_${i}`,
      query_source: "repl_main_thread",
    });
    emit("tool_result", at + 3_000, {
      tool_name: "Bash",
      tool_use_id: `toolu_${sessionId}_${i}`,
      success: "true",
      duration_ms: "40",
      decision_type: "accept",
      decision_source: "config",
      tool_parameters: JSON.stringify({
        bash_command: command.split(" ")[0],
        full_command: command,
        timeout: 120000,
        description: "run",
      }),
    });
  });
  await provider.forceFlush();
  await provider.shutdown();
}
