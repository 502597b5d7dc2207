import { randomUUID } from "node:crypto";
import type { Kafka, KafkaMessage } from "kafkajs";

/**
 * Follows a topic from its beginning, live, until SIGINT/SIGTERM: for `results --follow` and
 * `alerts --follow`. Uses a throwaway consumer group that commits nothing.
 */
export async function followTopic(
  kafka: Kafka,
  topic: string,
  onMessage: (message: KafkaMessage) => Promise<void>,
): Promise<void> {
  const consumer = kafka.consumer({ groupId: `agentops-follow-${randomUUID()}`, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ autoCommit: false, eachMessage: async ({ message }) => onMessage(message) });
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await consumer.disconnect();
}
