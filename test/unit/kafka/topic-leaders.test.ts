import type { Admin, ITopicMetadata } from "kafkajs";
import { describe, expect, it } from "vitest";
import { waitForTopicLeaders } from "../../../src/kafka/topic-admin.ts";

type FetchTopicMetadata = Pick<Admin, "fetchTopicMetadata">;

/** What a loaded KRaft broker answers right after the controller created a topic. */
function unknownTopic(): Error {
  return Object.assign(new Error("This server does not host this topic-partition"), {
    name: "KafkaJSProtocolError",
    type: "UNKNOWN_TOPIC_OR_PARTITION",
  });
}

function topic(name: string, leaders: readonly number[]): ITopicMetadata {
  return {
    name,
    partitions: leaders.map((leader, partitionId) => ({
      partitionId,
      leader,
      replicas: [1],
      isr: [1],
      offlineReplicas: [],
      partitionErrorCode: 0,
    })),
  };
}

/** A metadata source that answers each call with the next of `answers` (repeating the last). */
function scripted(answers: ReadonlyArray<Error | ITopicMetadata[]>): FetchTopicMetadata & { calls: number } {
  const admin = {
    calls: 0,
    fetchTopicMetadata: () => {
      const answer = answers[Math.min(admin.calls, answers.length - 1)] as Error | ITopicMetadata[];
      admin.calls += 1;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve({ topics: answer });
    },
  };
  return admin;
}

describe("waitForTopicLeaders: new topics the broker does not show yet", () => {
  it("waits through UNKNOWN_TOPIC_OR_PARTITION and leaderless partitions until every partition has a leader", async () => {
    const admin = scripted([
      unknownTopic(),
      unknownTopic(),
      [topic("a", [1, -1]), topic("b", [1])],
      [topic("a", [1, 1]), topic("b", [1])],
    ]);
    await waitForTopicLeaders(admin, ["a", "b"], 5_000, 1);
    expect(admin.calls).toBe(4);
  });

  it("counts a topic missing from the answer as not ready", async () => {
    const admin = scripted([[topic("a", [1])], [topic("a", [1]), topic("b", [1])]]);
    await waitForTopicLeaders(admin, ["a", "b"], 5_000, 1);
    expect(admin.calls).toBe(2);
  });

  it("throws the last problem once the deadline has passed", async () => {
    await expect(waitForTopicLeaders(scripted([unknownTopic()]), ["a"], 20, 1)).rejects.toThrow(
      "This server does not host this topic-partition",
    );
    await expect(waitForTopicLeaders(scripted([[topic("a", [-1])]]), ["a"], 20, 1)).rejects.toThrow(
      "no leader yet for every partition of a",
    );
  });
});
