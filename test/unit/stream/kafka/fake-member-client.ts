import type { KafkaMessage, TopicMessages } from "kafkajs";
import { pino } from "pino";
import type { TopicSerde } from "../../../../src/kafka/serde/topic-serde.ts";
import type { Processor } from "../../../../src/stream/processor.ts";
import { Telemetry } from "../../../../src/stream/runtime/telemetry.ts";
import { topicNames } from "../../../../src/stream/topic-names.ts";
import type { MemberClientShape, OnRecord } from "../../../../src/stream/transports/kafka/member-client.ts";
import { memberContext, type MemberContext } from "../../../../src/stream/transports/kafka/member-context.ts";

export interface StoredRecord {
  readonly key: string | null;
  readonly value: Buffer | null;
  readonly headers: Record<string, string>;
}

/**
 * An in-memory log with the MemberClient surface: topics of partitions of records, sends that
 * append (or fail while `failSends` is positive), and a group's committed offsets.
 */
export class FakeMemberClient implements MemberClientShape {
  readonly log = new Map<string, Map<number, StoredRecord[]>>();
  readonly requests: string[][] = [];
  readonly groups = new Map<string, Map<number, bigint>>();
  failSends = 0;

  append(topic: string, partition: number, record: StoredRecord): void {
    const partitions = this.log.get(topic) ?? new Map<number, StoredRecord[]>();
    this.log.set(topic, partitions);
    partitions.set(partition, [...(partitions.get(partition) ?? []), record]);
  }

  records(topic: string, partition = 0): StoredRecord[] {
    return this.log.get(topic)?.get(partition) ?? [];
  }

  send = (topicMessages: readonly TopicMessages[]): Promise<void> => {
    if (this.failSends > 0) {
      this.failSends -= 1;
      return Promise.reject(new Error("the broker is away"));
    }
    this.requests.push(topicMessages.map((entry) => entry.topic));
    for (const { topic, messages } of topicMessages) {
      for (const message of messages) {
        const key = message.key === null || message.key === undefined ? null : message.key.toString();
        const value = message.value === null || message.value === undefined ? null : Buffer.from(message.value);
        const headers = Object.fromEntries(
          Object.entries(message.headers ?? {}).map(([name, text]) => [name, String(text)]),
        );
        this.append(topic, message.partition ?? 0, { key, value, headers });
      }
    }
    return Promise.resolve();
  };

  topicEnds = (topic: string): Promise<Map<number, bigint>> =>
    Promise.resolve(
      new Map([...(this.log.get(topic) ?? [])].map(([partition, records]) => [partition, BigInt(records.length)])),
    );

  groupOffsets = (groupId: string): Promise<Map<number, bigint>> => Promise.resolve(new Map(this.groups.get(groupId)));

  readFrom = async (from: ReadonlyMap<string, ReadonlyMap<number, bigint>>, onRecord: OnRecord): Promise<number> => {
    let read = 0;
    for (const [topic, starts] of from) {
      for (const [partition, records] of this.log.get(topic) ?? []) {
        for (let offset = Number(starts.get(partition) ?? 0n); offset < records.length; offset += 1) {
          await onRecord(kafkaMessage(records[offset] as StoredRecord, offset), topic, partition);
          read += 1;
        }
      }
    }
    return read;
  };

  readToEnd = (topic: string, onRecord: OnRecord): Promise<number> =>
    this.readFrom(new Map([[topic, new Map()]]), onRecord);
}

function kafkaMessage(record: StoredRecord, offset: number): KafkaMessage {
  const headers = Object.fromEntries(Object.entries(record.headers).map(([name, text]) => [name, Buffer.from(text)]));
  const key = record.key === null ? null : Buffer.from(record.key);
  const position = { offset: String(offset), timestamp: "0", attributes: 0, size: 0 };
  return { key, value: record.value, headers, ...position } as unknown as KafkaMessage;
}

/** A serde that writes JSON: enough for the roles, which only pass encoded bytes along. */
export const JSON_SERDE: TopicSerde = {
  encodeFact: (fact) => Promise.resolve(Buffer.from(JSON.stringify(fact))),
  encodeResult: (result) => Promise.resolve(Buffer.from(JSON.stringify(result))),
  resultEncoding: () => Promise.resolve("json"),
  decodeResult: (bytes) => Promise.resolve(JSON.parse(bytes.toString()) as never),
  encodeAlert: (alert) => Promise.resolve(Buffer.from(JSON.stringify(alert))),
  decodeAlert: (bytes) => Promise.resolve(JSON.parse(bytes.toString()) as unknown),
  encodeDeadLetter: (letter) => Promise.resolve(Buffer.from(JSON.stringify(letter))),
  decodeDeadLetter: (bytes) => Promise.resolve(JSON.parse(bytes.toString()) as never),
};

export const TOPICS = topicNames("unit.");

/** The context of a member of `processor` on the fake client. */
export function fakeMember(
  processor: Processor<never>,
  client: FakeMemberClient,
  telemetry = new Telemetry(),
): MemberContext {
  const environment = {
    registry: undefined as never,
    serde: JSON_SERDE,
    topics: TOPICS,
    logger: pino({ level: "silent" }),
    telemetry,
    enginePartitions: 1,
  };
  return memberContext(environment, processor, "unit", client);
}
