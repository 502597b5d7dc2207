import type { Kafka as KafkaClient, KafkaConfig, logLevel as LogLevel, SASLOptions } from "kafkajs";
import type { Logger } from "pino";
import { Kafka, logLevel } from "./kafkajs.ts";
import { pinoLogCreator } from "./logging.ts";

/** Where the broker is when nobody says otherwise: the one `npm run services:up` starts. */
export const DEFAULT_BROKERS = "127.0.0.1:19092";

/** Brokers from a flag value, else KAFKA_BROKERS, else the local default; comma-separated. */
export function resolveBrokers(flag?: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = flag ?? env["KAFKA_BROKERS"] ?? DEFAULT_BROKERS;
  return raw
    .split(",")
    .map((broker) => broker.trim())
    .filter((broker) => broker !== "");
}

export interface KafkaClientOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** When given, kafkajs logs go to it (at WARN and above); otherwise kafkajs stays silent. */
  readonly logger?: Logger;
  readonly connectionTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

/**
 * TLS and SASL for a user's own cluster, from the environment only (never flags, so secrets stay
 * out of shell history and process listings; never logged): KAFKA_SSL=true, KAFKA_SASL_MECHANISM
 * (plain | scram-sha-256 | scram-sha-512), KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD.
 */
export function securityFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<KafkaConfig, "ssl" | "sasl"> {
  const ssl = env["KAFKA_SSL"] === "true" || env["KAFKA_SSL"] === "1";
  const mechanism = env["KAFKA_SASL_MECHANISM"]?.toLowerCase();
  if (mechanism === undefined || mechanism === "") return ssl ? { ssl: true } : {};
  if (mechanism !== "plain" && mechanism !== "scram-sha-256" && mechanism !== "scram-sha-512") {
    throw new Error(`KAFKA_SASL_MECHANISM: "${mechanism}" is not supported. Fix: use plain, scram-sha-256 or scram-sha-512`);
  }
  const username = env["KAFKA_SASL_USERNAME"] ?? "";
  const password = env["KAFKA_SASL_PASSWORD"] ?? "";
  if (username === "" || password === "") throw new Error("KAFKA_SASL_USERNAME / KAFKA_SASL_PASSWORD: both are required with KAFKA_SASL_MECHANISM. Fix: set both in the environment");
  // The mechanism was checked above; kafkajs types each mechanism as its own union member.
  return { ssl, sasl: { mechanism, username, password } as SASLOptions };
}

export function createKafka(options: KafkaClientOptions): KafkaClient {
  const level: LogLevel = options.logger === undefined ? logLevel.NOTHING : logLevel.WARN;
  return new Kafka({
    ...securityFromEnv(),
    clientId: options.clientId,
    brokers: [...options.brokers],
    logLevel: level,
    ...(options.logger === undefined ? {} : { logCreator: pinoLogCreator(options.logger) }),
    connectionTimeout: options.connectionTimeoutMs ?? 5_000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    retry: { retries: 5, initialRetryTime: 200 },
  });
}
