import { request } from "node:http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { describe, expect, it } from "vitest";
import type { OtlpReceiver } from "../../../src/ingest/otlp/otlp-receiver.ts";
import { emitGenAiSpans } from "../../support/otel-sdk.ts";
import { attribute, chatSpan, post, start, traces } from "./otlp-receiver-support.ts";

/** Who the receiver answers (Host, bearer token) and what it says about model calls it cannot attribute. */

/** A POST naming `host` in its Host header, whatever address it is sent to. */
function postAs(
  receiver: OtlpReceiver,
  host: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<number> {
  const { hostname, port } = new URL(receiver.url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: hostname,
        port,
        path: "/v1/traces",
        method: "POST",
        headers: { host, "content-type": "application/json", ...headers },
      },
      (incoming) => {
        incoming.resume();
        incoming.on("end", () => resolve(incoming.statusCode ?? 0));
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

describe("the Host header (DNS rebinding)", () => {
  it("without a token, only the bound names and --allowed-hosts are answered (421 otherwise)", async () => {
    const { receiver, facts } = await start({ allowedHosts: ["otlp.example.org"] });
    const body = traces([chatSpan(1, "gpt-5")]);
    expect(await postAs(receiver, "evil.example:4318", body)).toBe(421);
    expect(facts()).toEqual([]);
    expect(receiver.totals.refused.foreignHost).toBe(1);
    for (const host of ["localhost:4318", "127.0.0.1", "otlp.example.org:4318"])
      expect(await postAs(receiver, host, body), host).toBe(200);
  });

  it("with a token, the token decides whatever the Host", async () => {
    const token = "s3cret-token-0123456789abcdef";
    const { receiver } = await start({ authToken: token });
    const body = traces([chatSpan(1, "gpt-5")]);
    expect(await postAs(receiver, "collector.example.org", body)).toBe(401);
    expect(await postAs(receiver, "collector.example.org", body, { authorization: `Bearer ${token}` })).toBe(200);
  });
});

describe("model calls that miss an attribution coordinate", () => {
  it("are counted by coordinate with the attribute to set, warned once each, and served at /metrics", async () => {
    const { receiver, facts, logs } = await start();
    const provider = attribute("gen_ai.provider.name", { stringValue: "openai" });
    const spans = [0, 1, 2].map((i) => ({
      ...chatSpan(i, "gpt-5"),
      attributes: [...chatSpan(i, "gpt-5").attributes, provider],
    }));
    expect((await post(receiver, traces(spans))).status).toBe(200);
    expect(
      (
        await post(
          receiver,
          JSON.stringify({
            resourceSpans: [
              {
                resource: { attributes: [attribute("agentops.role", { stringValue: "writer" })] },
                scopeSpans: [{ spans: [chatSpan(3, "gpt-5")] }],
              },
            ],
          }),
        )
      ).status,
    ).toBe(200);
    expect(facts()).toHaveLength(4);
    expect(receiver.totals.callsMissing).toEqual({ provider: 1, model: 0, role: 3, runtime: 4 });
    const warnings = logs()
      .filter((line) => line["level"] === 40)
      .map((line) => `${String(line["coordinate"])}: ${String(line["attribute"])}`);
    expect(warnings).toEqual([
      "role: agentops.role",
      "runtime: agentops.runtime (or service.name@service.version for claude-code, claude-code-desktop)",
      "provider: gen_ai.provider.name or gen_ai.system or agentops.provider",
    ]);
    const metrics = await (await fetch(`${receiver.url}/metrics`)).text();
    expect(metrics).toContain(
      'agentops_otlp_calls_missing_coordinate_total{attribute="agentops.role",coordinate="role"} 3',
    );
    expect(metrics).toContain('coordinate="runtime"} 4');
  });
});

describe("bearer-token authentication", () => {
  const token = "s3cret-token-0123456789abcdef";

  it("refuses a request without the token or with another (401), takes the token in any scheme case", async () => {
    const { receiver, facts } = await start({ authToken: token });
    const body = traces([chatSpan(1, "gpt-5")]);
    const missing = await post(receiver, body);
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await post(receiver, body, { authorization: `Bearer ${token}x` })).status).toBe(401);
    expect((await post(receiver, body, { authorization: token })).status).toBe(401);
    expect((await post(receiver, body, { authorization: `Basic ${token}` })).status).toBe(401);
    expect(facts()).toEqual([]);
    expect((await post(receiver, body, { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await post(receiver, body, { authorization: `bearer ${token}` })).status).toBe(200);
    expect(receiver.totals.refused.unauthorized).toBe(4);
  });

  it("accepts what an SDK exporter sends from OTEL_EXPORTER_OTLP_HEADERS", async () => {
    const { receiver, facts } = await start({ authToken: token });
    process.env["OTEL_EXPORTER_OTLP_HEADERS"] = `Authorization=Bearer%20${token}`;
    try {
      await emitGenAiSpans(new OTLPTraceExporter({ url: `${receiver.url}/v1/traces` }), "auth-run");
    } finally {
      delete process.env["OTEL_EXPORTER_OTLP_HEADERS"];
    }
    expect(receiver.totals.refused.unauthorized).toBe(0);
    expect(facts().length).toBeGreaterThan(0);
  });

  it("warns at start when bound beyond loopback without a token, and only then", async () => {
    const open = await start({ host: "0.0.0.0" });
    expect(
      open
        .logs()
        .filter((line) => line["level"] === 40)
        .map((line) => line["msg"]),
    ).toEqual([expect.stringContaining("without a token")]);
    const guarded = await start({ host: "0.0.0.0", authToken: token });
    const local = await start({ host: "127.0.0.1" });
    expect([...guarded.logs(), ...local.logs()].filter((line) => line["level"] === 40)).toEqual([]);
    expect(JSON.stringify([...open.logs(), ...guarded.logs()])).not.toContain(token);
  });
});
