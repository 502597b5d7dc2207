import type { Message, Producer, TopicMessages } from "kafkajs";

/**
 * The broker refuses a record batch larger than `message.max.bytes` (1 MiB by default) with a
 * non-retriable MESSAGE_TOO_LARGE, and kafkajs puts all of one request's messages for a
 * partition into one record batch. A processor's outputs for one fetched batch can exceed that
 * (a 1 MiB fetch of Avro facts becomes more than 1 MiB of JSON engine facts), so they are sent
 * in consecutive requests of at most `maxBytes`; one producer with one request in flight keeps
 * their order per partition.
 */
export const DEFAULT_MAX_REQUEST_BYTES = 512 * 1024;

/** Per-record overhead in a v2 record batch (varints, headers, attributes): a safe estimate. */
const RECORD_OVERHEAD_BYTES = 64;

function sizeOf(message: Message): number {
  const length = (value: Message["key"] | Message["value"]): number =>
    value === null || value === undefined ? 0 : typeof value === "string" ? Buffer.byteLength(value) : value.length;
  return length(message.key) + length(message.value) + RECORD_OVERHEAD_BYTES;
}

export async function sendBounded(
  producer: Producer,
  topicMessages: readonly TopicMessages[],
  maxBytes = DEFAULT_MAX_REQUEST_BYTES,
): Promise<void> {
  let request: TopicMessages[] = [];
  let bytes = 0;
  const flush = async (): Promise<void> => {
    if (request.length > 0) await producer.sendBatch({ topicMessages: request });
    request = [];
    bytes = 0;
  };
  for (const { topic, messages } of topicMessages) {
    let current: Message[] = [];
    for (const message of messages) {
      const size = sizeOf(message);
      if (bytes + size > maxBytes && bytes > 0) {
        if (current.length > 0) request.push({ topic, messages: current });
        current = [];
        await flush();
      }
      current.push(message);
      bytes += size;
    }
    if (current.length > 0) request.push({ topic, messages: current });
  }
  await flush();
}
