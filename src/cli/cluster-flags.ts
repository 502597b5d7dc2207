import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import type { Kafka } from "kafkajs";
import { AvroTopicSerde } from "../kafka/serde/avro-serde.ts";
import { createKafka } from "../kafka/client.ts";
import { classifyConnectionError, classifyKafkaError } from "../kafka/connection-errors.ts";
import {
  resolveConnectionSettings,
  resolveKafkaConnection,
  type ConnectionSettings,
  type KafkaConnection,
} from "../kafka/connection-settings.ts";
import { checkRegistry } from "../kafka/registry-check.ts";
import { createSchemaRegistry } from "../kafka/registry.ts";
import { topicNames, type TopicNames } from "../stream/topic-names.ts";
import { stringFlag, type ParsedFlags } from "./flags.ts";

/** Defined beside the flag parser, so that a command can parse them without loading a Kafka client. */
export { CLUSTER_FLAGS } from "./flags.ts";

export interface ClusterClients {
  readonly kafka: Kafka;
  readonly registry: SchemaRegistry;
  readonly serde: AvroTopicSerde;
  readonly topics: TopicNames;
  readonly settings: ConnectionSettings;
}

/** Turns a client error into a ConnectionFailure when it is one (unreachable, refused, untrusted...). */
async function classified<T>(settings: ConnectionSettings, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw classifyConnectionError(error, settings) ?? error;
  }
}

/**
 * Kafka, the registry and topic names from --brokers / --schema-registry / --topic-prefix or the
 * environment, for a command that keeps them for its whole life (the OTLP receiver, the hook). A
 * bad or partial connection setting throws a ConfigError before anything connects, and the
 * registry is checked first (reachable, credentials accepted, a Confluent-compatible root).
 */
export async function connectCluster(flags: ParsedFlags, clientId: string): Promise<ClusterClients> {
  const settings = resolveConnectionSettings({
    brokers: stringFlag(flags, "brokers"),
    schemaRegistry: stringFlag(flags, "schema-registry"),
  });
  const kafka = createKafka({ brokers: settings.kafka.brokers.value, clientId, security: settings.kafka });
  const registry = createSchemaRegistry(settings.registry);
  const topics = topicNames(stringFlag(flags, "topic-prefix") ?? process.env["AGENTOPS_TOPIC_PREFIX"] ?? "");
  await checkRegistry(settings.registry);
  return { kafka, registry, serde: new AvroTopicSerde(registry), topics, settings };
}

/**
 * Runs a command's work with the clients of `connectCluster`; any connection problem on the way
 * becomes a ConnectionFailure that the CLI prints with the address, its origin and the fix.
 */
export async function withCluster<T>(
  flags: ParsedFlags,
  clientId: string,
  work: (clients: ClusterClients) => Promise<T>,
): Promise<T> {
  const clients = await connectCluster(flags, clientId);
  return classified(clients.settings, () => work(clients));
}

/** The same for a command that needs Kafka only (`topics`): the registry is neither resolved nor checked. */
export async function withKafka<T>(
  flags: ParsedFlags,
  clientId: string,
  work: (kafka: Kafka, connection: KafkaConnection) => Promise<T>,
  connectionTimeoutMs?: number,
): Promise<T> {
  const connection = resolveKafkaConnection(stringFlag(flags, "brokers"));
  const kafka = createKafka({
    brokers: connection.brokers.value,
    clientId,
    security: connection,
    ...(connectionTimeoutMs === undefined ? {} : { connectionTimeoutMs }),
  });
  try {
    return await work(kafka, connection);
  } catch (error) {
    throw classifyKafkaError(error, connection) ?? error;
  }
}
