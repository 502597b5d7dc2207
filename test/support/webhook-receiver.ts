import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** What the receiver does with the n-th request (1-based): answer with a status, or never answer. */
export type Behaviour = (attempt: number, request: ReceivedRequest) => number | "hang";

export interface WebhookReceiver {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** Delivery keys accepted (2xx) once each: what a deduplicating receiver keeps. */
  readonly accepted: Map<string, ReceivedRequest>;
  close(): Promise<void>;
}

/** A local HTTP receiver for webhook tests, on a free loopback port. */
export async function startReceiver(behaviour: Behaviour = () => 200): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const accepted = new Map<string, ReceivedRequest>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const received = { path: request.url ?? "", headers: request.headers, body };
      requests.push(received);
      const answer = behaviour(requests.length, received);
      if (answer === "hang") return;
      const key = request.headers["idempotency-key"];
      if (answer >= 200 && answer < 300 && typeof key === "string" && !accepted.has(key)) accepted.set(key, received);
      const redirect = answer >= 300 && answer < 400;
      response.writeHead(answer, redirect ? { location: "http://127.0.0.1:9/elsewhere" } : {}).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    accepted,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
