import { createServer, type Server } from "node:http";
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import { TelemetryServerError } from "../../errors.ts";
import type { Telemetry } from "./telemetry.ts";

/** A further GET route of the port (by path): its status, headers and body. */
export type TelemetryRoute = (
  url: URL,
) => Promise<{ readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: string }>;

/**
 * Serves `/metrics` (Prometheus text format), `/healthz` and any further `routes` on 127.0.0.1 by
 * default: operational endpoints are not for the open network unless a deployment binds them
 * there deliberately.
 */
export function serveTelemetry(
  telemetry: Telemetry,
  port: number,
  healthy: () => boolean,
  host = "127.0.0.1",
  routes: ReadonlyMap<string, TelemetryRoute> = new Map(),
): Effect.Effect<Server, TelemetryServerError, Scope.Scope> {
  return Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer((request, response) => {
            if (request.url === "/metrics") {
              response.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
              response.end(telemetry.render());
            } else if (request.url === "/healthz") {
              const ok = healthy();
              response.writeHead(ok ? 200 : 503, { "content-type": "application/json" });
              response.end(JSON.stringify({ status: ok ? "ok" : "starting" }));
            } else {
              const url = new URL(request.url ?? "/", "http://localhost");
              const route = request.method === "GET" ? routes.get(url.pathname) : undefined;
              if (route === undefined) {
                response.writeHead(404).end();
                return;
              }
              route(url).then(
                (reply) => response.writeHead(reply.status, reply.headers).end(reply.body),
                (error: unknown) =>
                  response
                    .writeHead(500, { "content-type": "application/json" })
                    .end(JSON.stringify({ error: error instanceof Error ? error.message : String(error) })),
              );
            }
          });
          server.once("error", reject);
          server.listen(port, host, () => resolve(server));
        }),
      catch: (cause) => new TelemetryServerError({ address: `${host}:${port}`, cause }),
    }),
    (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve()))),
  );
}
