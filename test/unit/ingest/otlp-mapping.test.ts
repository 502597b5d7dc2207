import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import { DEFAULT_OTLP_MAPPING } from "../../../src/ingest/otlp/mapping-config.ts";
import { mapOtlpRecords } from "../../../src/ingest/otlp/map-request.ts";
import { decodeOtlpRequest, encodeOtlpResponse, MalformedOtlpError } from "../../../src/ingest/otlp/otlp-decode.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { Effect } from "effect";
import { replayFile } from "../../../src/stream/transports/embedded/embedded-replay.ts";

const FIXTURE = new URL("../../fixtures/otlp/claude-code-session.logs.json", import.meta.url);
const SESSION = "5f1c9a2e-3b7d-4e8a-9c21-7d0e6b4a1f35";

function mapJson(signal: "traces" | "logs" | "metrics", body: unknown) {
  return mapOtlpRecords(
    decodeOtlpRequest(signal, "json", new TextEncoder().encode(JSON.stringify(body))),
    DEFAULT_OTLP_MAPPING,
  );
}

function factsOf(mapped: ReturnType<typeof mapJson>): Record<string, unknown>[] {
  return mapped.facts.map(({ json }) => JSON.parse(json) as Record<string, unknown>);
}

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
const int = (key: string, value: number) => ({ key, value: { intValue: String(value) } });

describe("Claude Code events (documented shape)", () => {
  const mapped = mapJson("logs", JSON.parse(readFileSync(FIXTURE, "utf8")));
  const facts = factsOf(mapped);

  it("api_request becomes a model_call with the documented fields, and its cost_usd an estimated HOST cost", () => {
    const call = facts.find((fact) => fact["fact_id"] === "claude-code:model_call:req_011CV4xYz");
    expect(call).toEqual({
      contract: "agentops.observation@1.0.0",
      type: "model_call",
      fact_id: "claude-code:model_call:req_011CV4xYz",
      event_time: "2026-05-28T20:26:41.500Z",
      provenance: { basis: "DIRECT_HOST", source: "otlp:claude-code" },
      call_id: "claude-code:req_011CV4xYz",
      run_id: SESSION,
      operational: true,
      model: "claude-sonnet-5",
      runtime: "claude-code@2.1.240",
      span_duration_ms: 1432,
      input_tokens: 1804,
      output_tokens: 213,
      usage_source: "PROVIDER",
    });
    // No provider or role attribute in the export: absent, never guessed from the model name.
    expect(call).not.toHaveProperty("provider");
    expect(call).not.toHaveProperty("role");
    const cost = facts.find((fact) => fact["type"] === "cost" && fact["call_id"] === "claude-code:req_011CV4xYz");
    // cost_usd_micros 12345 = $0.012345 → 1 cent (half up).
    expect(cost).toMatchObject({
      amount_minor: 1,
      currency: "USD",
      source: "HOST",
      estimated: true,
      attribution: "PROJECT",
      provenance: { basis: "ESTIMATED" },
    });
    // Without cost_usd_micros, cost_usd "0.0049" → 0 cents: an estimate that rounds to nothing is still reported.
    expect(
      facts.find((fact) => fact["type"] === "cost" && fact["call_id"] === "claude-code:req_011CV4xZa"),
    ).toMatchObject({ amount_minor: 0 });
  });

  it("tool_result becomes an agent_step, and a Bash one with exported parameters a sandbox_event exec", () => {
    const step = facts.find((fact) => fact["fact_id"] === `claude-code:agent_step:${SESSION}:4`);
    expect(step).toMatchObject({
      type: "agent_step",
      run_id: SESSION,
      seq: 4,
      kind: "tool_call",
      tool: "Bash",
      status: "ok",
      input: '{"command":"npm test","description":"Run test suite","timeout":120000}',
    });
    expect(facts.find((fact) => fact["fact_id"] === `claude-code:sandbox_event:${SESSION}:4`)).toMatchObject({
      type: "sandbox_event",
      kind: "exec",
      command: "npm test",
      seq: 4,
    });
    expect(facts.find((fact) => fact["fact_id"] === `claude-code:agent_step:${SESSION}:6`)).toMatchObject({
      tool: "Read",
      status: "error",
    });
  });

  it("a rejected tool_decision is a failed step and ran nothing; an accepted one is left to its tool_result", () => {
    expect(facts.find((fact) => fact["fact_id"] === `claude-code:agent_step:${SESSION}:5`)).toMatchObject({
      tool: "Bash",
      status: "error",
    });
    expect(facts.some((fact) => fact["fact_id"] === `claude-code:sandbox_event:${SESSION}:5`)).toBe(false);
    expect(facts.some((fact) => fact["seq"] === 3)).toBe(false);
    expect(mapped.ignored).toEqual({
      "an accepted tool_decision: its tool_result is the step": 1,
      'Claude Code event "user_prompt" carries no call or step': 1,
    });
    expect(mapped.unmapped).toEqual([]);
  });

  it("the produced facts replay with no dead letters", async () => {
    const dir = mkdtempSync(join(tmpdir(), "otlp-map-"));
    const path = join(dir, "facts.ndjson");
    writeFileSync(path, mapped.facts.map(({ json }) => `${json}\n`).join(""));
    const outcome = await Effect.runPromise(
      replayFile({ input: path }, { engine: DEFAULT_ENGINE_CONFIG, tripwires: {} }, shippedCatalog()),
    );
    expect([...outcome.sinks.deadLetterLines()]).toEqual([]);
    expect(outcome.counts.accepted + outcome.counts.agentEvents).toBe(mapped.facts.length);
  });

  it("an event without session.id or event.sequence is unmappable, with the reason and the field", () => {
    const base = { body: { stringValue: "claude_code.tool_result" }, timeUnixNano: "1780000000000000000" };
    const result = mapJson("logs", {
      resourceLogs: [
        {
          resource: { attributes: [str("service.name", "claude-code")] },
          scopeLogs: [
            {
              logRecords: [
                { ...base, attributes: [int("event.sequence", 1), str("tool_name", "Bash")] },
                { ...base, attributes: [str("session.id", "s1"), str("tool_name", "Bash")] },
              ],
            },
          ],
        },
      ],
    });
    expect(result.facts).toEqual([]);
    expect(result.unmapped.map(({ index, reason, field }) => ({ index, reason, field }))).toEqual([
      { index: 0, reason: "NO_RUN_ID", field: "session.id" },
      { index: 1, reason: "NO_SEQUENCE", field: "event.sequence" },
    ]);
  });
});

