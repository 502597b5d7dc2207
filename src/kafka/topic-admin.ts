import type { Admin, ITopicConfig } from "kafkajs";
import { ConfigResourceTypes } from "./kafkajs.ts";
import { planTopic, type ObservedTopic, type TopicAction } from "./topic-plan.ts";
import { desiredConfigs, type TopicSpec } from "./topic-spec.ts";
import { KafkaIoError } from "../errors.ts";

/** Reads, from the broker, the partitions, replication and managed configs of the spec's topics. */
export async function observeTopics(admin: Admin, specs: readonly TopicSpec[]): Promise<Map<string, ObservedTopic>> {
  const existing = new Set(await admin.listTopics());
  const present = specs.filter((spec) => existing.has(spec.name));
  const observed = new Map<string, ObservedTopic>();
  if (present.length === 0) return observed;
  const metadata = await admin.fetchTopicMetadata({ topics: present.map((spec) => spec.name) });
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: present.map((spec) => ({
      type: ConfigResourceTypes.TOPIC,
      name: spec.name,
      configNames: Object.keys(desiredConfigs(spec)),
    })),
  });
  for (const spec of present) {
    const topicMetadata = metadata.topics.find((topic) => topic.name === spec.name);
    const resource = described.resources.find((candidate) => candidate.resourceName === spec.name);
    if (topicMetadata === undefined || resource === undefined) continue;
    if (resource.errorCode !== 0)
      throw new KafkaIoError({
        operation: `describeConfigs ${spec.name}`,
        cause: resource.errorMessage ?? `error code ${resource.errorCode}`,
      });
    const configs: Record<string, string | null> = {};
    for (const entry of resource.configEntries) configs[entry.configName] = entry.configValue;
    observed.set(spec.name, {
      partitions: topicMetadata.partitions.length,
      replication: topicMetadata.partitions[0]?.replicas.length ?? 0,
      configs,
    });
  }
  return observed;
}

export async function planTopics(admin: Admin, specs: readonly TopicSpec[]): Promise<TopicAction[]> {
  const observed = await observeTopics(admin, specs);
  return specs.map((spec) => planTopic(spec, observed.get(spec.name)));
}

function toEntries(configs: Record<string, string>): Array<{ name: string; value: string }> {
  return Object.entries(configs).map(([name, value]) => ({ name, value }));
}

/**
 * Carries out a plan. kafkajs speaks the legacy AlterConfigs, which replaces a topic's whole
 * dynamic config: every managed key is therefore sent on each alteration, never only the changed
 * one, or the others would silently fall back to the broker defaults.
 */
export async function applyTopicActions(admin: Admin, actions: readonly TopicAction[]): Promise<void> {
  const creations = actions.filter((action) => action.kind === "create");
  if (creations.length > 0) {
    await createTopicsWithLeaders(
      admin,
      creations.map((action) => ({
        topic: action.topic.name,
        numPartitions: action.topic.partitions,
        replicationFactor: action.topic.replication,
        configEntries: toEntries(action.configs),
      })),
    );
  }
  for (const action of actions) {
    if (action.kind !== "update") continue;
    if (action.changes.length > 0) {
      await admin.alterConfigs({
        validateOnly: false,
        resources: [
          { type: ConfigResourceTypes.TOPIC, name: action.topic.name, configEntries: toEntries(action.configs) },
        ],
      });
    }
    if (action.addPartitions !== null) {
      await admin.createPartitions({ topicPartitions: [{ topic: action.topic.name, count: action.addPartitions }] });
    }
  }
}

/**
 * Creates topics and returns once every partition has a leader. kafkajs's own `waitForLeaders`
 * gives up (rejecting with UNKNOWN_TOPIC_OR_PARTITION) when the broker does not know a topic yet,
 * which a loaded KRaft broker answers for a moment after the controller created it: we wait ourselves.
 */
export async function createTopicsWithLeaders(
  admin: Pick<Admin, "createTopics" | "fetchTopicMetadata">,
  topics: ITopicConfig[],
): Promise<void> {
  await admin.createTopics({ waitForLeaders: false, topics });
  await waitForTopicLeaders(
    admin,
    topics.map((topic) => topic.topic),
  );
}

/** How long newly created topics may take to show a leader for every partition. */
export const TOPIC_LEADERS_TIMEOUT_MS = 30_000;

/**
 * Waits until the broker's metadata shows every partition of `topics` with a leader. Until the
 * creation has reached the broker's metadata cache it answers "This server does not host this
 * topic-partition" (UNKNOWN_TOPIC_OR_PARTITION) or LEADER_NOT_AVAILABLE: both mean "not yet", so
 * any failure is retried until the deadline, and the last one is thrown after it.
 */
export async function waitForTopicLeaders(
  admin: Pick<Admin, "fetchTopicMetadata">,
  topics: readonly string[],
  timeoutMs = TOPIC_LEADERS_TIMEOUT_MS,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem: unknown;
  for (;;) {
    try {
      const { topics: found } = await admin.fetchTopicMetadata({ topics: [...topics] });
      const leaderless = topics.filter((name) => {
        const partitions = found.find((topic) => topic.name === name)?.partitions ?? [];
        return partitions.length === 0 || partitions.some((partition) => partition.leader < 0);
      });
      if (leaderless.length === 0) return;
      lastProblem = new Error(`no leader yet for every partition of ${leaderless.join(", ")}`);
    } catch (error) {
      lastProblem = error;
    }
    if (Date.now() >= deadline) throw lastProblem instanceof Error ? lastProblem : new Error(String(lastProblem));
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
