import { randomUUID } from "node:crypto";
import type { Kafka, KafkaMessage } from "kafkajs";

/**
 * Reads a topic from its beginning to the end it had when the call started, then stops. kafkajs
 * has no manual assignment, so this uses a throwaway consumer group that commits nothing and is
 * deleted afterwards. Used to rebuild state from changelogs, to reconcile results and to audit.
 */
export async function readTopicToEnd(kafka: Kafka, topic: string, onMessage: (message: KafkaMessage, partition: number) => void | Promise<void>, options: { idleTimeoutMs?: number } = {}): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, bigint>();
  try {
    for (const partition of await admin.fetchTopicOffsets(topic)) {
      const low = BigInt(partition.low);
      const high = BigInt(partition.high);
      if (high > low) ends.set(partition.partition, high);
    }
  } finally {
    await admin.disconnect();
  }
  if (ends.size === 0) return 0;

  const groupId = `agentops-reader-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, sessionTimeout: 30_000, maxWaitTimeInMs: 250 });
  let read = 0;
  const remaining = new Set(ends.keys());
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const idleTimeoutMs = options.idleTimeoutMs ?? 120_000;
      let idle = setTimeout(() => reject(new Error(`reading ${topic}: no progress for ${idleTimeoutMs} ms`)), idleTimeoutMs);
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            clearTimeout(idle);
            idle = setTimeout(() => reject(new Error(`reading ${topic}: no progress for ${idleTimeoutMs} ms`)), idleTimeoutMs);
            const end = ends.get(batch.partition);
            for (const message of batch.messages) {
              if (end === undefined || BigInt(message.offset) >= end) break;
              await onMessage(message, batch.partition);
              read += 1;
              if (BigInt(message.offset) + 1n >= end) remaining.delete(batch.partition);
            }
            if (remaining.size === 0) {
              clearTimeout(idle);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
    const cleanup = kafka.admin();
    await cleanup.connect();
    await cleanup.deleteGroups([groupId]).catch(() => undefined);
    await cleanup.disconnect();
  }
  return read;
}

/** Records a topic holds now (high minus low watermark, summed over its partitions). */
export async function topicRecordCount(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((total, partition) => total + Number(partition.high) - Number(partition.low), 0);
  } finally {
    await admin.disconnect();
  }
}
