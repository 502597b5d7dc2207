import type { Message } from "kafkajs";
import { deadLetterKey, type DeadLetterRecord } from "../../contract/dead-letter.ts";
import type { TopicSerde } from "../../kafka/serde/topic-serde.ts";
import type { Telemetry } from "../runtime/telemetry.ts";

/** Encodes a dead letter as a Kafka message and counts it by reason for /metrics. */
export async function deadLetterMessage(serde: TopicSerde, telemetry: Telemetry, letter: DeadLetterRecord): Promise<Message> {
  telemetry.count("agentops_dead_letters_total", "Records sent to the dead-letter topic, by reason", { reason: letter.reason });
  if (letter.reason === "INVALID_MEASURE") telemetry.count("agentops_invalid_measures_total", "Invalid measure fields of accepted facts (read as unavailable), by field", { field: letter.field });
  return { key: deadLetterKey(letter), value: await serde.encodeDeadLetter(letter) };
}
