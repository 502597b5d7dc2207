import type { Kafka as KafkaClient, logLevel as LogLevel } from "kafkajs";
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

export function createKafka(options: KafkaClientOptions): KafkaClient {
  const level: LogLevel = options.logger === undefined ? logLevel.NOTHING : logLevel.WARN;
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    logLevel: level,
    ...(options.logger === undefined ? {} : { logCreator: pinoLogCreator(options.logger) }),
    connectionTimeout: options.connectionTimeoutMs ?? 5_000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    retry: { retries: 5, initialRetryTime: 200 },
  });
}