describe("OTel GenAI spans", () => {
  const span = (attributes: unknown[], extra: Record<string, unknown> = {}) => ({
    resourceSpans: [
      {
        resource: { attributes: [str("service.name", "support-agent")] },
        scopeSpans: [
          {
            scope: { name: "openai-agents" },
            spans: [
              {
                traceId: "0af7651916cd43dd8448eb211c80319c",
                spanId: "b7ad6b7169203331",
                name: "chat gpt-5",
                startTimeUnixNano: "1780000000000000000",
                endTimeUnixNano: "1780000001250500000",
                attributes,
                ...extra,
              },
            ],
          },
        ],
      },
    ],
  });

  it("a chat span becomes a model_call: response model over request model, provider, tokens, duration, ids", () => {
    const facts = factsOf(
      mapJson(
        "traces",
        span([
          str("gen_ai.operation.name", "chat"),
          str("gen_ai.provider.name", "openai"),
          str("gen_ai.request.model", "gpt-5"),
          str("gen_ai.response.model", "gpt-5-2026-08-07"),
          int("gen_ai.usage.input_tokens", 120),
          int("gen_ai.usage.output_tokens", 30),
          str("agentops.role", "writer"),
          str("agentops.runtime", "openai-agents@0.4"),
        ]),
      ),
    );
    expect(facts).toEqual([
      {
        contract: "agentops.observation@1.0.0",
        type: "model_call",
        fact_id: "otlp:model_call:0af7651916cd43dd8448eb211c80319c:b7ad6b7169203331",
        event_time: "2026-05-28T20:26:40.000Z",
        provenance: { basis: "DIRECT_HOST", source: "otlp:support-agent" },
        call_id: "otlp:0af7651916cd43dd8448eb211c80319c:b7ad6b7169203331",
        run_id: "0af7651916cd43dd8448eb211c80319c",
        operational: true,
        provider: "openai",
        model: "gpt-5-2026-08-07",
        role: "writer",
        runtime: "openai-agents@0.4",
        span_duration_ms: 1250.5,
        input_tokens: 120,
        output_tokens: 30,
        usage_source: "PROVIDER",
      },
    ]);
  });

  it("the older gen_ai.system and OpenLLMetry token names are read; absent tokens leave usage unclassified", () => {
    const [withTokens] = factsOf(
      mapJson(
        "traces",
        span([
          str("llm.request.type", "completion"),
          str("gen_ai.system", "anthropic"),
          str("gen_ai.request.model", "claude-sonnet-5"),
          int("gen_ai.usage.prompt_tokens", 7),
          int("gen_ai.usage.completion_tokens", 9),
        ]),
      ),
    );
    expect(withTokens).toMatchObject({
      provider: "anthropic",
      model: "claude-sonnet-5",
      input_tokens: 7,
      output_tokens: 9,
    });
    const [noTokens] = factsOf(mapJson("traces", span([str("gen_ai.operation.name", "chat")])));
    expect(noTokens).not.toHaveProperty("usage_source");
    expect(noTokens).not.toHaveProperty("input_tokens");
  });

  it("gen_ai.agent.name is a role only when the mapping names it; the default never guesses one", () => {
    const body = span([str("gen_ai.operation.name", "chat"), str("gen_ai.agent.name", "triage")]);
    const decoded = decodeOtlpRequest("traces", "json", new TextEncoder().encode(JSON.stringify(body)));
    expect(factsOf(mapJson("traces", body))[0]).not.toHaveProperty("role");
    const withAgentName = { ...DEFAULT_OTLP_MAPPING, role: ["agentops.role", "gen_ai.agent.name"] };
    const configured = mapOtlpRecords(decoded, withAgentName);
    expect(factsOf(configured)[0]).toMatchObject({ role: "triage" });
  });

  it("an execute_tool span becomes a tool-call agent_step with canonical arguments; other spans are ignored", () => {
    const facts = factsOf(
      mapJson(
        "traces",
        span(
          [
            str("gen_ai.operation.name", "execute_tool"),
            str("gen_ai.tool.name", "get_weather"),
            str("gen_ai.tool.call.arguments", '{"city": "Paris", "a": 1}'),
            str("session.id", "conv-1"),
          ],
          { status: { code: 2 } },
        ),
      ),
    );
    expect(facts).toMatchObject([
      {
        type: "agent_step",
        run_id: "conv-1",
        seq: 1780000000000000,
        kind: "tool_call",
        tool: "get_weather",
        input: '{"a":1,"city":"Paris"}',
        status: "error",
      },
    ]);
    const http = mapJson("traces", span([str("http.request.method", "GET")]));
    expect(http.facts).toEqual([]);
    expect(http.ignored).toEqual({ "span without a GenAI operation": 1 });
  });

  it("metric points are accepted and counted, never turned into facts", () => {
    const result = mapJson("metrics", {
      resourceMetrics: [
        {
          scopeMetrics: [
            {
              metrics: [
                {
                  name: "claude_code.cost.usage",
                  sum: { dataPoints: [{ asDouble: 0.01, attributes: [str("model", "claude-sonnet-5")] }] },
                },
              ],
            },
          ],
        },
      ],
    });
    expect(result.facts).toEqual([]);
    expect(result.records).toBe(1);
  });
});

