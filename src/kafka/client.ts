import type { Kafka as KafkaClient, logLevel as LogLevel, Producer, ProducerConfig } from "kafkajs";
import type { Logger } from "pino";
import { kafkaSecurityOptions, resolveKafkaSecurity, type KafkaConnection } from "./connection-settings.ts";
import { keyHashPartitioner } from "./key-partitioner.ts";
import { Kafka, logLevel } from "./kafkajs.ts";
import { pinoLogCreator } from "./logging.ts";

export interface KafkaClientOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /**
   * TLS and SASL (src/kafka/connection-settings.ts); when omitted, resolved from the environment
   * (KAFKA_SSL*, KAFKA_SASL_*), which throws a ConfigError on a partial setting.
   */
  readonly security?: Pick<KafkaConnection, "tls" | "sasl">;
  /** When given, kafkajs logs go to it (at WARN and above); otherwise kafkajs stays silent. */
  readonly logger?: Logger;
  readonly connectionTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

export function createKafka(options: KafkaClientOptions): KafkaClient {
  const level: LogLevel = options.logger === undefined ? logLevel.NOTHING : logLevel.WARN;
  return new Kafka({
    ...kafkaSecurityOptions(options.security ?? resolveKafkaSecurity()),
    clientId: options.clientId,
    brokers: [...options.brokers],
    logLevel: level,
    ...(options.logger === undefined ? {} : { logCreator: pinoLogCreator(options.logger) }),
    connectionTimeout: options.connectionTimeoutMs ?? 5_000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    retry: { retries: 5, initialRetryTime: 200 },
  });
}

/**
 * An idempotent producer with one request in flight (each partition's records land in order), as
 * every writer here uses, partitioning keys as Kafka's Java producer does (key-partitioner.ts).
 */
export function orderedProducer(
  kafka: KafkaClient,
  options: Omit<ProducerConfig, "idempotent" | "maxInFlightRequests" | "createPartitioner"> = {},
): Producer {
  return kafka.producer({
    ...options,
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: keyHashPartitioner,
  });
}
