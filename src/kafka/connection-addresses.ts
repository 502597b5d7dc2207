import { ConfigError } from "../errors.ts";
import { ENV, originName, sourced, type Sourced } from "./connection-sources.ts";

/** Where the broker is when nobody says otherwise: the one `npm run services:up` starts. */
export const DEFAULT_BROKERS = "127.0.0.1:19092";

/**
 * The Confluent-compatible API root when nobody says otherwise: Apicurio serves it under
 * /apis/ccompat/v7. A Confluent Schema Registry's root URL works the same way.
 */
export const DEFAULT_SCHEMA_REGISTRY_URL = "http://127.0.0.1:18081/apis/ccompat/v7";

/** Brokers from a flag value, else KAFKA_BROKERS, else the local default; comma-separated host:port. */
export function resolveBrokers(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Sourced<readonly string[]> {
  const raw = sourced(flag, "--brokers", env, ENV.brokers, DEFAULT_BROKERS);
  const brokers = raw.value
    .split(",")
    .map((broker) => broker.trim())
    .filter((broker) => broker !== "");
  const bad = brokers.find((broker) => !/^[^\s:/]+:\d{1,5}$/.test(broker));
  if (brokers.length === 0 || bad !== undefined) {
    throw new ConfigError({
      field: originName(raw.origin),
      problem: `"${bad ?? raw.value}" is not a host:port broker address`,
      fix: "give host:port[,host:port], e.g. 127.0.0.1:19092 (no scheme such as SASL_SSL:// or https://)",
    });
  }
  return { value: brokers, origin: raw.origin };
}

/** The registry's Confluent-compatible root from a flag, else SCHEMA_REGISTRY_URL, else the local default. */
export function resolveSchemaRegistryUrl(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Sourced<string> {
  const raw = sourced(flag, "--schema-registry", env, ENV.registryUrl, DEFAULT_SCHEMA_REGISTRY_URL);
  const url = raw.value.replace(/\/+$/, "");
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new ConfigError({
      field: originName(raw.origin),
      problem: `"${url}" is not an http:// or https:// URL`,
      fix: "give the registry's Confluent-compatible root, e.g. http://127.0.0.1:18081/apis/ccompat/v7 (Apicurio) or https://registry.example.com (Confluent)",
    });
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new ConfigError({
      field: originName(raw.origin),
      problem: "the URL carries credentials",
      fix: `remove them from the URL and set ${ENV.registryUsername} and ${ENV.registryPassword} instead`,
    });
  }
  return { value: url, origin: raw.origin };
}
