import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { DeadLetterRecord } from "../../contract/dead-letter.ts";
import type { FactSink } from "../fact-sink.ts";
import { allowedHostNames, hostName } from "../../net/allowed-hosts.ts";
import { isLoopbackHost } from "../../net/listen-address.ts";
import type { OtlpMappingConfig } from "./mapping-config.ts";
import { Telemetry } from "../../stream/runtime/telemetry.ts";
import { attributesFor, missingCoordinates, type TupleCoordinate } from "./attribution-gaps.ts";
import { readBoundedBody } from "./otlp-body.ts";
import { mapOtlpRecords, type MappedRequest } from "./map-request.ts";
import { decodeOtlpRequest, encodeOtlpResponse, MalformedOtlpError, type WireFormat } from "./otlp-decode.ts";
import type { OtlpSignal } from "./otlp-records.ts";

/**
 * The OTLP/HTTP receiver: POST /v1/traces, /v1/logs, /v1/metrics in protobuf or JSON (gzip or
 * not). It answers with the OTLP export response; records it cannot map are counted in its
 * partial success, named by reason in its error message, and written as dead letters. A body it
 * cannot read is a 400 with a message; a sink that cannot take the facts is a 503, which OTLP
 * exporters retry (ids are deterministic, so a retried request is a redelivery).
 *
 * Requests are read and decoded side by side, each under its own bounds (docs/security.md), so a
 * slow or vanished client holds up no one; only the writes to the sink take turns.
 */
export interface ReceiverLimits {
  /** The largest body accepted, counted after decompression. */
  readonly maxBodyBytes: number;
  /** From the request's headers to its last body byte; a sink write is bounded by it too. */
  readonly requestTimeoutMs: number;
  /** Requests being received, decoded or written at once; one more is a 503 (exporters retry). */
  readonly maxConcurrentRequests: number;
}

export const DEFAULT_RECEIVER_LIMITS: ReceiverLimits = {
  maxBodyBytes: 32 * 1024 * 1024,
  requestTimeoutMs: 30_000,
  maxConcurrentRequests: 16,
};

export interface OtlpReceiverOptions {
  readonly host: string;
  readonly port: number;
  readonly sink: FactSink;
  readonly config: OtlpMappingConfig;
  readonly logger: Logger;
  readonly limits?: Partial<ReceiverLimits>;
  /** When set, every request must carry `Authorization: Bearer <token>`. */
  readonly authToken?: string | undefined;
  /** Without a token, the host names answered besides the bound address (net/allowed-hosts.ts). */
  readonly allowedHosts?: readonly string[];
  /** Counters served at GET /metrics (Prometheus text), shared with the sink's. */
  readonly telemetry?: Telemetry;
}

export interface ReceiverTotals {
  requests: number;
  records: number;
  facts: number;
  unmapped: number;
  ignored: number;
  malformed: number;
  /** Model calls written without a coordinate of the attribution tuple, by coordinate. */
  callsMissing: Record<TupleCoordinate, number>;
  /** Requests refused before their body was read to the end, by reason. */
  refused: { unauthorized: number; tooLarge: number; timedOut: number; foreignHost: number; busy: number };
}

export interface OtlpReceiver {
  readonly server: Server;
  readonly url: string;
  readonly totals: ReceiverTotals;
  close(): Promise<void>;
}

const PATHS: Record<string, OtlpSignal> = { "/v1/traces": "traces", "/v1/logs": "logs", "/v1/metrics": "metrics" };

interface Receiving {
  readonly options: OtlpReceiverOptions;
  readonly limits: ReceiverLimits;
  readonly totals: ReceiverTotals;
  readonly expectedToken: Buffer | undefined;
  /** Checked only without a token: a page of another site rebound to this address has neither. */
  readonly allowedHosts: ReadonlySet<string> | undefined;
  readonly telemetry: Telemetry;
  /** Requests past the checks of `handle` and not yet answered. */
  inFlight: number;
  writeFacts(mapped: MappedRequest, deadLetters: readonly DeadLetterRecord[]): Promise<void>;
}

