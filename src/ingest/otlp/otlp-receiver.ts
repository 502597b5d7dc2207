import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import type { Logger } from "pino";
import type { DeadLetterRecord } from "../../contract/dead-letter.ts";
import type { FactSink } from "../fact-sink.ts";
import type { OtlpMappingConfig } from "./mapping-config.ts";
import { mapOtlpRecords, type MappedRequest } from "./map-request.ts";
import { decodeOtlpRequest, encodeOtlpResponse, MalformedOtlpError, type WireFormat } from "./otlp-decode.ts";
import type { OtlpSignal } from "./otlp-records.ts";

/**
 * The OTLP/HTTP receiver: POST /v1/traces, /v1/logs, /v1/metrics in protobuf or JSON (gzip or
 * not). It answers with the OTLP export response; records it cannot map are counted in its
 * partial success, named by reason in its error message, and written as dead letters. A body it
 * cannot read is a 400 with a message; a sink that cannot take the facts is a 503, which OTLP
 * exporters retry (ids are deterministic, so a retried request is a redelivery).
 */
export interface OtlpReceiverOptions {
  readonly host: string;
  readonly port: number;
  readonly sink: FactSink;
  readonly config: OtlpMappingConfig;
  readonly logger: Logger;
  readonly maxBodyBytes?: number;
}

export interface ReceiverTotals {
  requests: number;
  records: number;
  facts: number;
  unmapped: number;
  ignored: number;
  malformed: number;
}

export interface OtlpReceiver {
  readonly server: Server;
  readonly url: string;
  readonly totals: ReceiverTotals;
  close(): Promise<void>;
}

const PATHS: Record<string, OtlpSignal> = { "/v1/traces": "traces", "/v1/logs": "logs", "/v1/metrics": "metrics" };

export async function startOtlpReceiver(options: OtlpReceiverOptions): Promise<OtlpReceiver> {
  const totals: ReceiverTotals = { requests: 0, records: 0, facts: 0, unmapped: 0, ignored: 0, malformed: 0 };
  const maxBodyBytes = options.maxBodyBytes ?? 32 * 1024 * 1024;
  // Requests are mapped and written one at a time, so facts reach the sink in arrival order.
  let queue: Promise<unknown> = Promise.resolve();
  const server = createServer((request, response) => {
    const handled = queue.then(() => handle(request, response, options, totals, maxBodyBytes));
    queue = handled.catch(() => undefined);
    handled.catch((error: unknown) => {
      options.logger.error({ err: error instanceof Error ? error.message : String(error) }, "otlp request failed");
      if (!response.headersSent) respondStatus(response, 500, "internal error; the request was not processed");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    server,
    url: `http://${address.address.includes(":") ? `[${address.address}]` : address.address}:${address.port}`,
    totals,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function handle(request: IncomingMessage, response: ServerResponse, options: OtlpReceiverOptions, totals: ReceiverTotals, maxBodyBytes: number): Promise<void> {
  const path = (request.url ?? "").split("?")[0] ?? "";
  const signal = PATHS[path];
  if (signal === undefined) return respondStatus(response, 404, `unknown path ${path}; POST to /v1/traces, /v1/logs or /v1/metrics`);
  if (request.method !== "POST") return respondStatus(response, 405, "OTLP/HTTP takes POST");
  const contentType = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  const format: WireFormat | undefined = contentType === "application/x-protobuf" ? "protobuf" : contentType === "application/json" ? "json" : undefined;
  if (format === undefined) return respondStatus(response, 415, `content type "${contentType ?? ""}" is not OTLP; send application/x-protobuf or application/json`);
  const encoding = (request.headers["content-encoding"] ?? "identity").toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip") return respondStatus(response, 415, `content encoding "${encoding}" is not supported; send gzip or none`);
  const raw = await readBody(request, maxBodyBytes);
  if (raw === undefined) return respondStatus(response, 413, `body larger than ${maxBodyBytes} bytes`);
  totals.requests += 1;
  let mapped: MappedRequest;
  try {
    const body = encoding === "gzip" ? gunzipSync(raw) : raw;
    mapped = mapOtlpRecords(decodeOtlpRequest(signal, format, body), options.config);
  } catch (error) {
    if (!(error instanceof MalformedOtlpError) && !(error instanceof Error && "code" in error && String(error.code).startsWith("Z_"))) throw error;
    totals.malformed += 1;
    options.logger.warn({ signal, reason: error.message }, "malformed OTLP request");
    return respondStatus(response, 400, error.message);
  }
  const digest = createHash("sha256").update(raw).digest("hex").slice(0, 16);
  const deadLetters: DeadLetterRecord[] = mapped.unmapped.map((entry) => ({
    reason: "UNMAPPABLE_TELEMETRY",
    field: entry.field,
    detail: `${entry.reason}: ${entry.detail}`,
    // OTLP has no offsets: the request's digest and the record's position in it locate the record.
    source: { topic: `otlp${path}`, partition: 0, offset: `${digest}/${entry.index}` },
    factId: null,
    key: null,
    value: Buffer.from(entry.record, "utf8"),
  }));
  try {
    await options.sink.write(mapped.facts, deadLetters);
  } catch (error) {
    options.logger.error({ signal, err: error instanceof Error ? error.message : String(error) }, "could not write facts; the exporter will retry");
    return respondStatus(response, 503, "facts could not be written; retry later");
  }
  const ignoredCount = Object.values(mapped.ignored).reduce((sum, count) => sum + count, 0);
  totals.records += mapped.records;
  totals.facts += mapped.facts.length;
  totals.unmapped += mapped.unmapped.length;
  totals.ignored += ignoredCount;
  options.logger.info({ signal, records: mapped.records, facts: mapped.facts.length, unmapped: mapped.unmapped.length, ignored: ignoredCount }, "otlp request");
  const reasons = new Map<string, number>();
  for (const entry of mapped.unmapped) reasons.set(`${entry.reason} (${entry.field})`, (reasons.get(`${entry.reason} (${entry.field})`) ?? 0) + 1);
  const message = [...reasons].map(([reason, count]) => `${count} × ${reason}`).join("; ");
  response.writeHead(200, { "content-type": format === "json" ? "application/json" : "application/x-protobuf" });
  response.end(encodeOtlpResponse(signal, format, mapped.unmapped.length, message));
}

function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    request.on("end", () => resolve(tooLarge ? undefined : Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

/** An error answer: google.rpc.Status in its JSON form (code 3 = INVALID_ARGUMENT, 14 = UNAVAILABLE). */
function respondStatus(response: ServerResponse, status: number, message: string): void {
  const code = status === 503 ? 14 : status >= 500 ? 13 : 3;
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ code, message }));
}
