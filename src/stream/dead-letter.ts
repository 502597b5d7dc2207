import type { Message } from "kafkajs";
import type { RejectionReason } from "../contract/rejection.ts";
import type { TopicSerde } from "./serde.ts";
import type { Telemetry } from "./telemetry.ts";

/**
 * A rejected record on the dead-letter topic: why (machine-readable reason and readable detail),
 * where it came from (topic, partition, offset) and its original bytes, so nothing is lost and
 * it can be replayed after a fix.
 */
export interface DeadLetterRecord {
  readonly reason: RejectionReason;
  readonly field: string;
  readonly detail: string;
  readonly source: { readonly topic: string; readonly partition: number; readonly offset: string };
  readonly factId: string | null;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

/** Dead letters are keyed by their source coordinates: a redelivered rejection overwrites itself. */
export function deadLetterKey(letter: DeadLetterRecord): string {
  return `${letter.source.topic}/${letter.source.partition}/${letter.source.offset}`;
}

/** Encodes a dead letter as a Kafka message and counts it by reason for /metrics. */
export async function deadLetterMessage(serde: TopicSerde, telemetry: Telemetry, letter: DeadLetterRecord): Promise<Message> {
  telemetry.count("agentops_dead_letters_total", "Records sent to the dead-letter topic, by reason", { reason: letter.reason });
  return { key: deadLetterKey(letter), value: await serde.encodeDeadLetter(letter) };
}
