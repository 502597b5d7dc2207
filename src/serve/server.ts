import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { allowedHostNames, hostName } from "../net/allowed-hosts.ts";
import type { ViewEvent, ViewState } from "./view-state.ts";

const STATIC_DIR = join(dirname(fileURLToPath(import.meta.url)), "static");
// uPlot's main entry is dist/uPlot.cjs.js; its browser bundle and stylesheet sit beside it.
const UPLOT_DIR = dirname(createRequire(import.meta.url).resolve("uplot"));

/**
 * Every file the page loads, by URL path: the page's own files and uPlot's prebuilt browser bundle
 * straight from node_modules (no build step). Nothing else on disk is reachable.
 */
const FILES: Readonly<Record<string, { path: string; type: string }>> = {
  "/": { path: join(STATIC_DIR, "index.html"), type: "text/html; charset=utf-8" },
  "/app.js": { path: join(STATIC_DIR, "app.js"), type: "text/javascript; charset=utf-8" },
  "/format.js": { path: join(STATIC_DIR, "format.js"), type: "text/javascript; charset=utf-8" },
  "/dom.js": { path: join(STATIC_DIR, "dom.js"), type: "text/javascript; charset=utf-8" },
  "/result-cells.js": { path: join(STATIC_DIR, "result-cells.js"), type: "text/javascript; charset=utf-8" },
  "/lineage.js": { path: join(STATIC_DIR, "lineage.js"), type: "text/javascript; charset=utf-8" },
  "/metrics-table.js": { path: join(STATIC_DIR, "metrics-table.js"), type: "text/javascript; charset=utf-8" },
  "/trends.js": { path: join(STATIC_DIR, "trends.js"), type: "text/javascript; charset=utf-8" },
  "/alerts.js": { path: join(STATIC_DIR, "alerts.js"), type: "text/javascript; charset=utf-8" },
  "/style.css": { path: join(STATIC_DIR, "style.css"), type: "text/css; charset=utf-8" },
  "/vendor/uPlot.iife.min.js": { path: join(UPLOT_DIR, "uPlot.iife.min.js"), type: "text/javascript; charset=utf-8" },
  "/vendor/uPlot.min.css": { path: join(UPLOT_DIR, "uPlot.min.css"), type: "text/css; charset=utf-8" },
};

/** A comment line every 15 s keeps proxies and the browser from closing an idle event stream. */
const KEEPALIVE_MS = 15_000;

export interface ViewServerOptions {
  /** Host names answered besides the bound address (net/allowed-hosts.ts). */
  readonly allowedHosts?: readonly string[];
  /** Bytes an event-stream client may leave unread before it is dropped (the browser reconnects). */
  readonly maxClientBufferBytes?: number;
  /** Event-stream clients at once; one more is a 503. */
  readonly maxClients?: number;
  /**
   * A figure's lineage for `/api/explain?key=…` (agentops explain's answer, from a running
   * member's engine state); absent, the route says how to turn it on.
   */
  readonly explain?: (key: string) => Promise<{ readonly status: number; readonly body: string }>;
}

export const DEFAULT_VIEW_LIMITS = { maxClientBufferBytes: 4 * 1024 * 1024, maxClients: 64 } as const;

