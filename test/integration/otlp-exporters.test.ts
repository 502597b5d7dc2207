import { readFileSync } from "node:fs";
import { join } from "node:path";
import { OTLPLogExporter as JsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import type { LogRecordExporter } from "@opentelemetry/sdk-logs";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shippedCatalog } from "../../src/catalog/metric-definitions.ts";
import { fileSink } from "../../src/ingest/fact-sink.ts";
import { DEFAULT_OTLP_MAPPING } from "../../src/ingest/otlp/mapping-config.ts";
import { startOtlpReceiver, type OtlpReceiver } from "../../src/ingest/otlp/otlp-receiver.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../src/metrics/engine-config.ts";
import { Effect } from "effect";
import { replayFile } from "../../src/stream/transports/embedded/embedded-replay.ts";
import { testDir } from "../support/processes.ts";
import { emitClaudeCodeSession, emitGenAiSpans } from "../support/otel-sdk.ts";

/**
 * The receiver fed by the real OpenTelemetry JS SDK: the OTLP/HTTP exporters (JSON and protobuf,
 * traces and logs) send what the SDK records to an `agentops otlp` receiver writing a facts
 * file; the file must replay with no dead letter.
 */

let receiver: OtlpReceiver;
let dir: string;

beforeAll(async () => {
  dir = testDir("agentops-otlp-");
  receiver = await startOtlpReceiver({
    host: "127.0.0.1",
    port: 0,
    sink: fileSink(join(dir, "facts.ndjson"), join(dir, "dead-letters.ndjson")),
    config: DEFAULT_OTLP_MAPPING,
    logger: pino({ level: "silent" }),
  });
});

afterAll(async () => {
  await receiver.close();
});

function factsFile(): Record<string, unknown>[] {
  return readFileSync(join(dir, "facts.ndjson"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("OTLP/HTTP from the OpenTelemetry JS SDK exporters", () => {
  const tracers: Array<[string, (url: string) => SpanExporter]> = [
    ["json", (url) => new JsonTraceExporter({ url })],
    ["protobuf", (url) => new ProtoTraceExporter({ url })],
  ];
  for (const [wire, exporter] of tracers) {
    it(`GenAI spans over ${wire} become a model_call and a tool step`, async () => {
      const runId = `genai-${wire}`;
      await emitGenAiSpans(exporter(`${receiver.url}/v1/traces`), runId);
      const facts = factsFile().filter((fact) => fact["run_id"] === runId);
      expect(facts.find((fact) => fact["type"] === "model_call")).toMatchObject({
        provider: "openai",
        model: "gpt-5-2026-08-07",
        role: "writer",
        runtime: "openai-agents@0.4",
        input_tokens: 120,
        output_tokens: 30,
        usage_source: "PROVIDER",
        operational: true,
      });
      expect(facts.find((fact) => fact["type"] === "agent_step")).toMatchObject({
        kind: "tool_call",
        tool: "get_weather",
        input: '{"city":"Paris"}',
      });
      expect(facts).toHaveLength(2);
    });
  }

  const loggers: Array<[string, (url: string) => LogRecordExporter]> = [
    ["json", (url) => new JsonLogExporter({ url })],
    ["protobuf", (url) => new ProtoLogExporter({ url })],
  ];
  for (const [wire, exporter] of loggers) {
    it(`a Claude Code session over ${wire} logs becomes calls, costs, tool steps and an exec`, async () => {
      const session = `cc-session-${wire}`;
      await emitClaudeCodeSession(exporter(`${receiver.url}/v1/logs`), session, ["ls -la", "rm -rf /"]);
      const facts = factsFile().filter(
        (fact) => fact["run_id"] === session || String(fact["call_id"] ?? "").includes(session),
      );
      const types = facts.map((fact) => fact["type"]).sort();
      expect(types).toEqual([
        "agent_step",
        "agent_step",
        "cost",
        "cost",
        "model_call",
        "model_call",
        "sandbox_event",
        "sandbox_event",
      ]);
      expect(facts.find((fact) => fact["type"] === "sandbox_event" && fact["command"] === "rm -rf /")).toBeDefined();
      expect(facts.find((fact) => fact["type"] === "cost")).toMatchObject({
        currency: "USD",
        source: "HOST",
        estimated: true,
      });
    });
  }

  it("what the exporters sent replays with no dead letter", async () => {
    const outcome = await Effect.runPromise(
      replayFile(
        { input: join(dir, "facts.ndjson") },
        { engine: DEFAULT_ENGINE_CONFIG, tripwires: {} },
        shippedCatalog(),
      ),
    );
    expect([...outcome.sinks.deadLetterLines()]).toEqual([]);
    expect(outcome.counts.records).toBeGreaterThanOrEqual(20);
  });

  it("an unmappable record is rejected in the partial success and dead-lettered; a malformed body is a 400", async () => {
    const body = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "claude-code" } }] },
          scopeLogs: [
            {
              logRecords: [
                {
                  timeUnixNano: "1780000000000000000",
                  body: { stringValue: "claude_code.tool_result" },
                  attributes: [{ key: "tool_name", value: { stringValue: "Bash" } }],
                },
              ],
            },
          ],
        },
      ],
    };
    const answer = await fetch(`${receiver.url}/v1/logs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({
      partialSuccess: { rejectedLogRecords: "1", errorMessage: "1 × NO_RUN_ID (session.id)" },
    });
    const letters = readFileSync(join(dir, "dead-letters.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(letters.at(-1)).toMatchObject({
      reason: "UNMAPPABLE_TELEMETRY",
      field: "session.id",
      source: { topic: "otlp/v1/logs", partition: 0 },
    });

    const malformed = await fetch(`${receiver.url}/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/x-protobuf" },
      body: Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0x0f]),
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { message: string }).message).toMatch(/not an OTLP traces protobuf request/);
    const wrongType = await fetch(`${receiver.url}/v1/logs`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hello",
    });
    expect(wrongType.status).toBe(415);
    // The receiver is still serving.
    expect(
      (
        await fetch(`${receiver.url}/v1/logs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        })
      ).status,
    ).toBe(200);
  });
});
