import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import type { Kafka } from "kafkajs";
import { AvroTopicSerde } from "../kafka/serde/avro-serde.ts";
import { createKafka, resolveBrokers } from "../kafka/client.ts";
import { createSchemaRegistry, resolveSchemaRegistryUrl } from "../kafka/registry.ts";
import { topicNames, type TopicNames } from "../stream/topic-names.ts";
import { stringFlag, type ParsedFlags } from "./flags.ts";

/** The flags every cluster-facing command shares (each also has an environment variable). */
export const CLUSTER_FLAGS = { brokers: { type: "string" }, "schema-registry": { type: "string" }, "topic-prefix": { type: "string" } } as const;

export interface ClusterClients {
  readonly kafka: Kafka;
  readonly registry: SchemaRegistry;
  readonly serde: AvroTopicSerde;
  readonly topics: TopicNames;
}

/** Kafka, registry and topic names from --brokers / --schema-registry / --topic-prefix or the environment. */
export function clusterClients(flags: ParsedFlags, clientId: string): ClusterClients {
  const kafka = createKafka({ brokers: resolveBrokers(stringFlag(flags, "brokers")), clientId });
  const registry = createSchemaRegistry(resolveSchemaRegistryUrl(stringFlag(flags, "schema-registry")));
  const topics = topicNames(stringFlag(flags, "topic-prefix") ?? process.env["AGENTOPS_TOPIC_PREFIX"] ?? "");
  return { kafka, registry, serde: new AvroTopicSerde(registry), topics };
}