function sseFrame(event: ViewEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

async function serveFile(response: ServerResponse, file: { path: string; type: string }): Promise<void> {
  const body = await readFile(file.path);
  response.writeHead(200, { "content-type": file.type, "content-length": body.length, "cache-control": "no-cache" });
  response.end(body);
}

/**
 * The event streams: each client gets the whole state first (event "snapshot"), then every change
 * as it happens. The frames of one turn of the event loop are joined and the same string queued
 * for every client (one write each, not one per change); a client that leaves more than
 * `maxBufferBytes` unread is dropped rather than buffered for.
 */
class EventStreams {
  private readonly clients = new Set<ServerResponse>();
  private readonly state: ViewState;
  private readonly maxBufferBytes: number;
  private readonly stopFollowing: () => void;
  private readonly keepalive: NodeJS.Timeout;
  private pending: string[] = [];

  constructor(state: ViewState, maxBufferBytes: number) {
    this.state = state;
    this.maxBufferBytes = maxBufferBytes;
    this.stopFollowing = state.subscribe((event) => this.broadcast(sseFrame(event)));
    this.keepalive = setInterval(() => this.broadcast(": keepalive\n\n"), KEEPALIVE_MS);
  }

  get size(): number {
    return this.clients.size;
  }

  open(request: IncomingMessage, response: ServerResponse): void {
    response.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    response.write(`event: snapshot\ndata: ${JSON.stringify(this.state.snapshot())}\n\n`);
    this.clients.add(response);
    const forget = (): void => void this.clients.delete(response);
    request.on("close", forget);
    response.on("close", forget);
  }

  close(): void {
    clearInterval(this.keepalive);
    this.stopFollowing();
  }

  private broadcast(frame: string): void {
    if (this.pending.push(frame) === 1) setImmediate(() => this.flush());
  }

  private flush(): void {
    const frames = this.pending.join("");
    this.pending = [];
    for (const client of this.clients) {
      if (client.writableLength <= this.maxBufferBytes) client.write(frames);
      else {
        this.clients.delete(client);
        client.destroy();
      }
    }
  }
}

export interface ViewServer {
  readonly server: Server;
  readonly url: string;
  /** Event-stream clients connected now. */
  clientCount(): number;
  close(): Promise<void>;
}

/**
 * The view's HTTP server (node:http): the page, its scripts, `/api/snapshot` (the records as JSON),
 * `/events` (server-sent events) and `/api/explain` (a figure's lineage, when configured). Read-only: every other method or path is refused, and so is
 * a request for a host name it does not answer to (421).
 */
export async function startViewServer(
  state: ViewState,
  host: string,
  port: number,
  options: ViewServerOptions = {},
): Promise<ViewServer> {
  const allowed = allowedHostNames(host, options.allowedHosts ?? []);
  const maxClients = options.maxClients ?? DEFAULT_VIEW_LIMITS.maxClients;
  const streams = new EventStreams(state, options.maxClientBufferBytes ?? DEFAULT_VIEW_LIMITS.maxClientBufferBytes);
  const server = createServer((request, response) => {
    const name = hostName(request.headers.host);
    if (name === undefined || !allowed.has(name)) {
      const message = `this server does not answer to host "${request.headers.host ?? ""}"`;
      const fix = `start it with --allowed-hosts ${name ?? "NAME"} to allow it`;
      const headers = { "content-type": "text/plain; charset=utf-8", connection: "close" };
      response.writeHead(421, headers).end(`${message}; ${fix}\n`);
      return;
    }
    const url = new URL(request.url ?? "/", "http://localhost");
    const path = url.pathname;
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (path === "/events") {
      if (streams.size >= maxClients) {
        const headers = { "content-type": "text/plain; charset=utf-8", "retry-after": "5" };
        response.writeHead(503, headers).end(`${maxClients} event-stream clients are connected already\n`);
        return;
      }
      return streams.open(request, response);
    }
    if (path === "/api/snapshot") {
      response.writeHead(200, { "content-type": "application/json; charset=utf-8", "cache-control": "no-cache" });
      response.end(JSON.stringify(state.snapshot()));
      return;
    }
    if (path === "/api/explain") {
      const json = { "content-type": "application/json; charset=utf-8", "cache-control": "no-cache" };
      const key = url.searchParams.get("key");
      const explain = options.explain;
      if (explain === undefined || key === null) {
        const error =
          explain === undefined
            ? "lineage is off: start agentops serve with --explain-member http://host:port (a running member's --metrics-port)"
            : "give ?key=<result key>";
        response.writeHead(explain === undefined ? 404 : 400, json).end(JSON.stringify({ error }));
        return;
      }
      explain(key).then(
        (reply) => response.writeHead(reply.status, json).end(reply.body),
        (error: unknown) =>
          response
            .writeHead(502, json)
            .end(JSON.stringify({ error: error instanceof Error ? error.message : String(error) })),
      );
      return;
    }
    const file = FILES[path];
    if (file === undefined) {
      response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end(`not found: ${path}\n`);
      return;
    }
    serveFile(response, file).catch((error: unknown) => {
      response
        .writeHead(500, { "content-type": "text/plain; charset=utf-8" })
        .end(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => {
      streams.close();
      reject(error);
    });
    server.listen(port, host, () => {
      server.removeAllListeners("error");
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === "object" && address !== null ? address.port : port;
  return {
    server,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${boundPort}/`,
    clientCount: () => streams.size,
    close: () =>
      new Promise<void>((resolve) => {
        streams.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
