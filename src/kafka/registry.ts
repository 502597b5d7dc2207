import { SchemaRegistry } from "@kafkajs/confluent-schema-registry";

/**
 * The Confluent-compatible API root when nobody says otherwise: Apicurio serves it under
 * /apis/ccompat/v7. A Confluent Schema Registry's root URL works the same way.
 */
export const DEFAULT_SCHEMA_REGISTRY_URL = "http://127.0.0.1:18081/apis/ccompat/v7";

export function resolveSchemaRegistryUrl(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  return (flag ?? env["SCHEMA_REGISTRY_URL"] ?? DEFAULT_SCHEMA_REGISTRY_URL).replace(/\/+$/, "");
}

export function createSchemaRegistry(url: string): SchemaRegistry {
  return new SchemaRegistry({ host: url, clientId: "agentops-stream" });
}
