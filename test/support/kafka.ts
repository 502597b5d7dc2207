import { randomBytes } from "node:crypto";
import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import type { Admin, Consumer, ITopicConfig, KafkaMessage, Kafka, Producer, ProducerConfig } from "kafkajs";
import { inject } from "vitest";
import { createKafka } from "../../src/kafka/client.ts";
import { createSchemaRegistry } from "../../src/kafka/registry.ts";
import { createTopicsWithLeaders } from "../../src/kafka/topic-admin.ts";
import "./provided-context.ts";

/** The broker list and registry URL that the integration globalSetup found or started. */
export function serviceEndpoints(): { brokers: string[]; registryUrl: string } {
  const brokers = inject("kafkaBrokers");
  const registryUrl = inject("schemaRegistryUrl");
  if (brokers === undefined || registryUrl === undefined) {
    throw new Error(
      "no services provided: run this file in the `integration` vitest project (its globalSetup starts Kafka and the registry)",
    );
  }
  return { brokers: brokers.split(","), registryUrl };
}

/**
 * A topic or subject name no other test (or earlier run against a kept broker) has used, so
 * tests never see each other's records.
 */
export function uniqueName(prefix: string): string {
  return `${prefix}.${Date.now().toString(36)}.${randomBytes(4).toString("hex")}`;
}

export function testKafka(clientId = uniqueName("test-client")): Kafka {
  return createKafka({ brokers: serviceEndpoints().brokers, clientId });
}

/** Every client opened through this helper; `closeAll()` in afterAll disconnects them. */
const openClients: Array<{ disconnect(): Promise<void> }> = [];

export async function connectedAdmin(kafka: Kafka = testKafka()): Promise<Admin> {
  const admin = kafka.admin();
  await admin.connect();
  openClients.push(admin);
  return admin;
}

export async function connectedProducer(kafka: Kafka = testKafka(), config: ProducerConfig = {}): Promise<Producer> {
  const producer = kafka.producer({ allowAutoTopicCreation: false, ...config });
  await producer.connect();
  openClients.push(producer);
  return producer;
}

export async function connectedConsumer(
  kafka: Kafka = testKafka(),
  groupId = uniqueName("test-group"),
): Promise<Consumer> {
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
  await consumer.connect();
  openClients.push(consumer);
  return consumer;
}

export async function closeAll(): Promise<void> {
  const clients = openClients.splice(0);
  await Promise.allSettled(clients.map((client) => client.disconnect()));
}

export function testRegistry(): SchemaRegistry {
  return createSchemaRegistry(serviceEndpoints().registryUrl);
}

/** Creates a fresh topic and waits for its leaders; returns its name. */
export async function createTestTopic(
  admin: Admin,
  prefix = "test",
  options: Partial<Omit<ITopicConfig, "topic">> = {},
): Promise<string> {
  const topic = uniqueName(prefix);
  await createTopicsWithLeaders(admin, [{ topic, numPartitions: 1, ...options }]);
  return topic;
}

/** Reads `count` messages of `topic` from the beginning, or fails after `timeoutMs`. */
export async function consumeMessages(topic: string, count: number, timeoutMs = 60_000): Promise<KafkaMessage[]> {
  const consumer = await connectedConsumer();
  await consumer.subscribe({ topic, fromBeginning: true });
  const received: KafkaMessage[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`received ${received.length} of ${count} messages from ${topic} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      consumer
        .run({
          eachMessage: async ({ message }) => {
            received.push(message);
            if (received.length >= count) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return received;
}
