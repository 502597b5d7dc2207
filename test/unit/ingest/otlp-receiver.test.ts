import { mkdtempSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { fileSink } from "../../../src/ingest/fact-sink.ts";
import { DEFAULT_OTLP_MAPPING } from "../../../src/ingest/otlp/mapping-config.ts";
import { MAX_VALUE_DEPTH } from "../../../src/ingest/otlp/otlp-decode.ts";
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type OtlpReceiverOptions,
} from "../../../src/ingest/otlp/otlp-receiver.ts";
import { emitGenAiSpans } from "../../support/otel-sdk.ts";

/** The receiver as a real listening server under hostile clients: every bound is hit, not only the happy path. */

const started: OtlpReceiver[] = [];
afterEach(async () => {
  for (const receiver of started.splice(0)) await receiver.close();
});

interface Started {
  receiver: OtlpReceiver;
  facts: () => Record<string, unknown>[];
  deadLetters: () => Record<string, unknown>[];
  logs: () => Record<string, unknown>[];
}

async function start(options: Partial<OtlpReceiverOptions> = {}): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), "agentops-otlp-receiver-"));
  const lines: string[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => lines.push(line) });
  const receiver = await startOtlpReceiver({
    host: "127.0.0.1",
    port: 0,
    sink: fileSink(join(dir, "facts.ndjson"), join(dir, "dlq.ndjson")),
    config: DEFAULT_OTLP_MAPPING,
    logger,
    ...options,
  });
  started.push(receiver);
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name), "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    } catch {
      return [];
    }
  };
  return {
    receiver,
    facts: () => read("facts.ndjson"),
    deadLetters: () => read("dlq.ndjson"),
    logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const attribute = (key: string, value: unknown) => ({ key, value });
const chatSpan = (index: number, model: string, extra: Record<string, unknown> = {}) => ({
  traceId: "0af7651916cd43dd8448eb211c80319c",
  spanId: `b7ad6b71692033${index.toString(16).padStart(2, "0")}`,
  name: "chat",
  startTimeUnixNano: String(1_780_000_000_000_000_000n + BigInt(index) * 1_000_000n),
  attributes: [
    attribute("gen_ai.operation.name", { stringValue: "chat" }),
    attribute("gen_ai.request.model", { stringValue: model }),
  ],
  ...extra,
});
const traces = (spans: unknown[]) => JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] });

