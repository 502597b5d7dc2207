import { readFileSync } from "node:fs";
import { Agent as HttpsAgent } from "node:https";
import type { KafkaConfig, SASLOptions } from "kafkajs";
import { ConfigError } from "../errors.ts";

/**
 * Where the broker and the registry are, and how to reach them securely: resolved once from flags,
 * the environment and defaults, each value with the origin it came from (so a failure can say
 * "127.0.0.1:19092, the default: neither --brokers nor KAFKA_BROKERS is set"). Security comes from
 * the environment only (never flags, so secrets stay out of shell history and process listings),
 * TLS material from files (never inline), and nothing secret is ever part of an error message.
 * Any partial or contradictory security setting is a ConfigError naming the variable to set.
 */

/** Where the broker is when nobody says otherwise: the one `npm run services:up` starts. */
export const DEFAULT_BROKERS = "127.0.0.1:19092";

/**
 * The Confluent-compatible API root when nobody says otherwise: Apicurio serves it under
 * /apis/ccompat/v7. A Confluent Schema Registry's root URL works the same way.
 */
export const DEFAULT_SCHEMA_REGISTRY_URL = "http://127.0.0.1:18081/apis/ccompat/v7";

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

/** TLS settings read from files: the CA that signs the server, and a client certificate and key for mutual TLS. */
export interface TlsSettings {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly servername?: string;
  /** The variables that were set, for messages ("KAFKA_SSL_CA_FILE=/etc/ca.pem"). File paths are not secret. */
  readonly given: Readonly<Record<string, string>>;
}

export type SaslMechanism = "plain" | "scram-sha-256" | "scram-sha-512";

export interface SaslSettings {
  readonly mechanism: SaslMechanism;
  readonly username: string;
  readonly password: string;
}

export interface KafkaConnection {
  readonly brokers: Sourced<readonly string[]>;
  /** Undefined: plaintext. */
  readonly tls: TlsSettings | undefined;
  readonly sasl: SaslSettings | undefined;
}

export interface RegistryConnection {
  readonly url: Sourced<string>;
  readonly tls: TlsSettings | undefined;
  readonly auth: { readonly username: string; readonly password: string } | undefined;
}

export interface ConnectionSettings {
  readonly kafka: KafkaConnection;
  readonly registry: RegistryConnection;
}

export interface ConnectionFlags {
  readonly brokers?: string | undefined;
  readonly schemaRegistry?: string | undefined;
}

function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

