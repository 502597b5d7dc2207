import { SchemaRegistry } from "@kafkajs/confluent-schema-registry";

/**
 * The Confluent-compatible API root when nobody says otherwise: Apicurio serves it under
 * /apis/ccompat/v7. A Confluent Schema Registry's root URL works the same way.
 */
export const DEFAULT_SCHEMA_REGISTRY_URL = "http://127.0.0.1:18081/apis/ccompat/v7";

export function resolveSchemaRegistryUrl(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  return (flag ?? env["SCHEMA_REGISTRY_URL"] ?? DEFAULT_SCHEMA_REGISTRY_URL).replace(/\/+$/, "");
}

/** Basic auth from SCHEMA_REGISTRY_USERNAME / SCHEMA_REGISTRY_PASSWORD (environment only, never logged). */
export function createSchemaRegistry(url: string, env: NodeJS.ProcessEnv = process.env): SchemaRegistry {
  const username = env["SCHEMA_REGISTRY_USERNAME"];
  const password = env["SCHEMA_REGISTRY_PASSWORD"];
  const auth = username !== undefined && username !== "" ? { auth: { username, password: password ?? "" } } : {};
  return new SchemaRegistry({ host: url, clientId: "agentops-stream", ...auth });
}
