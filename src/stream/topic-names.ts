import { loadShippedTopicSpecFile, prefixedTopicName, type TopicSpecFile } from "../kafka/topic-spec.ts";
import { ConfigError } from "../errors.ts";

/**
 * The topics of the topology, by the role each plays. The names come from topics/topics.json
 * (each topic there carries its `role`), never from code. A namespace prefix lets several
 * independent deployments, or tests, share one cluster without touching each other.
 */
export interface TopicNames {
  readonly facts: string;
  readonly agentEvents: string;
  readonly deadLetters: string;
  readonly engineFacts: string;
  readonly engineContributions: string;
  readonly results: string;
  readonly alerts: string;
  readonly runState: string;
  readonly runMonitorChangelog: string;
  /** The partitioned engine's topics (--engine stages): its input by fact_id, and one input topic per later stage. */
  readonly stageFacts: string;
  readonly stageClaims: string;
  readonly stageEntities: string;
  readonly stagePartials: string;
}

export type TopicRole = keyof TopicNames;

/** Base names by role from a spec file; a role the topology needs and the file lacks is an error. */
export function topicNamesFrom(file: TopicSpecFile, prefix = ""): TopicNames {
  const byRole = new Map(
    file.topics.flatMap((topic) => (topic.role === undefined ? [] : [[topic.role, topic.name] as const])),
  );
  const name = (role: TopicRole): string => {
    const base = byRole.get(role);
    if (base === undefined)
      throw new ConfigError({
        field: "topics/topics.json",
        problem: `no topic has "role": "${role}"`,
        fix: `give the topology's ${role} topic "role": "${role}"`,
      });
    return prefixedTopicName(prefix, base);
  };
  return {
    facts: name("facts"),
    agentEvents: name("agentEvents"),
    deadLetters: name("deadLetters"),
    engineFacts: name("engineFacts"),
    engineContributions: name("engineContributions"),
    results: name("results"),
    alerts: name("alerts"),
    runState: name("runState"),
    runMonitorChangelog: name("runMonitorChangelog"),
    stageFacts: name("stageFacts"),
    stageClaims: name("stageClaims"),
    stageEntities: name("stageEntities"),
    stagePartials: name("stagePartials"),
  };
}

/** The roles of the partitioned engine's topics, which must all have the engine's partition count. */
export const STAGE_TOPIC_ROLES = [
  "stageFacts",
  "stageClaims",
  "stageEntities",
  "stagePartials",
] as const satisfies readonly TopicRole[];

/**
 * The partitioned engine's partition count: the partitions of its topics in the spec file, which
 * must agree (a record's partition is computed from its key and this count, so a stage topic
 * with another count would send records where no task reads them).
 */
export function enginePartitionsFrom(file: TopicSpecFile): number {
  const counts = STAGE_TOPIC_ROLES.map((role) => ({
    role,
    partitions: file.topics.find((topic) => topic.role === role)?.partitions,
  }));
  const first = counts[0]?.partitions;
  const odd = counts.find((entry) => entry.partitions !== first);
  if (first === undefined || odd !== undefined) {
    throw new ConfigError({
      field: "topics/topics.json",
      problem: `the partitioned engine's topics have ${counts.map((entry) => `${entry.role}=${String(entry.partitions)}`).join(", ")} partitions`,
      fix: `give ${STAGE_TOPIC_ROLES.join(", ")} one partition count`,
    });
  }
  return first;
}

export function enginePartitions(): number {
  shipped ??= loadShippedTopicSpecFile();
  return enginePartitionsFrom(shipped);
}

let shipped: TopicSpecFile | undefined;

export function topicNames(prefix = ""): TopicNames {
  shipped ??= loadShippedTopicSpecFile();
  return topicNamesFrom(shipped, prefix);
}
