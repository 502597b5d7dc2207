import { appendFileSync } from "node:fs";
import type { Producer } from "kafkajs";
import type { Fact } from "../contract/facts.ts";
import { deadLetterKey, type DeadLetterRecord } from "../contract/dead-letter.ts";
import { createFactPublisher } from "./fact-publisher.ts";
import { FactNotCarriableError } from "../kafka/serde/fact-record.ts";
import type { TopicSerde } from "../kafka/serde/topic-serde.ts";
import type { Telemetry } from "../stream/runtime/telemetry.ts";
import type { TopicNames } from "../stream/topic-names.ts";

/**
 * Where adapters (the OTLP receiver, the Claude Code hook) put what they produce: facts in the
 * contract's JSON form, and dead letters for what they could not map. One write per call; a
 * write that fails rejects, so the caller can tell its client to retry.
 */
export interface FactSink {
  write(
    facts: readonly { readonly fact: Fact; readonly json: string }[],
    deadLetters: readonly DeadLetterRecord[],
  ): Promise<void>;
  close(): Promise<void>;
}

/**
 * NDJSON files, no broker: facts to `factsPath` (ready for `agentops produce` or `replay`), dead
 * letters to `deadLettersPath` when given. Each call is one append, so concurrent writers never
 * interleave inside a line.
 */
export function fileSink(factsPath: string, deadLettersPath: string | undefined): FactSink {
  return {
    write(facts, deadLetters) {
      if (facts.length > 0) appendFileSync(factsPath, facts.map(({ json }) => `${json}\n`).join(""));
      if (deadLetters.length > 0 && deadLettersPath !== undefined)
        appendFileSync(
          deadLettersPath,
          deadLetters.map((letter) => `${JSON.stringify(deadLetterJson(letter))}\n`).join(""),
        );
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
}

/** Kafka: facts as `agentops produce` publishes them, dead letters to the dead-letter topic. */
export function kafkaSink(producer: Producer, serde: TopicSerde, topics: TopicNames, telemetry: Telemetry): FactSink {
  const publisher = createFactPublisher(producer, serde, topics);
  return {
    async write(facts, mapped) {
      const deadLetters = [...mapped];
      for (const { fact, json } of facts) {
        try {
          await publisher.add(fact);
        } catch (error) {
          // Fail closed, never a write the client retries for ever: the fact goes to the dead-letter topic.
          if (!(error instanceof FactNotCarriableError)) throw error;
          const detail = `${fact.fact_id} cannot be written in Avro: ${error.message}`;
          const source = { topic: "ingress", partition: 0, offset: fact.fact_id };
          const value = Buffer.from(json, "utf8");
          const factId = fact.fact_id;
          deadLetters.push({ reason: "UNENCODABLE_FACT", field: "", detail, source, factId, key: null, value });
        }
      }
      await publisher.flush();
      if (deadLetters.length === 0) return;
      const messages = await Promise.all(
        deadLetters.map(async (letter) => {
          telemetry.count("agentops_dead_letters_total", "Records sent to the dead-letter topic, by reason", {
            reason: letter.reason,
          });
          return { key: deadLetterKey(letter), value: await serde.encodeDeadLetter(letter) };
        }),
      );
      await producer.send({ topic: topics.deadLetters, messages });
    },
    close: () => producer.disconnect(),
  };
}

function deadLetterJson(letter: DeadLetterRecord): Record<string, unknown> {
  return {
    reason: letter.reason,
    field: letter.field,
    detail: letter.detail,
    source: letter.source,
    fact_id: letter.factId,
    value: letter.value?.toString("utf8") ?? null,
  };
}
