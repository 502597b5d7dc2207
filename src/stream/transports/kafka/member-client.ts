import * as Context from "effect/Context";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import type * as Scope from "effect/Scope";
import type { Admin, Kafka, KafkaMessage, Producer, TopicMessages } from "kafkajs";
import { KafkaIoError } from "../../../errors.ts";
import { orderedProducer } from "../../../kafka/client.ts";
import { readTopicsFrom, readTopicToEnd } from "../../../kafka/read-topic.ts";
import { sendBounded } from "../../../kafka/send-bounded.ts";

/** Receives one record read back from a topic, with where it was read. */
export type OnRecord = (message: KafkaMessage, topic: string, partition: number) => void | Promise<void>;

/**
 * What a member's roles ask of the cluster besides the group consumer: sends, end offsets, the
 * group's committed offsets and reads of whole topics. The modules depend on this, not on kafkajs,
 * so a unit test gives them an in-memory log.
 */
export interface MemberClientShape {
  /** Sends the messages in requests the broker accepts, in order, on the member's idempotent producer. */
  readonly send: (topicMessages: readonly TopicMessages[]) => Promise<void>;
  /** Per partition: the topic's end offset (its high watermark). */
  readonly topicEnds: (topic: string) => Promise<Map<number, bigint>>;
  /** Per partition: the offset the group committed (absent: nothing committed). */
  readonly groupOffsets: (groupId: string, topic: string) => Promise<Map<number, bigint>>;
  /** Reads topics from the given offsets to the ends they had when the call started; the records read. */
  readonly readFrom: (from: ReadonlyMap<string, ReadonlyMap<number, bigint>>, onRecord: OnRecord) => Promise<number>;
  /** Reads a topic from its beginning to its end; the records read. */
  readonly readToEnd: (topic: string, onRecord: OnRecord) => Promise<number>;
}

/** The client a member is given: the real one below, or an in-memory log in a unit test. */
export class MemberClient extends Context.Tag("agentops/MemberClient")<MemberClient, MemberClientShape>() {}

/** The real client as a Layer: acquired when the layer is built, released when its scope closes. */
export function memberClientLayer(kafka: Kafka, role: string): Layer.Layer<MemberClient, KafkaIoError> {
  return Layer.scoped(MemberClient, makeMemberClient(kafka, role));
}

/**
 * The member's client for the life of the scope: an admin and an idempotent producer, connected
 * when acquired and disconnected when the scope closes. The producer keeps one request in flight
 * (ordering per partition), and members do not queue behind each other's acknowledgements.
 */
export function makeMemberClient(
  kafka: Kafka,
  role: string,
): Effect.Effect<MemberClientShape, KafkaIoError, Scope.Scope> {
  return Effect.gen(function* () {
    // One acquisition for both, so a failed connect leaves nothing connected behind a retry.
    const connect = async (): Promise<{ producer: Producer; admin: Admin }> => {
      const producer = orderedProducer(kafka, { retry: { initialRetryTime: 300, maxRetryTime: 10_000 } });
      await producer.connect();
      const admin = kafka.admin();
      try {
        await admin.connect();
      } catch (error) {
        await producer.disconnect().catch(() => undefined);
        throw error;
      }
      return { producer, admin };
    };
    const { producer, admin } = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: connect,
        catch: (cause) => new KafkaIoError({ operation: `connect ${role} client`, cause }),
      }),
      (client) =>
        Effect.promise(async () => {
          await client.admin.disconnect().catch(() => undefined);
          await client.producer.disconnect().catch(() => undefined);
        }),
    );
    return {
      send: (topicMessages) => sendBounded(producer, topicMessages),
      topicEnds: async (topic) =>
        new Map((await admin.fetchTopicOffsets(topic)).map((entry) => [entry.partition, BigInt(entry.high)] as const)),
      groupOffsets: async (groupId, topic) => {
        const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
        const partitions = (offsets?.partitions ?? []).filter((entry) => BigInt(entry.offset) >= 0n);
        return new Map(partitions.map((entry) => [entry.partition, BigInt(entry.offset)] as const));
      },
      readFrom: (from, onRecord) => readTopicsFrom(kafka, from, onRecord),
      readToEnd: (topic, onRecord) =>
        readTopicToEnd(kafka, topic, (message, partition) => onRecord(message, topic, partition)),
    };
  });
}
