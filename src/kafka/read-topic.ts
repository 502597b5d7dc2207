import { randomUUID } from "node:crypto";
import type { Kafka, KafkaMessage } from "kafkajs";

/**
 * Reads a topic from its beginning to the end it had when the call started, then stops. kafkajs
 * has no manual assignment, so this uses a throwaway consumer group that commits nothing and is
 * deleted afterwards. Used to rebuild state from changelogs, to reconcile results and to audit.
 */
export async function readTopicToEnd(
  kafka: Kafka,
  topic: string,
  onMessage: (message: KafkaMessage, partition: number) => void | Promise<void>,
  options: { idleTimeoutMs?: number } = {},
): Promise<number> {
  return readTopicsFrom(
    kafka,
    new Map([[topic, new Map()]]),
    (message, _topic, partition) => onMessage(message, partition),
    options,
  );
}

/**
 * Reads topics from given offsets (topic → partition → first offset; a partition not named is
 * read from its beginning) to the ends they had when the call started, then stops; a topic with
 * nothing past its offsets is not read at all (no consumer group is formed when none has).
 */
export async function readTopicsFrom(
  kafka: Kafka,
  from: ReadonlyMap<string, ReadonlyMap<number, bigint>>,
  onMessage: (message: KafkaMessage, topic: string, partition: number) => void | Promise<void>,
  options: { idleTimeoutMs?: number } = {},
): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  /** "topic \0 partition" → [first offset to read, end]. */
  const ranges = new Map<string, { readonly start: bigint; readonly end: bigint }>();
  try {
    for (const [topic, starts] of from) {
      for (const partition of await admin.fetchTopicOffsets(topic)) {
        const low = BigInt(partition.low);
        const high = BigInt(partition.high);
        const wanted = starts.get(partition.partition) ?? 0n;
        const start = wanted > low ? wanted : low;
        if (high > start) ranges.set(`${topic}\u0000${String(partition.partition)}`, { start, end: high });
      }
    }
  } finally {
    await admin.disconnect();
  }
  if (ranges.size === 0) return 0;
  const topics = [...new Set([...ranges.keys()].map((name) => name.slice(0, name.indexOf("\u0000"))))];

  const groupId = `agentops-reader-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, sessionTimeout: 30_000, maxWaitTimeInMs: 250 });
  let read = 0;
  const remaining = new Set(ranges.keys());
  await consumer.connect();
  try {
    for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const idleTimeoutMs = options.idleTimeoutMs ?? 120_000;
      const noProgress = (): void =>
        reject(new Error(`reading ${topics.join(", ")}: no progress for ${idleTimeoutMs} ms`));
      let idle = setTimeout(noProgress, idleTimeoutMs);
      const progressed = (): void => {
        clearTimeout(idle);
        idle = setTimeout(noProgress, idleTimeoutMs);
      };
      const reached = (name: string): void => {
        remaining.delete(name);
        if (remaining.size > 0) return;
        clearTimeout(idle);
        resolve();
      };
      // A range whose last records compaction removed (a tombstone past delete.retention.ms) ends
      // without a record at end - 1: the consumer moving past it (a batch resolved without records,
      // kafkajs-compacted-batches.ts) ends it too.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        if (remaining.size === 0) return;
        progressed();
        const name = `${payload.topic}\u0000${String(payload.partition)}`;
        const range = ranges.get(name);
        if (range !== undefined && BigInt(payload.lastOffset) + 1n >= range.end) reached(name);
      });
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            progressed();
            const name = `${batch.topic}\u0000${String(batch.partition)}`;
            const range = ranges.get(name);
            for (const message of batch.messages) {
              const offset = BigInt(message.offset);
              if (range === undefined || offset >= range.end) break;
              // A batch fetched before the seek below took effect starts earlier: skip to the range.
              if (offset < range.start) continue;
              await onMessage(message, batch.topic, batch.partition);
              read += 1;
              if (offset + 1n >= range.end) reached(name);
            }
          },
        })
        .then(() => {
          for (const [name, range] of ranges) {
            if (range.start === 0n) continue;
            const separator = name.indexOf("\u0000");
            consumer.seek({
              topic: name.slice(0, separator),
              partition: Number(name.slice(separator + 1)),
              offset: range.start.toString(),
            });
          }
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
    return (await admin.fetchTopicOffsets(topic)).reduce(
      (total, partition) => total + Number(partition.high) - Number(partition.low),
      0,
    );
  } finally {
    await admin.disconnect();
  }
}
