import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { FactSink } from "../fact-sink.ts";
import type { AnalysisPool } from "./analysis-pool.ts";
import { answerJson, HookInputError, parseHookInput, subjectOf } from "./claude-code-hook.ts";
import type { UndecidedPolicy } from "./claude-code-hook.ts";
import { answerCall, hookContext, nowMicros, recordHookCall } from "./hook-runner.ts";
import type { LoopGuard } from "./loop-guard-store.ts";
import { allowedHostNames, hostName } from "../../net/allowed-hosts.ts";

/**
 * The hook's warm HTTP form, for a `"type": "http"` hook: POST the PreToolUse input as JSON to `/`,
 * read Claude Code's JSON decision. Only that request is judged and recorded (with the loop guard,
 * PostToolUse and PostToolUseFailure inputs are taken too and feed it); `GET /healthz`
 * reports the analysers. Any web page the user opens can send requests to a loopback port, so a
 * request must name a known Host (no DNS rebinding) and carry no browser Origin.
 */
export interface HookServerOptions {
  readonly host: string;
  readonly port: number;
  readonly pool: AnalysisPool;
  readonly sink: FactSink;
  readonly spoolDir: string;
  readonly deadlineMs: number;
  readonly onUndecided: UndecidedPolicy;
  readonly loopGuard: LoopGuard | undefined;
  readonly shellTools: readonly string[];
  readonly maxBodyBytes: number;
  /** Host names accepted besides the loopback names and the bound address. */
  readonly allowedHosts: readonly string[];
  /** Origins accepted (none by default: Claude Code sends none). */
  readonly allowedOrigins: readonly string[];
  readonly logger: Logger;
}

export interface HookServer {
  readonly url: string;
  /** Milliseconds since the last request began (or since the start). */
  idleMs(): number;
  close(): Promise<void>;
}

/** A request that takes longer than this to arrive whole is dropped (slow-body clients hold sockets). */
const REQUEST_TIMEOUT_MS = 10_000;

export async function startHookServer(options: HookServerOptions): Promise<HookServer> {
  const allowedHosts = allowedHostNames(options.host, options.allowedHosts);
  const allowedOrigins = new Set(options.allowedOrigins);
  // Recording happens after the answer, one call at a time, in arrival order.
  let recording: Promise<unknown> = Promise.resolve();
  let lastRequestAt = performance.now();
  const server: Server = createServer((request, response) => {
    lastRequestAt = performance.now();
    const refusal = refusalOf(request, allowedHosts, allowedOrigins);
    if (refusal !== undefined) {
      reply(response, refusal.status, { error: refusal.error }, refusal.headers);
      request.resume();
      return;
    }
    if (request.method === "GET") {
      const health = options.pool.health();
      // No worker loaded (starting, or every one being replaced): calls are answered undecided.
      reply(response, 200, { status: health.ready > 0 ? "ok" : "degraded", ...health });
      return;
    }
    const started = performance.now();
    readBody(request, options.maxBodyBytes).then(
      async (body) => {
        if (body === undefined) {
          // Stop reading an oversized body at once rather than draining it.
          response.once("finish", () => request.destroy());
          reply(response, 413, { error: `the body is over ${options.maxBodyBytes} bytes` }, { connection: "close" });
          return;
        }
        let input;
        try {
          input = parseHookInput(body, options.loopGuard !== undefined);
        } catch (error) {
          if (!(error instanceof HookInputError)) throw error;
          reply(response, 400, { error: error.message });
          return;
        }
        const subject = subjectOf(input, options.shellTools);
        const onGuardError = (error: unknown) =>
          options.logger.error({ err: error }, "the loop guard's state could not be used");
        if (input.event !== "PreToolUse") {
          // Before the reply: the call that follows must see this result.
          try {
            options.loopGuard?.after(input, subject);
          } catch (error) {
            onGuardError(error);
          }
          response.writeHead(200).end();
          return;
        }
        const context = hookContext(input);
        const verdict = await options.pool.judge(subject, context, options.deadlineMs);
        const { answer, loopReason } = answerCall(
          input,
          subject,
          verdict,
          options.onUndecided,
          options.loopGuard,
          onGuardError,
        );
        const json = answerJson(answer);
        if (json === undefined) response.writeHead(200).end();
        else response.writeHead(200, { "content-type": "application/json" }).end(json);
        const elapsedMs = performance.now() - started;
        const call = { input, subject, context, verdict, answer, loopReason, elapsedMs, nowMicros: nowMicros() };
        recording = recording
          .then(() => recordHookCall(call, options.sink, options.spoolDir))
          .catch((error: unknown) =>
            options.logger.error({ err: error, toolUseId: input.toolUseId }, "could not record a hook call"),
          );
      },
      (error: unknown) => {
        options.logger.error({ err: error }, "hook request failed");
        if (!response.headersSent) reply(response, 500, { error: "internal error" });
      },
    );
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = REQUEST_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/`,
    idleMs: () => performance.now() - lastRequestAt,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive connections would hold close() open until they time out.
      server.closeIdleConnections();
      await closed;
      await recording;
    },
  };
}

interface Refusal {
  readonly status: number;
  readonly error: string;
  readonly headers?: Readonly<Record<string, string>>;
}

const FROM_A_WEB_PAGE: Refusal = { status: 403, error: "requests from web pages are refused" };

/** Which requests are not hook calls or health checks, and why. */
function refusalOf(
  request: IncomingMessage,
  hosts: ReadonlySet<string>,
  origins: ReadonlySet<string>,
): Refusal | undefined {
  const name = hostName(request.headers.host);
  if (name === undefined || !hosts.has(name))
    return { status: 421, error: "unknown Host; add it with --allowed-hosts" };
  const origin = request.headers.origin;
  if (origin !== undefined && !origins.has(origin)) return FROM_A_WEB_PAGE;
  const fetchSite = request.headers["sec-fetch-site"];
  if (origin === undefined && fetchSite !== undefined && fetchSite !== "none") return FROM_A_WEB_PAGE;
  const path = (request.url ?? "").split("?")[0];
  if (path === "/healthz") {
    return request.method === "GET" ? undefined : { status: 405, error: "use GET", headers: { allow: "GET" } };
  }
  if (path !== "/") return { status: 404, error: "not found: POST the hook input to /" };
  if (request.method !== "POST") return { status: 405, error: "use POST", headers: { allow: "POST" } };
  const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") return { status: 415, error: "the hook input must be sent as application/json" };
  return undefined;
}

/** The body as text, or undefined once it passes maxBytes (then the rest is not read). */
function readBody(request: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const declared = Number(request.headers["content-length"] ?? "0");
  if (declared > maxBytes) {
    request.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        request.removeAllListeners("data");
        request.resume();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function reply(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}