function sourced(
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

function originName(origin: ValueOrigin): string {
  return origin.kind === "flag"
    ? origin.flag
    : origin.kind === "env"
      ? origin.variable
      : `${origin.flag} / ${origin.variable}`;
}

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

/** Reads a PEM file named by a variable; a missing, unreadable or non-PEM file names the variable. */
function pemFile(env: NodeJS.ProcessEnv, variable: string, expect: "certificate" | "private key"): Buffer | undefined {
  const path = envValue(env, variable);
  if (path === undefined) return undefined;
  let contents: Buffer;
  try {
    contents = readFileSync(path);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new ConfigError({
      field: variable,
      problem: `cannot read "${path}" (${reason})`,
      fix: `give the path of a readable PEM ${expect} file`,
    });
  }
  const text = contents.toString("latin1");
  if (expect === "private key" && text.includes("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
    throw new ConfigError({
      field: variable,
      problem: `"${path}" is an encrypted private key`,
      fix:
        "give an unencrypted PEM key kept readable only by this user (openssl pkey -in key.pem -out plain-key.pem); " +
        "no passphrase setting is offered, so none ends up in the environment",
    });
  }
  const marker = expect === "certificate" ? /-----BEGIN CERTIFICATE-----/ : /-----BEGIN (?:RSA |EC )?PRIVATE KEY-----/;
  if (!marker.test(text))
    throw new ConfigError({
      field: variable,
      problem: `"${path}" holds no PEM ${expect}`,
      fix:
        `give a PEM file (-----BEGIN ${expect === "certificate" ? "CERTIFICATE" : "PRIVATE KEY"}-----); ` +
        `convert a PKCS#12/JKS store with openssl or keytool first`,
    });
  return contents;
}

interface TlsVariables {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  readonly servername: string;
}

/** The TLS variables that are set, by name (file paths and a server name: nothing secret). */
function givenTls(env: NodeJS.ProcessEnv, names: TlsVariables): Record<string, string> {
  const given: Record<string, string> = {};
  for (const name of [names.ca, names.cert, names.key, names.servername]) {
    const value = envValue(env, name);
    if (value !== undefined) given[name] = value;
  }
  return given;
}

function readTls(env: NodeJS.ProcessEnv, names: TlsVariables): TlsSettings {
  const given = givenTls(env, names);
  const hasCert = given[names.cert] !== undefined;
  const hasKey = given[names.key] !== undefined;
  if (hasCert && !hasKey)
    throw new ConfigError({
      field: names.key,
      problem: `is not set, but ${names.cert} is (mutual TLS needs both)`,
      fix: `set ${names.key} to the PEM file of the client certificate's private key, or unset ${names.cert}`,
    });
  if (hasKey && !hasCert)
    throw new ConfigError({
      field: names.cert,
      problem: `is not set, but ${names.key} is (mutual TLS needs both)`,
      fix: `set ${names.cert} to the PEM file of the client certificate, or unset ${names.key}`,
    });
  const ca = pemFile(env, names.ca, "certificate");
  const cert = pemFile(env, names.cert, "certificate");
  const key = pemFile(env, names.key, "private key");
  const servername = given[names.servername];
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(servername === undefined ? {} : { servername }),
    given,
  };
}

const KAFKA_TLS: TlsVariables = {
  ca: ENV.sslCaFile,
  cert: ENV.sslCertFile,
  key: ENV.sslKeyFile,
  servername: ENV.sslServername,
};
const REGISTRY_TLS: TlsVariables = {
  ca: ENV.registryCaFile,
  cert: ENV.registryCertFile,
  key: ENV.registryKeyFile,
  servername: ENV.registryServername,
};

function kafkaTls(env: NodeJS.ProcessEnv): TlsSettings | undefined {
  const raw = envValue(env, ENV.ssl)?.toLowerCase();
  if (raw !== undefined && !["true", "1", "false", "0"].includes(raw)) {
    throw new ConfigError({
      field: ENV.ssl,
      problem: `"${raw}" is neither true nor false`,
      fix: `set ${ENV.ssl}=true for a TLS (SSL or SASL_SSL) listener, or unset it for plaintext`,
    });
  }
  const enabled = raw === "true" || raw === "1";
  const given = Object.keys(givenTls(env, KAFKA_TLS));
  if (!enabled && given.length > 0) {
    throw new ConfigError({
      field: ENV.ssl,
      problem: `is not true, but ${given.join(", ")} ${given.length === 1 ? "is" : "are"} set`,
      fix: `set ${ENV.ssl}=true to connect with TLS, or unset ${given.join(" and ")}`,
    });
  }
  return enabled ? readTls(env, KAFKA_TLS) : undefined;
}

const MECHANISMS: readonly SaslMechanism[] = ["plain", "scram-sha-256", "scram-sha-512"];

function kafkaSasl(env: NodeJS.ProcessEnv): SaslSettings | undefined {
  const mechanism = envValue(env, ENV.saslMechanism)?.toLowerCase();
  const username = envValue(env, ENV.saslUsername);
  // A password is taken verbatim (spaces may be part of it); only "unset or empty" counts as missing.
  const password = env[ENV.saslPassword] === "" ? undefined : env[ENV.saslPassword];
  if (mechanism === undefined) {
    const set = [
      username === undefined ? undefined : ENV.saslUsername,
      password === undefined ? undefined : ENV.saslPassword,
    ].filter((name) => name !== undefined);
    if (set.length > 0)
      throw new ConfigError({
        field: ENV.saslMechanism,
        problem: `is not set, but ${set.join(" and ")} ${set.length === 1 ? "is" : "are"} (credentials without a mechanism would be dropped)`,
        fix: `set ${ENV.saslMechanism} to the broker's mechanism: scram-sha-512, scram-sha-256 or plain`,
      });
    return undefined;
  }
  if (!(MECHANISMS as readonly string[]).includes(mechanism)) {
    throw new ConfigError({
      field: ENV.saslMechanism,
      problem: `"${mechanism}" is not supported`,
      fix: "use scram-sha-512, scram-sha-256 or plain",
    });
  }
  if (username === undefined)
    throw new ConfigError({
      field: ENV.saslUsername,
      problem: `is not set, but ${ENV.saslMechanism} is`,
      fix: `set ${ENV.saslUsername} (and ${ENV.saslPassword}) to the SASL user's name`,
    });
  if (password === undefined)
    throw new ConfigError({
      field: ENV.saslPassword,
      problem: `is not set, but ${ENV.saslMechanism} is`,
      fix: `set ${ENV.saslPassword} to the password of ${ENV.saslUsername}`,
    });
  return { mechanism: mechanism as SaslMechanism, username, password };
}

/** Kafka's TLS and SASL settings from the environment; throws ConfigError on any partial or bad one. */
export function resolveKafkaSecurity(env: NodeJS.ProcessEnv = process.env): Pick<KafkaConnection, "tls" | "sasl"> {
  return { tls: kafkaTls(env), sasl: kafkaSasl(env) };
}

/** Brokers and Kafka security; throws ConfigError on any bad, partial or contradictory setting. */
export function resolveKafkaConnection(
  brokersFlag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): KafkaConnection {
  return { brokers: resolveBrokers(brokersFlag, env), ...resolveKafkaSecurity(env) };
}

/** Registry URL, TLS and basic auth; throws ConfigError on any bad, partial or contradictory setting. */
export function resolveRegistryConnection(
  urlFlag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): RegistryConnection {
  const url = resolveSchemaRegistryUrl(urlFlag, env);
  const tlsGiven = Object.keys(givenTls(env, REGISTRY_TLS));
  const https = url.value.startsWith("https:");
  if (!https && tlsGiven.length > 0) {
    throw new ConfigError({
      field: originName(url.origin),
      problem: `"${url.value}" is plain http, but ${tlsGiven.join(", ")} ${tlsGiven.length === 1 ? "is" : "are"} set`,
      fix: `give the registry's https:// URL, or unset ${tlsGiven.join(" and ")}`,
    });
  }
  const username = envValue(env, ENV.registryUsername);
  const password = env[ENV.registryPassword] === "" ? undefined : env[ENV.registryPassword];
  if (username !== undefined && password === undefined)
    throw new ConfigError({
      field: ENV.registryPassword,
      problem: `is not set, but ${ENV.registryUsername} is`,
      fix: `set ${ENV.registryPassword} to the registry user's password (basic auth)`,
    });
  if (username === undefined && password !== undefined)
    throw new ConfigError({
      field: ENV.registryUsername,
      problem: `is not set, but ${ENV.registryPassword} is`,
      fix: `set ${ENV.registryUsername} to the registry user's name (basic auth)`,
    });
  return {
    url,
    tls: https ? readTls(env, REGISTRY_TLS) : undefined,
    auth: username === undefined || password === undefined ? undefined : { username, password },
  };
}

export function resolveConnectionSettings(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
): ConnectionSettings {
  return {
    kafka: resolveKafkaConnection(flags.brokers, env),
    registry: resolveRegistryConnection(flags.schemaRegistry, env),
  };
}

/** The kafkajs `ssl` and `sasl` options of a resolved connection. */
export function kafkaSecurityOptions(
  connection: Pick<KafkaConnection, "tls" | "sasl">,
): Pick<KafkaConfig, "ssl" | "sasl"> {
  const { tls, sasl } = connection;
  const ssl = tls === undefined ? {} : { ssl: Object.keys(tls.given).length === 0 ? true : tlsOptions(tls) };
  // The mechanism was checked when resolving; kafkajs types each mechanism as its own union member.
  return sasl === undefined
    ? ssl
    : { ...ssl, sasl: { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } as SASLOptions };
}

function tlsOptions(tls: TlsSettings): { ca?: Buffer[]; cert?: Buffer; key?: Buffer; servername?: string } {
  return {
    ...(tls.ca === undefined ? {} : { ca: [tls.ca] }),
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key }),
    ...(tls.servername === undefined ? {} : { servername: tls.servername }),
  };
}

/** The HTTPS agent for a registry with TLS settings; undefined for plain http or system trust only. */
export function registryHttpsAgent(connection: RegistryConnection): HttpsAgent | undefined {
  if (connection.tls === undefined || Object.keys(connection.tls.given).length === 0) return undefined;
  return new HttpsAgent({ ...tlsOptions(connection.tls), keepAlive: true });
}
