import { mkdtempSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach } from "vitest";
import { fileSink } from "../../../src/ingest/fact-sink.ts";
import { DEFAULT_OTLP_MAPPING } from "../../../src/ingest/otlp/mapping-config.ts";
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type OtlpReceiverOptions,
} from "../../../src/ingest/otlp/otlp-receiver.ts";

/** A receiver as a real listening server writing to files, and the requests the receiver tests send it. */

// Registered in every test file that imports this module: each receiver started is closed after its test.
const started: OtlpReceiver[] = [];
afterEach(async () => {
  for (const receiver of started.splice(0)) await receiver.close();
});

export interface Started {
  receiver: OtlpReceiver;
  facts: () => Record<string, unknown>[];
  deadLetters: () => Record<string, unknown>[];
  logs: () => Record<string, unknown>[];
}

export async function start(options: Partial<OtlpReceiverOptions> = {}): Promise<Started> {
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

export const attribute = (key: string, value: unknown) => ({ key, value });
export const chatSpan = (index: number, model: string, extra: Record<string, unknown> = {}) => ({
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
export const traces = (spans: unknown[]) => JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] });

export function post(
  receiver: OtlpReceiver,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<Response> {
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
export function rawRequest(
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
