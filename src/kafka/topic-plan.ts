import { desiredConfigs, type TopicSpec } from "./topic-spec.ts";

/** What the broker says about one topic (absent when the topic does not exist). */
export interface ObservedTopic {
  readonly partitions: number;
  readonly replication: number;
  /** Current values of the configs the spec manages, by Kafka name. */
  readonly configs: Readonly<Record<string, string | null>>;
}

export interface ConfigChange {
  readonly name: string;
  readonly from: string | null;
  readonly to: string;
}

export type TopicAction =
  | { readonly kind: "create"; readonly topic: TopicSpec; readonly configs: Record<string, string> }
  | {
      readonly kind: "update";
      readonly topic: TopicSpec;
      readonly configs: Record<string, string>;
      readonly changes: readonly ConfigChange[];
      readonly addPartitions: number | null;
      readonly warnings: readonly string[];
    }
  | { readonly kind: "unchanged"; readonly topic: TopicSpec; readonly warnings: readonly string[] }
  | { readonly kind: "error"; readonly topic: TopicSpec; readonly message: string };

/**
 * Decides, without touching the broker, what `topics apply` must do for one topic. Partitions are
 * only ever added: fewer partitions than the broker has is an error, since Kafka cannot shrink a
 * topic and the key→partition mapping would have to change under running consumers.
 */
export function planTopic(topic: TopicSpec, observed: ObservedTopic | undefined): TopicAction {
  const configs = desiredConfigs(topic);
  if (observed === undefined) return { kind: "create", topic, configs };
  if (topic.partitions < observed.partitions) {
    return {
      kind: "error",
      topic,
      message:
        `${topic.name}: the spec asks for ${topic.partitions} partitions but the broker has ${observed.partitions}; ` +
        `partitions are never decreased (create a new topic version instead)`,
    };
  }
  const warnings: string[] = [];
  if (topic.replication !== observed.replication) {
    warnings.push(
      `${topic.name}: replication is ${observed.replication} on the broker, ${topic.replication} in the spec; apply does not reassign replicas`,
    );
  }
  const changes = Object.entries(configs)
    .filter(([name, value]) => observed.configs[name] !== value)
    .map(([name, value]) => ({ name, from: observed.configs[name] ?? null, to: value }));
  const addPartitions = topic.partitions > observed.partitions ? topic.partitions : null;
  if (changes.length === 0 && addPartitions === null) return { kind: "unchanged", topic, warnings };
  if (addPartitions !== null)
    warnings.push(
      `${topic.name}: partitions ${observed.partitions} → ${topic.partitions} moves keys to other partitions for new records`,
    );
  return { kind: "update", topic, configs, changes, addPartitions, warnings };
}
