import { Agent as HttpsAgent } from "node:https";
import type { KafkaConfig, SASLOptions } from "kafkajs";
import { ConfigError } from "../errors.ts";
import { resolveBrokers, resolveSchemaRegistryUrl } from "./connection-addresses.ts";
import { ENV, envValue, originName, type Sourced } from "./connection-sources.ts";
import { givenTls, KAFKA_TLS, readTls, REGISTRY_TLS, tlsOptions, type TlsSettings } from "./tls-settings.ts";

/**
 * Where the broker and the registry are, and how to reach them securely: resolved once from flags,
 * the environment and defaults, each value with the origin it came from (so a failure can say
 * "127.0.0.1:19092, the default: neither --brokers nor KAFKA_BROKERS is set"). Security comes from
 * the environment only (never flags, so secrets stay out of shell history and process listings),
 * TLS material from files (never inline), and nothing secret is ever part of an error message.
 * Any partial or contradictory security setting is a ConfigError naming the variable to set.
 */

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

/** The HTTPS agent for a registry with TLS settings; undefined for plain http or system trust only. */
export function registryHttpsAgent(connection: RegistryConnection): HttpsAgent | undefined {
  if (connection.tls === undefined || Object.keys(connection.tls.given).length === 0) return undefined;
  return new HttpsAgent({ ...tlsOptions(connection.tls), keepAlive: true });
}
