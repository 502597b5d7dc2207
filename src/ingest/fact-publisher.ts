import type { Producer } from "kafkajs";
import { isAgentEvent, type Fact } from "../contract/facts.ts";
import type { TopicSerde } from "../kafka/serde/topic-serde.ts";
import type { TopicNames } from "../stream/topic-names.ts";

/**
 * Publishes accepted facts the way every producer of this project does: Avro through the
 * registry, metric facts to the facts topic keyed by fact_id, agent_step and sandbox_event records
 * to the agent-events topic keyed by run_id (so one run stays on one partition, in order).
 * Used by `agentops produce`, the OTLP receiver and the Claude Code hook.
 */
export interface FactPublisher {
  /**
   * Queues one fact; sends when `batchSize` facts are queued. Invalid measures travel as reported
   * (contract revision 2: the processor finds and reports them). A fact without an Avro form
   * throws FactNotCarriableError (src/kafka/serde/fact-record.ts) and is not queued.
   */
  add(fact: Fact): Promise<void>;
  /** Sends everything queued and waits for the broker's acknowledgement. */
  flush(): Promise<void>;
}

export function createFactPublisher(
  producer: Producer,
  serde: TopicSerde,
  topics: TopicNames,
  batchSize = 500,
): FactPublisher {
  const pending: { topic: string; key: string; value: Buffer }[] = [];
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const byTopic = new Map<string, { key: string; value: Buffer }[]>();
    for (const { topic, key, value } of pending.splice(0))
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), { key, value }]);
    await producer.sendBatch({
      topicMessages: [...byTopic.entries()].map(([topic, messages]) => ({ topic, messages })),
    });
  };
  return {
    async add(fact) {
      const agentEvent = isAgentEvent(fact);
      const value = await serde.encodeFact(fact);
      pending.push({
        topic: agentEvent ? topics.agentEvents : topics.facts,
        key: agentEvent ? fact.run_id : fact.fact_id,
        value,
      });
      if (pending.length >= batchSize) await flush();
    },
    flush,
  };
}
