import { loadShippedTopicSpecFile, prefixedTopicName, type TopicSpecFile } from "../kafka/topic-spec.ts";

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
}

export type TopicRole = keyof TopicNames;

/** Base names by role from a spec file; a role the topology needs and the file lacks is an error. */
export function topicNamesFrom(file: TopicSpecFile, prefix = ""): TopicNames {
  const byRole = new Map(file.topics.flatMap((topic) => (topic.role === undefined ? [] : [[topic.role, topic.name] as const])));
  const name = (role: TopicRole): string => {
    const base = byRole.get(role);
    if (base === undefined) throw new Error(`topics/topics.json: no topic has "role": "${role}"; the topology needs one`);
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
  };
}

let shipped: TopicSpecFile | undefined;

export function topicNames(prefix = ""): TopicNames {
  shipped ??= loadShippedTopicSpecFile();
  return topicNamesFrom(shipped, prefix);
}
