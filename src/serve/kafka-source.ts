import { randomUUID } from "node:crypto";
import type { Consumer, Kafka, KafkaMessage } from "kafkajs";
import type { TopicSerde } from "../kafka/serde/topic-serde.ts";
import type { TopicNames } from "../stream/topic-names.ts";
import type { AlertRecord, RunRecord, ViewState } from "./view-state.ts";

/** Which output topics a source follows: the exporter needs only the results. */
export type FollowedTopics = "results" | "all";

/**
 * The processors' output topics as a live source: the compacted results topic (latest value per
 * result key, a tombstone removes the key) and, unless only the results are asked for, the alerts
 * and run-state topics, each followed from its beginning by a throwaway consumer group that commits
 * nothing. Records are decoded with the topics' own serde (the same path as `agentops results`).
 */
export async function startKafkaSource(
  kafka: Kafka,
  serde: TopicSerde,
  topics: TopicNames,
  state: ViewState,
  followed: FollowedTopics = "all",
): Promise<{ stop(): Promise<void> }> {
  const consumers: Consumer[] = [];
  const groupIds: string[] = [];
  const failed = (topic: string, error: unknown): void => {
    state.setStatus({
      ...state.snapshot().status,
      error: `${topic}: ${error instanceof Error ? error.message : String(error)}`,
    });
  };
  const follow = async (topic: string, onMessage: (message: KafkaMessage) => Promise<void>): Promise<void> => {
    const groupId = `agentops-serve-${randomUUID()}`;
    groupIds.push(groupId);
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200 });
    consumers.push(consumer);
    consumer.on(consumer.events.CRASH, (event) => failed(topic, event.payload.error));
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        // One undecodable record is named on the page and skipped; it never stops the view.
        try {
          await onMessage(message);
        } catch (error) {
          failed(`${topic} offset ${message.offset}`, error);
        }
      },
    });
  };
  await follow(topics.results, async (message) => {
    const key = message.key?.toString("utf8");
    if (key === undefined) return;
    state.setResult(key, message.value === null ? null : await serde.decodeResult(message.value));
  });
  if (followed === "all") {
    await follow(topics.alerts, async (message) => {
      if (message.value !== null) state.addAlert((await serde.decodeAlert(message.value)) as AlertRecord);
    });
    // Run-state summaries are JSON (the run monitor's compacted summary topic).
    await follow(topics.runState, async (message) => {
      if (message.value !== null) state.setRun(JSON.parse(message.value.toString("utf8")) as RunRecord);
    });
  }
  return {
    async stop(): Promise<void> {
      await Promise.all(consumers.map((consumer) => consumer.disconnect()));
      // The groups committed nothing; leave no trace of them on the cluster.
      const admin = kafka.admin();
      await admin.connect();
      await admin.deleteGroups(groupIds).catch(() => undefined);
      await admin.disconnect();
    },
  };
}
