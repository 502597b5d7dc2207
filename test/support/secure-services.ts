import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { inject } from "vitest";
import "./provided-context.ts";

/** ops/'s security.json: the broker's secured listeners and the throw-away CA, certificates and SCRAM users. */
export interface SecureServices {
  readonly saslSslBrokers: string;
  readonly mutualTlsBrokers: string;
  readonly caFile: string;
  readonly serverCertFile: string;
  readonly serverKeyFile: string;
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  readonly scramUser: string;
  readonly scramPassword: string;
  readonly limitedUser: string;
  readonly limitedPassword: string;
}

/** The secured listeners, or the reason the integration setup has none (the test then skips, saying so). */
export function secureServices(): { services: SecureServices | undefined; missing: string } {
  const text = inject("secureServices");
  if (text === "") return { services: undefined, missing: inject("secureServicesMissing") };
  const raw = JSON.parse(text) as Record<string, string>;
  const field = (name: string): string => raw[name] ?? "";
  return {
    services: {
      saslSslBrokers: field("saslSslBrokers"),
      mutualTlsBrokers: field("mutualTlsBrokers"),
      caFile: field("caFile"),
      serverCertFile: field("serverCertFile"),
      serverKeyFile: field("serverKeyFile"),
      clientCertFile: field("clientCertFile"),
      clientKeyFile: field("clientKeyFile"),
      scramUser: field("scramUser"),
      scramPassword: readFileSync(field("scramPasswordFile"), "utf8").trim(),
      limitedUser: field("limitedUser"),
      limitedPassword: readFileSync(field("limitedPasswordFile"), "utf8").trim(),
    },
    missing: "",
  };
}

export interface RegistryProxy {
  readonly url: string;
  close(): Promise<void>;
}

export interface RegistryProxyOptions {
  /** Require a client certificate signed by the CA (mutual TLS). */
  readonly requireClientCertificate?: boolean;
  /** Basic-auth users: "allow" passes, "deny" gets 403; anyone else (or no credentials) gets 401. */
  readonly users?: Readonly<Record<string, { password: string; access: "allow" | "deny" }>>;
}

/**
 * An HTTPS front for the real registry, with ops/'s throw-away CA and broker certificate
 * (localhost / 127.0.0.1): it terminates TLS, optionally demands a client certificate, optionally
 * checks basic-auth credentials, and forwards everything else to the registry unchanged.
 */
export async function startRegistryProxy(
  secure: SecureServices,
  registryUrl: string,
  options: RegistryProxyOptions = {},
): Promise<RegistryProxy> {
  const upstream = new URL(registryUrl);
  const server: Server = createServer(
    {
      cert: readFileSync(secure.serverCertFile),
      key: readFileSync(secure.serverKeyFile),
      ca: [readFileSync(secure.caFile)],
      requestCert: options.requireClientCertificate === true,
      rejectUnauthorized: options.requireClientCertificate === true,
    },
    (request, response) => {
      if (options.users !== undefined) {
        const header = request.headers.authorization ?? "";
        const [user = "", password = ""] = Buffer.from(header.replace(/^Basic /, ""), "base64")
          .toString("utf8")
          .split(":");
        const entry = options.users[user];
        if (entry === undefined || entry.password !== password) {
          response
            .writeHead(401, { "content-type": "application/json", "www-authenticate": 'Basic realm="registry"' })
            .end('{"error_code":401,"message":"Unauthorized"}');
          return;
        }
        if (entry.access === "deny") {
          response
            .writeHead(403, { "content-type": "application/json" })
            .end('{"error_code":403,"message":"Forbidden"}');
          return;
        }
      }
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: request.method,
          path: `${upstream.pathname.replace(/\/$/, "")}${request.url ?? ""}`,
          headers: { ...request.headers, host: upstream.host },
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      forward.on("error", () => response.writeHead(502).end());
      request.pipe(forward);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