function post(receiver: OtlpReceiver, body: string | Buffer, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${receiver.url}/v1/traces`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
    signal: AbortSignal.timeout(10_000),
  });
}

/**
 * Sends the request head and `first` body bytes by hand, then whatever `then` does with the
 * socket; resolves with all it read.
 */
function rawRequest(
  receiver: OtlpReceiver,
  contentLength: number,
  first: Buffer,
  then: (send: (bytes: Buffer) => void, destroy: () => void) => void,
): Promise<string> {
  const { hostname, port } = new URL(receiver.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString("latin1")));
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(answer));
    socket.write(
      `POST /v1/traces HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\n` +
        `content-length: ${contentLength}\r\n\r\n`,
    );
    socket.write(first);
    then(
      (bytes) => socket.write(bytes),
      () => socket.destroy(),
    );
  });
}

describe("the receiver never stalls", () => {
  it("a slow upload gets 408 at its bound; neither it nor a client gone mid-body holds up anyone", async () => {
    const { receiver } = await start({ limits: { requestTimeoutMs: 1_500 } });
    // 100 bytes every 100 ms of a 1 MB body: it cannot finish within 1.5 s.
    let trickle: NodeJS.Timeout | undefined;
    const slow = rawRequest(receiver, 1_000_000, Buffer.alloc(100, 32), (send) => {
      trickle = setInterval(() => send(Buffer.alloc(100, 32)), 100);
    });
    // A client that sends half its body and goes away while the slow one is still uploading.
    const vanished = rawRequest(receiver, 1_000, Buffer.alloc(500, 32), (_send, destroy) => setTimeout(destroy, 100));
    await vanished;
    const began = Date.now();
    const meanwhile = await post(receiver, traces([chatSpan(1, "gpt-5")]));
    expect(meanwhile.status).toBe(200);
    expect(Date.now() - began).toBeLessThan(1_000);
    expect((await fetch(`${receiver.url}/v1/traces`, { signal: AbortSignal.timeout(1_000) })).status).toBe(405);
    const answer = await slow;
    clearInterval(trickle);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain("body not received within 1500 ms");
    expect(receiver.totals.refused.timedOut).toBe(1);
    // And after both, the receiver still answers.
    expect((await post(receiver, traces([chatSpan(2, "gpt-5")]))).status).toBe(200);
  });
});

describe("the body bound applies after decompression", () => {
  it("a gzip bomb is stopped at the bound with 413, quickly, with the default 32 MiB bound", async () => {
    const { receiver, facts } = await start();
    // 64 MiB of zeros, 64 KiB on the wire: as protobuf it would decode to nothing, as a 200.
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(100_000);
    const began = Date.now();
    const answer = await post(receiver, bomb, { "content-type": "application/x-protobuf", "content-encoding": "gzip" });
    expect(answer.status).toBe(413);
    expect(((await answer.json()) as { message: string }).message).toContain(
      `${32 * 1024 * 1024} bytes (after decompression)`,
    );
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(receiver.totals.refused.tooLarge).toBe(1);
    expect(facts()).toEqual([]);
  });

  it("a body of exactly the bound is read, one byte more is 413, gzipped or not", async () => {
    const body = traces([chatSpan(1, "gpt-5")]);
    const size = Buffer.byteLength(body);
    const { receiver: exact } = await start({ limits: { maxBodyBytes: size } });
    expect((await post(exact, body)).status).toBe(200);
    expect((await post(exact, gzipSync(body), { "content-encoding": "gzip" })).status).toBe(200);
    const { receiver: under } = await start({ limits: { maxBodyBytes: size - 1 } });
    expect((await post(under, body)).status).toBe(413);
    expect((await post(under, gzipSync(body), { "content-encoding": "gzip" })).status).toBe(413);
  });

  it("a body that is not gzip is a 400 naming it", async () => {
    const { receiver } = await start();
    const answer = await post(receiver, "plain text", { "content-encoding": "gzip" });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { message: string }).message).toMatch(/^not a gzip body/);
  });
});

describe("one bad record is dead-lettered, the others accepted", () => {
  it("a lone surrogate in a mapped attribute rejects that span only (partial success), dead-lettered", async () => {
    const { receiver, facts, deadLetters } = await start();
    const spans = [...Array.from({ length: 10 }, (_, i) => chatSpan(i, "gpt-5")), chatSpan(10, "gpt\ud800-5")];
    const answer = await post(receiver, traces(spans));
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({
      partialSuccess: { rejectedSpans: "1", errorMessage: "1 × INVALID_FACT (model)" },
    });
    expect(facts()).toHaveLength(10);
    expect(deadLetters().map(({ reason, field }) => ({ reason, field }))).toEqual([
      { reason: "UNMAPPABLE_TELEMETRY", field: "model" },
    ]);
  });

  it("a span without a spanId is dead-lettered naming spanId, one without a traceId naming traceId", async () => {
    const { receiver, deadLetters } = await start();
    const answer = await post(
      receiver,
      traces([chatSpan(1, "gpt-5", { spanId: "" }), chatSpan(2, "gpt-5", { traceId: undefined })]),
    );
    expect(await answer.json()).toMatchObject({
      partialSuccess: {
        rejectedSpans: "2",
        errorMessage: "1 × NO_STABLE_IDENTITY (spanId); 1 × NO_STABLE_IDENTITY (traceId)",
      },
    });
    expect(deadLetters().map(({ field }) => field)).toEqual(["spanId", "traceId"]);
  });
});

describe("nesting is bounded", () => {
  const nested = (depth: number): unknown => {
    let value: unknown = { stringValue: "x" };
    for (let level = 0; level < depth; level += 1) value = { arrayValue: { values: [value] } };
    return value;
  };
  const withValue = (value: unknown) =>
    traces([{ ...chatSpan(1, "gpt-5"), attributes: [...chatSpan(1, "gpt-5").attributes, attribute("deep", value)] }]);

  it(`values nested ${MAX_VALUE_DEPTH} levels are read, one more is a 400 naming the bound`, async () => {
    const { receiver } = await start();
    expect((await post(receiver, withValue(nested(MAX_VALUE_DEPTH)))).status).toBe(200);
    const answer = await post(receiver, withValue(nested(MAX_VALUE_DEPTH + 1)));
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { message: string }).message).toContain(
      `nested deeper than ${MAX_VALUE_DEPTH} levels`,
    );
  });

  it("a protobuf nested far past the stack is a 400 naming the bound, not a 500", async () => {
    const { receiver } = await start();
    const field = (tag: number, payload: Buffer) =>
      Buffer.concat([Buffer.from([tag]), varint(payload.length), payload]);
    // AnyValue{array_value{values: AnyValue{…}}} 20,000 levels deep, built as its prefixes
    // (outermost first) and the innermost value.
    const innermost = field(0x0a, Buffer.from("x")); // AnyValue.string_value
    const prefixes: Buffer[] = [];
    let length = innermost.length;
    for (let level = 0; level < 20_000; level += 1) {
      const values = Buffer.concat([Buffer.from([0x0a]), varint(length)]); // ArrayValue.values
      length += values.length;
      const array = Buffer.concat([Buffer.from([0x2a]), varint(length)]); // AnyValue.array_value
      length += array.length;
      prefixes.push(values, array);
    }
    const value = Buffer.concat([...prefixes.reverse(), innermost]);
    const span = field(0x4a, Buffer.concat([field(0x0a, Buffer.from("k")), field(0x12, value)])); // Span.attributes
    const request = field(0x0a, field(0x12, field(0x12, span))); // resource_spans.scope_spans.spans
    const answer = await post(receiver, request, { "content-type": "application/x-protobuf" });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { message: string }).message).toContain(
      `nested deeper than ${MAX_VALUE_DEPTH} levels`,
    );
  });
});

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 127) {
    bytes.push((rest & 127) | 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

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
