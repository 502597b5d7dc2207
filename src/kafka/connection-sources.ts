/**
 * Where a connection setting came from (flag, environment, default) and the names of the variables
 * read, so every message spells them once and can say which one to change.
 */

/** The environment variables this module reads, by name, so messages and docs spell them once. */
export const ENV = {
  brokers: "KAFKA_BROKERS",
  ssl: "KAFKA_SSL",
  sslCaFile: "KAFKA_SSL_CA_FILE",
  sslCertFile: "KAFKA_SSL_CERT_FILE",
  sslKeyFile: "KAFKA_SSL_KEY_FILE",
  sslServername: "KAFKA_SSL_SERVERNAME",
  saslMechanism: "KAFKA_SASL_MECHANISM",
  saslUsername: "KAFKA_SASL_USERNAME",
  saslPassword: "KAFKA_SASL_PASSWORD",
  registryUrl: "SCHEMA_REGISTRY_URL",
  registryCaFile: "SCHEMA_REGISTRY_SSL_CA_FILE",
  registryCertFile: "SCHEMA_REGISTRY_SSL_CERT_FILE",
  registryKeyFile: "SCHEMA_REGISTRY_SSL_KEY_FILE",
  registryServername: "SCHEMA_REGISTRY_SSL_SERVERNAME",
  registryUsername: "SCHEMA_REGISTRY_USERNAME",
  registryPassword: "SCHEMA_REGISTRY_PASSWORD",
} as const;

/** Where a value came from: a flag, an environment variable, or the built-in default. */
export type ValueOrigin =
  | { readonly kind: "flag"; readonly flag: string }
  | { readonly kind: "env"; readonly variable: string }
  | { readonly kind: "default"; readonly flag: string; readonly variable: string };

export interface Sourced<T> {
  readonly value: T;
  readonly origin: ValueOrigin;
}

/** "from --brokers", "from KAFKA_BROKERS", "the default (neither --brokers nor KAFKA_BROKERS is set)". */
export function describeOrigin(origin: ValueOrigin): string {
  switch (origin.kind) {
    case "flag":
      return `from ${origin.flag}`;
    case "env":
      return `from ${origin.variable}`;
    case "default":
      return `the default (neither ${origin.flag} nor ${origin.variable} is set)`;
  }
}

/** A variable's trimmed value; unset or blank counts as missing. */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

export function sourced(
  flagValue: string | undefined,
  flag: string,
  env: NodeJS.ProcessEnv,
  variable: string,
  fallback: string,
): Sourced<string> {
  if (flagValue !== undefined && flagValue.trim() !== "")
    return { value: flagValue.trim(), origin: { kind: "flag", flag } };
  const fromEnv = envValue(env, variable);
  if (fromEnv !== undefined) return { value: fromEnv, origin: { kind: "env", variable } };
  return { value: fallback, origin: { kind: "default", flag, variable } };
}

export function originName(origin: ValueOrigin): string {
  return origin.kind === "flag"
    ? origin.flag
    : origin.kind === "env"
      ? origin.variable
      : `${origin.flag} / ${origin.variable}`;
}
