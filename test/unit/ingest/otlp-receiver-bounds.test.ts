import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { MAX_VALUE_DEPTH } from "../../../src/ingest/otlp/otlp-decode.ts";
import { attribute, chatSpan, post, rawRequest, start, traces } from "./otlp-receiver-support.ts";

/**
 * The receiver as a real listening server under hostile clients: slow, vanished, too many, too
 * large, too deep, or one bad record among good ones. Every bound is hit, not only the happy path.
 */

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

describe("requests at once are bounded", () => {
  it("one request more than the bound is a 503 to retry; once one is answered the next is taken", async () => {
    const { receiver } = await start({ limits: { maxConcurrentRequests: 1, requestTimeoutMs: 1_000 } });
    // Holds the only place: a body that never comes, answered 408 at 1 s.
    const held = rawRequest(receiver, 1_000, Buffer.alloc(10, 32), () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await post(receiver, traces([chatSpan(1, "gpt-5")]));
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(receiver.totals.refused.busy).toBe(1);
    expect(await held).toMatch(/^HTTP\/1\.1 408 /);
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