describe("decoding", () => {
  it("a malformed body is a MalformedOtlpError naming the place, never a crash", () => {
    const decode = (text: string) => () => decodeOtlpRequest("logs", "json", new TextEncoder().encode(text));
    expect(decode("{not json")).toThrow(MalformedOtlpError);
    expect(decode('{"resourceLogs": 3}')).toThrow("resourceLogs: expected an array");
    expect(decode('{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"timeUnixNano": "soon"}]}]}]}')).toThrow(
      "resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano",
    );
    expect(() => decodeOtlpRequest("traces", "protobuf", Uint8Array.from([0x0a, 0xff, 0xff, 0xff]))).toThrow(
      MalformedOtlpError,
    );
  });

  it("the partial-success answer round-trips through the generated protobuf and JSON forms", () => {
    expect(
      JSON.parse(new TextDecoder().decode(encodeOtlpResponse("logs", "json", 2, "2 × NO_RUN_ID (session.id)"))),
    ).toEqual({ partialSuccess: { rejectedLogRecords: "2", errorMessage: "2 × NO_RUN_ID (session.id)" } });
    expect(new TextDecoder().decode(encodeOtlpResponse("traces", "json", 0, ""))).toBe("{}");
    expect(encodeOtlpResponse("traces", "protobuf", 1, "x").length).toBeGreaterThan(0);
  });
});
