import { appendFileSync } from "node:fs";
import type { Producer } from "kafkajs";
import { deadLetterKey, type DeadLetterRecord } from "../contract/dead-letter.ts";
import type { TopicSerde } from "../kafka/serde/topic-serde.ts";
import type { DeadLetterSink, FailedDelivery } from "./notifier.ts";
import { InvariantError } from "../errors.ts";

const REASON = "WEBHOOK_DELIVERY_FAILED";

function detailOf(failure: FailedDelivery): string {
  const tries = `${failure.attempts} attempt${failure.attempts === 1 ? "" : "s"}`;
  const what = `${failure.kind} ${failure.deliveryKey}`;
  return `${what} not delivered to webhook ${failure.webhook} after ${tries}: ${failure.reason} (${failure.detail})`;
}

/**
 * File mode: one JSON line per failed delivery, in the form of the replay's dead-letter file,
 * with the delivery key and the request body as `raw` (so it can be sent again by hand).
 */
export function fileDeadLetters(path: string): DeadLetterSink {
  return {
    write(failure) {
      const { source: from } = failure;
      const source = "file" in from ? from : { ...from, key: from.key?.toString("utf8") ?? null };
      const line = {
        reason: REASON,
        field: `webhook:${failure.webhook}`,
        detail: detailOf(failure),
        record_rejected: false,
        failure: failure.reason,
        delivery_key: failure.deliveryKey,
        source,
        raw: failure.body,
      };
      appendFileSync(path, `${JSON.stringify(line)}\n`);
      return Promise.resolve();
    },
  };
}

/**
 * Topic mode: a DeadLetter record on the dead-letter topic, with the source record's coordinates
 * and key and the request body as value. The record is not rejected (record_rejected false): the
 * alert or result stands, only its delivery failed.
 */
export function topicDeadLetters(producer: Producer, serde: TopicSerde, topic: string): DeadLetterSink {
  return {
    async write(failure) {
      if (!("topic" in failure.source))
        throw new InvariantError({ problem: "a topic dead letter needs topic coordinates" });
      const { topic: sourceTopic, partition, offset, key } = failure.source;
      const letter: DeadLetterRecord = {
        reason: REASON,
        field: `webhook:${failure.webhook}`,
        detail: detailOf(failure),
        source: { topic: sourceTopic, partition, offset },
        factId: null,
        key,
        value: Buffer.from(failure.body, "utf8"),
        recordRejected: false,
      };
      const value = await serde.encodeDeadLetter(letter);
      await producer.send({ topic, messages: [{ key: deadLetterKey(letter), value }] });
    },
  };
}
