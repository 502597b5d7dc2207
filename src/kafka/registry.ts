import { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { registryHttpsAgent, resolveRegistryConnection, type RegistryConnection } from "./connection-settings.ts";

/**
 * A Confluent-compatible registry client: basic auth from SCHEMA_REGISTRY_USERNAME /
 * SCHEMA_REGISTRY_PASSWORD and TLS from SCHEMA_REGISTRY_SSL_* (src/kafka/connection-settings.ts).
 * Given a URL only, the rest comes from the environment.
 */
export function createSchemaRegistry(target: string | RegistryConnection, env: NodeJS.ProcessEnv = process.env): SchemaRegistry {
  const connection = typeof target === "string" ? resolveRegistryConnection(target, env) : target;
  const agent = registryHttpsAgent(connection);
  return new SchemaRegistry({ host: connection.url.value, clientId: "agentops-stream", ...(connection.auth === undefined ? {} : { auth: { ...connection.auth } }), ...(agent === undefined ? {} : { agent }) });
}
