import { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { registryHttpsAgent, resolveRegistryConnection, type RegistryConnection } from "./connection-settings.ts";

/**
 * Each registry request's bound. The client sets none by default, so a registry that accepts the
 * connection but never answers (a stalled JVM, an exhausted worker pool) held the caller forever,
 * silently: `agentops run` stopped in its "register schemas" stage with nothing in its log. Past the
 * bound the request fails as unreachable (REGISTRY_UNREACHABLE): retried at start-up, and mid-stream
 * the batch is retried (src/kafka/serde/wire-decoder.ts), never dead-lettered.
 */
export const REGISTRY_REQUEST_TIMEOUT_MS = 30_000;

type RegistryMiddleware = NonNullable<ConstructorParameters<typeof SchemaRegistry>[0]["middlewares"]>[number];

/** A mappersmith middleware giving every request without its own timeout `timeoutMs`. */
function requestTimeout(timeoutMs: number): RegistryMiddleware {
  return () => ({
    async prepareRequest(next) {
      const request = await next();
      return (request.timeout() ?? 0) > 0 ? request : request.enhance({ timeout: timeoutMs });
    },
  });
}

/**
 * A Confluent-compatible registry client: basic auth from SCHEMA_REGISTRY_USERNAME /
 * SCHEMA_REGISTRY_PASSWORD and TLS from SCHEMA_REGISTRY_SSL_* (src/kafka/connection-settings.ts).
 * Given a URL only, the rest comes from the environment.
 */
export function createSchemaRegistry(
  target: string | RegistryConnection,
  env: NodeJS.ProcessEnv = process.env,
  requestTimeoutMs = REGISTRY_REQUEST_TIMEOUT_MS,
): SchemaRegistry {
  const connection = typeof target === "string" ? resolveRegistryConnection(target, env) : target;
  const agent = registryHttpsAgent(connection);
  return new SchemaRegistry({
    host: connection.url.value,
    clientId: "agentops-stream",
    middlewares: [requestTimeout(requestTimeoutMs)],
    ...(connection.auth === undefined ? {} : { auth: { ...connection.auth } }),
    ...(agent === undefined ? {} : { agent }),
  });
}
