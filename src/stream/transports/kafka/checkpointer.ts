import * as Effect from "effect/Effect";
import type { ProcessorError } from "../../../errors.ts";
import { KafkaIoError, RegistryError } from "../../../errors.ts";
import type { TaskContext } from "../../processor.ts";
import type { TopicRole } from "../../topic-names.ts";
import { processorPromise, type MemberContext, type PartitionTask } from "./member-context.ts";

export type CheckpointError = KafkaIoError | RegistryError | ProcessorError;

/** The local state's checkpoints: where a restart reads the changelogs of stores kept on disk from. */
export interface Checkpointer {
  /**
   * Stores that keep their contents on disk are checkpointed with their changelogs' end offsets,
   * so a restart reads the changelogs only from there; only when every write they hold is
   * acknowledged (no batch of the task between settling and its writes' acknowledgement).
   */
  readonly checkpointStores: (entry: PartitionTask) => Effect.Effect<void, CheckpointError>;
  /**
   * The form a store's values are encoded in: a table sink's (the results: its schema version);
   * a store of the processor's own values has none.
   */
  readonly tableFormat: (spec: { readonly restore: string }) => Effect.Effect<string | undefined, RegistryError>;
  /** What a task may ask of the transport besides its stores. */
  readonly taskContext: TaskContext;
}

export function checkpointer(member: MemberContext): Checkpointer {
  const { environment, name, client } = member;
  const { topics, serde } = environment;

  const changelogEnds = (
    roles: readonly TopicRole[],
  ): Effect.Effect<Map<TopicRole, Map<number, bigint>>, KafkaIoError> =>
    Effect.tryPromise({
      try: async () => {
        const ends = new Map<TopicRole, Map<number, bigint>>();
        for (const role of roles) ends.set(role, await client.topicEnds(topics[role]));
        return ends;
      },
      catch: (cause) => new KafkaIoError({ operation: `read ${name} store changelogs' end offsets`, cause }),
    });

  const tableFormat: Checkpointer["tableFormat"] = (spec) =>
    spec.restore === "topic"
      ? Effect.tryPromise({
          try: () => serde.resultEncoding(),
          catch: (cause) => new RegistryError({ operation: "find the results schema's id", cause }),
        })
      : Effect.succeed(undefined);

  const checkpointStores: Checkpointer["checkpointStores"] = (entry) =>
    Effect.gen(function* () {
      entry.storesCheckpointedAt = performance.now();
      const kept = entry.stores.declared.filter(({ store }) => store.checkpointed);
      if (kept.length === 0 || entry.storesAhead) return;
      const ends = yield* changelogEnds(kept.map(({ spec }) => spec.changelog));
      for (const { spec, store } of kept) {
        const offsets = ends.get(spec.changelog) ?? new Map<number, bigint>();
        const format = yield* tableFormat(spec);
        yield* processorPromise(name, () => store.checkpoint(offsets, format));
      }
    });

  const taskContext: TaskContext = {
    topicEnds: async (roles) => {
      const ends = new Map<TopicRole, Map<number, string>>();
      for (const role of roles) {
        const offsets = await client.topicEnds(topics[role]);
        ends.set(role, new Map([...offsets].map(([partition, offset]) => [partition, offset.toString()] as const)));
      }
      return ends;
    },
  };

  return { checkpointStores, tableFormat, taskContext };
}