export async function startOtlpReceiver(options: OtlpReceiverOptions): Promise<OtlpReceiver> {
  const limits: ReceiverLimits = { ...DEFAULT_RECEIVER_LIMITS, ...options.limits };
  const totals: ReceiverTotals = {
    requests: 0,
    records: 0,
    facts: 0,
    unmapped: 0,
    ignored: 0,
    malformed: 0,
    callsMissing: { provider: 0, model: 0, role: 0, runtime: 0 },
    refused: { unauthorized: 0, tooLarge: 0, timedOut: 0, foreignHost: 0, busy: 0 },
  };
  // One write at a time: the Kafka sink batches per write. A write that outlives its bound frees
  // the turn (the exporter retries a 503, and a retried fact is a redelivery).
  let sinkTurn: Promise<unknown> = Promise.resolve();
  const receiving: Receiving = {
    options,
    limits,
    totals,
    expectedToken: options.authToken === undefined ? undefined : digest(options.authToken),
    allowedHosts:
      options.authToken === undefined ? allowedHostNames(options.host, options.allowedHosts ?? []) : undefined,
    telemetry: options.telemetry ?? new Telemetry(),
    inFlight: 0,
    writeFacts(mapped, deadLetters) {
      const write = sinkTurn.then(() =>
        withinTime(options.sink.write(mapped.facts, deadLetters), limits.requestTimeoutMs),
      );
      sinkTurn = write.catch(() => undefined);
      return withinTime(write, limits.requestTimeoutMs);
    },
  };
  // Node's own request bounds back ours up while the headers arrive, checked every second.
  const bounds = {
    requestTimeout: limits.requestTimeoutMs + 1_000,
    headersTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: 1_000,
  };
  const server = createServer(bounds, (request, response) => {
    handle(request, response, receiving).catch((error: unknown) => {
      options.logger.error({ err: error instanceof Error ? error.message : String(error) }, "otlp request failed");
      if (!response.headersSent) respondStatus(response, 500, "internal error; the request was not processed", true);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  if (options.authToken === undefined && !isLoopbackHost(options.host)) {
    options.logger.warn(
      { host: options.host },
      "the OTLP receiver is reachable beyond this machine without a token: anyone who reaches the port can write " +
        "facts; set --auth-token-file",
    );
  }
  const address = server.address() as AddressInfo;
  return {
    server,
    url: `http://${address.address.includes(":") ? `[${address.address}]` : address.address}:${address.port}`,
    totals,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

async function handle(request: IncomingMessage, response: ServerResponse, receiving: Receiving): Promise<void> {
  const { limits, totals } = receiving;
  const host = hostName(request.headers.host);
  if (receiving.allowedHosts !== undefined && (host === undefined || !receiving.allowedHosts.has(host))) {
    totals.refused.foreignHost += 1;
    const message = `this receiver does not answer to host "${request.headers.host ?? ""}"`;
    return respondStatus(response, 421, `${message}; add it with --allowed-hosts, or set --auth-token-file`, true);
  }
  if (receiving.expectedToken !== undefined && !authorized(request.headers.authorization, receiving.expectedToken)) {
    totals.refused.unauthorized += 1;
    response.setHeader("www-authenticate", 'Bearer realm="agentops-otlp"');
    return respondStatus(response, 401, "missing or wrong bearer token; send Authorization: Bearer <token>", true);
  }
  const path = (request.url ?? "").split("?")[0] ?? "";
  if (path === "/metrics" && request.method === "GET") {
    response.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
    return void response.end(receiving.telemetry.render());
  }
  const signal = PATHS[path];
  if (signal === undefined) {
    return respondStatus(response, 404, `unknown path ${path}; POST to /v1/traces, /v1/logs or /v1/metrics`, true);
  }
  if (request.method !== "POST") return respondStatus(response, 405, "OTLP/HTTP takes POST", true);
  const contentType = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  const format: WireFormat | undefined =
    contentType === "application/x-protobuf" ? "protobuf" : contentType === "application/json" ? "json" : undefined;
  if (format === undefined) {
    const message = `content type "${contentType ?? ""}" is not OTLP; send application/x-protobuf or application/json`;
    return respondStatus(response, 415, message, true);
  }
  const encoding = (request.headers["content-encoding"] ?? "identity").toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip") {
    return respondStatus(response, 415, `content encoding "${encoding}" is not supported; send gzip or none`, true);
  }
  // Bounds the memory of bodies held at once: each is at most maxBodyBytes.
  if (receiving.inFlight >= limits.maxConcurrentRequests) {
    totals.refused.busy += 1;
    response.setHeader("retry-after", "1");
    const message = `${limits.maxConcurrentRequests} requests are being received already; retry later`;
    return respondStatus(response, 503, message, true);
  }
  receiving.inFlight += 1;
  try {
    await receive(request, response, receiving, { path, signal, format, gzip: encoding === "gzip" });
  } finally {
    receiving.inFlight -= 1;
  }
}

interface Accepted {
  readonly path: string;
  readonly signal: OtlpSignal;
  readonly format: WireFormat;
  readonly gzip: boolean;
}

/** One request past the checks: its body read under the bounds, mapped, written and answered. */
async function receive(
  request: IncomingMessage,
  response: ServerResponse,
  receiving: Receiving,
  accepted: Accepted,
): Promise<void> {
  const { options, limits, totals } = receiving;
  const { path, signal, format, gzip } = accepted;
  const bounds = { maxBytes: limits.maxBodyBytes, timeoutMs: limits.requestTimeoutMs };
  const read = await readBoundedBody(request, gzip, bounds);
  if (read.kind === "aborted") return;
  if (read.kind === "too-large") {
    totals.refused.tooLarge += 1;
    const message = `body larger than ${limits.maxBodyBytes} bytes (after decompression); send smaller batches`;
    return respondStatus(response, 413, message, true);
  }
  if (read.kind === "timed-out") {
    totals.refused.timedOut += 1;
    return respondStatus(response, 408, `body not received within ${limits.requestTimeoutMs} ms`, true);
  }
  totals.requests += 1;
  let mapped: MappedRequest;
  try {
    if (read.kind === "bad-gzip") throw new MalformedOtlpError(`not a gzip body: ${read.detail}`);
    mapped = mapOtlpRecords(decodeOtlpRequest(signal, format, read.body), options.config);
  } catch (error) {
    if (!(error instanceof MalformedOtlpError)) throw error;
    totals.malformed += 1;
    options.logger.warn({ signal, reason: error.message }, "malformed OTLP request");
    return respondStatus(response, 400, error.message, false);
  }
  const requestDigest = createHash("sha256").update(read.body).digest("hex").slice(0, 16);
  const deadLetters: DeadLetterRecord[] = mapped.unmapped.map((entry) => ({
    reason: "UNMAPPABLE_TELEMETRY",
    field: entry.field,
    detail: `${entry.reason}: ${entry.detail}`,
    // OTLP has no offsets: the request's digest and the record's position in it locate the record.
    source: { topic: `otlp${path}`, partition: 0, offset: `${requestDigest}/${entry.index}` },
    factId: null,
    key: null,
    value: Buffer.from(entry.record, "utf8"),
  }));
  try {
    await receiving.writeFacts(mapped, deadLetters);
  } catch (error) {
    options.logger.error(
      { signal, err: error instanceof Error ? error.message : String(error) },
      "could not write facts; the exporter will retry",
    );
    return respondStatus(response, 503, "facts could not be written; retry later", false);
  }
  const ignoredCount = Object.values(mapped.ignored).reduce((sum, count) => sum + count, 0);
  totals.records += mapped.records;
  totals.facts += mapped.facts.length;
  totals.unmapped += mapped.unmapped.length;
  totals.ignored += ignoredCount;
  countAttributionGaps(mapped, receiving);
  options.logger.info(
    {
      signal,
      records: mapped.records,
      facts: mapped.facts.length,
      unmapped: mapped.unmapped.length,
      ignored: ignoredCount,
    },
    "otlp request",
  );
  const reasons = new Map<string, number>();
  for (const entry of mapped.unmapped)
    reasons.set(`${entry.reason} (${entry.field})`, (reasons.get(`${entry.reason} (${entry.field})`) ?? 0) + 1);
  const message = [...reasons].map(([reason, count]) => `${count} × ${reason}`).join("; ");
  response.writeHead(200, { "content-type": format === "json" ? "application/json" : "application/x-protobuf" });
  response.end(encodeOtlpResponse(signal, format, mapped.unmapped.length, message));
}

const MISSING_COORDINATE_HELP =
  "Model calls written without a coordinate of the provider/model/role/runtime tuple (left out of the " +
  "operational metrics), with the attribute to set";

function countAttributionGaps(mapped: MappedRequest, { options, totals, telemetry }: Receiving): void {
  for (const { fact } of mapped.facts) {
    for (const coordinate of missingCoordinates(fact)) {
      const attribute = attributesFor(coordinate, options.config);
      // Said once per coordinate: the exporter's configuration, not each call, is what to change.
      if (totals.callsMissing[coordinate] === 0) {
        const message = `model calls without ${coordinate}: the operational metrics leave them out`;
        options.logger.warn({ coordinate, attribute }, `${message} until the telemetry carries ${attribute}`);
      }
      totals.callsMissing[coordinate] += 1;
      const labels = { coordinate, attribute };
      telemetry.count("agentops_otlp_calls_missing_coordinate_total", MISSING_COORDINATE_HELP, labels);
    }
  }
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** Bearer scheme (case-insensitive, RFC 7235); the tokens are compared as digests in constant time. */
function authorized(header: string | undefined, expected: Buffer): boolean {
  const match = /^bearer +(\S+) *$/i.exec(header ?? "");
  const same = timingSafeEqual(digest(match?.[1] ?? ""), expected);
  return match !== null && same;
}

function withinTime<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** An error answer: google.rpc.Status in its JSON form (code 3 = INVALID_ARGUMENT, 14 = UNAVAILABLE). */
function respondStatus(response: ServerResponse, status: number, message: string, bodyUnread: boolean): void {
  const code = status === 503 ? 14 : status >= 500 ? 13 : 3;
  // A body left unread would otherwise be drained from the client: end the connection instead.
  response.writeHead(status, { "content-type": "application/json", ...(bodyUnread ? { connection: "close" } : {}) });
  response.end(JSON.stringify({ code, message }));
}
