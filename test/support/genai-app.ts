import { context, SpanKind, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { detectResources, envDetector } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";

/**
 * A GenAI app instrumented with the OpenTelemetry JS SDK and the GenAI semantic conventions, and
 * nothing of agentops: it is configured only by the standard OTEL_* environment variables (the
 * exporter's endpoint, the resource attributes) that docs/ingest.md tells a user to set. Each run is
 * one trace: an `invoke_agent` span with the agent's name and, under it, chat spans with provider,
 * model and token usage, as agent SDKs record them.
 *
 *   node test/support/genai-app.ts <runs> <calls per run> <agent name> <start ISO time>
 *
 * The agent name is also put on each chat span (`gen_ai.agent.name`), as instrumentations that name
 * the calling agent do; the receiver reads a span and its resource, never its parent span.
 */

export const CALL_MS = 1250;
export const inputTokens = (call: number): number => 100 + 10 * call;
export const outputTokens = (call: number): number => 20 + call;

async function main(args: string[]): Promise<void> {
  const [runs, calls, agentName, start] = [
    Number(args[0]),
    Number(args[1]),
    String(args[2]),
    Date.parse(String(args[3])),
  ];
  const provider = new BasicTracerProvider({
    // What an SDK that configures itself from the environment does (NodeSDK, the Java agent, Python's).
    resource: detectResources({ detectors: [envDetector] }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  const tracer = provider.getTracer("genai-app", "1.0.0");
  let at = start;
  let call = 0;
  for (let run = 0; run < runs; run++) {
    const agent = tracer.startSpan(`invoke_agent ${agentName}`, {
      kind: SpanKind.INTERNAL,
      startTime: at,
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agentName,
        "gen_ai.provider.name": "openai",
      },
    });
    const parent = trace.setSpan(context.active(), agent);
    for (let i = 0; i < calls; i++, call++) {
      const chat = tracer.startSpan(
        "chat gpt-5",
        {
          kind: SpanKind.CLIENT,
          startTime: at,
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-5",
            "gen_ai.agent.name": agentName,
          },
        },
        parent,
      );
      chat.setAttributes({
        "gen_ai.response.model": "gpt-5-2026-08-07",
        "gen_ai.usage.input_tokens": inputTokens(call),
        "gen_ai.usage.output_tokens": outputTokens(call),
      });
      chat.end(at + CALL_MS);
      at += CALL_MS + 50;
    }
    agent.end(at);
    at += 1_000;
  }
  await provider.shutdown();
}

if (import.meta.url === `file://${process.argv[1] ?? ""}`) await main(process.argv.slice(2));
