import { createServer, type Server } from "node:http";
import type { ViewState } from "../serve/view-state.ts";
import { OPENMETRICS_CONTENT_TYPE, renderOpenMetrics, type ExportLimits } from "./openmetrics.ts";

/** A scrape that has not sent its request within this time is dropped: a slow client holds nothing. */
const REQUEST_TIMEOUT_MS = 10_000;

export interface ExporterServer {
  readonly server: Server;
  /** The scrape address, e.g. http://127.0.0.1:9464/metrics */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The exporter's HTTP server: GET /metrics renders the current records of `state` as OpenMetrics
 * text on every scrape (nothing is cached between scrapes); GET /healthz answers whether the source
 * reports an error. Read-only: other methods get 405, other paths 404.
 */
export async function startExporterServer(
  state: ViewState,
  host: string,
  port: number,
  limits: ExportLimits,
): Promise<ExporterServer> {
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    const snapshot = state.snapshot();
    if (path === "/metrics") {
      let body: string;
      try {
        body = renderOpenMetrics(
          snapshot.results.map((entry) => entry.result),
          limits,
        );
      } catch (error) {
        // A record of a shape nobody foresaw must cost one scrape, never the process.
        response.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        response.end(`cannot render the results: ${error instanceof Error ? error.message : String(error)}\n`);
        return;
      }
      response.writeHead(200, {
        "content-type": OPENMETRICS_CONTENT_TYPE,
        "content-length": Buffer.byteLength(body),
        "cache-control": "no-cache",
      });
      response.end(request.method === "HEAD" ? undefined : body);
      return;
    }
    if (path === "/healthz") {
      const healthy = snapshot.status.error === null;
      response.writeHead(healthy ? 200 : 503, { "content-type": "application/json; charset=utf-8" });
      const { description, error } = snapshot.status;
      response.end(JSON.stringify({ status: healthy ? "ok" : "degraded", source: description, error }));
      return;
    }
    response.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
    response.end("not found: the exporter serves /metrics and /healthz\n");
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = REQUEST_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === "object" && address !== null ? address.port : port;
  return {
    server,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${boundPort}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
