import { replaceKafkajsModule } from "./kafkajs-module-cache.ts";

/**
 * kafkajs 2.2.4 groups a send's messages by partition with `[...current, message]` for every
 * message (src/producer/groupMessagesPerPartition.js), so a request of n messages to one partition
 * copies n²/2 array elements, and the engine sends its contributions changelog in requests of
 * about 1,600 records (bench/RESULTS.md has the profile). The fix proposed upstream (tulios/kafkajs#1576, never merged)
 * is the same function in one pass; this module puts it in kafkajs' module cache before kafkajs
 * is loaded, so its producer requires this one. Same result: the messages of each partition in
 * their order, keyed by partition.
 */

interface GroupingInput<M> {
  readonly topic: string;
  readonly partitionMetadata: readonly unknown[];
  readonly messages: readonly M[];
  readonly partitioner: (args: { topic: string; partitionMetadata: readonly unknown[]; message: M }) => number;
}

export function groupMessagesPerPartition<M>({
  topic,
  partitionMetadata,
  messages,
  partitioner,
}: GroupingInput<M>): Record<number, M[]> {
  const grouped: Record<number, M[]> = {};
  if (partitionMetadata.length === 0) return grouped;
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message });
    const current = grouped[partition];
    if (current === undefined) grouped[partition] = [message];
    else current.push(message);
  }
  return grouped;
}

/** kafkajs' grouping module, which this replaces. */
export const GROUPING_MODULE = "src/producer/groupMessagesPerPartition.js";

/**
 * True when kafkajs' producer will use this grouping: the installed kafkajs is the version it
 * replaces, and its producer was not loaded before (it keeps the function it required first).
 */
export const groupingPatched: boolean = replaceKafkajsModule(GROUPING_MODULE, groupMessagesPerPartition, [
  "src/producer/sendMessages.js",
]);
