import { randomBytes } from "node:crypto";

/**
 * Kafka's default partitioner for keyed records: `toPositive(murmur2(utf8(key))) % partitions`
 * (Java client `Utils.murmur2`, kafkajs `partitioners/default/murmur2`). The partitioned engine
 * places its keys with it, so a stage keyed in process lands on the partition a Kafka producer
 * would pick for the same key. 32-bit arithmetic throughout (`Math.imul`), as Java's int.
 */
export function partitionOf(key: string, partitions: number): number {
  if (partitions === 1) return 0;
  return (murmur2(Buffer.from(key, "utf8")) & 0x7fffffff) % partitions;
}

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length - (length % 4);
  for (let i = 0; i < whole; i += 4) {
    let k =
      (data[i] as number) |
      ((data[i + 1] as number) << 8) |
      ((data[i + 2] as number) << 16) |
      ((data[i + 3] as number) << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const rest = length % 4;
  if (rest === 3) h ^= (data[whole + 2] as number) << 16;
  if (rest >= 2) h ^= (data[whole + 1] as number) << 8;
  if (rest >= 1) {
    h ^= data[whole] as number;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** What kafkajs passes a producer's partitioner for each message. */
interface PartitionerArgs {
  readonly topic: string;
  readonly partitionMetadata: readonly { readonly partitionId: number; readonly leader: number }[];
  readonly message: { readonly partition?: number | null; readonly key?: Buffer | string | null };
}

/**
 * kafkajs' DefaultPartitioner (Java-compatible) with this module's murmur2, for `createPartitioner`:
 * the message's partition if it names one, else the key's hash, else round robin over the partitions
 * with a leader. kafkajs hashes with 64-bit Long objects, a dozen allocations per key byte, and
 * lists the available partitions for every message; the choices are the same.
 */
export function keyHashPartitioner(): (args: PartitionerArgs) => number {
  const counters = new Map<string, number>();
  return ({ topic, partitionMetadata, message }) => {
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    const count = partitionMetadata.length;
    const { key } = message;
    if (key !== null && key !== undefined) {
      const bytes = Buffer.isBuffer(key) ? key : Buffer.from(String(key), "utf8");
      return (murmur2(bytes) & 0x7fffffff) % count;
    }
    const counter = (counters.get(topic) ?? randomBytes(4).readUInt32BE(0)) + 1;
    counters.set(topic, counter);
    const available = partitionMetadata.filter((partition) => partition.leader >= 0);
    if (available.length > 0)
      return (available[(counter & 0x7fffffff) % available.length] as { partitionId: number }).partitionId;
    return (counter & 0x7fffffff) % count;
  };
}
