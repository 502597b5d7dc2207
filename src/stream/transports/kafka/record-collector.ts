import * as Effect from "effect/Effect";
import type { Message, TopicMessages } from "kafkajs";
import type { ProcessorError } from "../../../errors.ts";
import { EncodeError, KafkaIoError } from "../../../errors.ts";
import type { ProcessResult, SinkRecord } from "../../processor.ts";
import { settleBatch, type ChangelogWrite } from "../../runtime/task-writes.ts";
import { sendOrder } from "../../topology.ts";
import { processorPromise, type MemberContext, type PartitionTask } from "./member-context.ts";
import { encodeOutput } from "../sink-roles.ts";

export type CollectorError = KafkaIoError | EncodeError | ProcessorError;

/** The member's sends: a task's results settled into its stores, encoded and written to the declared sinks. */
export interface RecordCollector {
  /**
   * Settles a task's result (its stores' writes), then sends its outputs and changelog writes;
   * the changelog writes settled.
   */
  readonly settleAndWrite: (
    entry: PartitionTask,
    partition: number,
    result: ProcessResult,
  ) => Effect.Effect<readonly ChangelogWrite[], CollectorError>;
}

export function recordCollector(member: MemberContext): RecordCollector {
  const { environment, name, node, client } = member;
  const { topics, telemetry } = environment;
  const order = sendOrder(name).map((group) => group.map((role) => topics[role]));

  /** Encodes and sends, the topology's `first` sinks in a request of their own, ahead of the rest. */
  const write = (
    outputs: readonly SinkRecord[],
    changelog: readonly ChangelogWrite[],
  ): Effect.Effect<void, KafkaIoError | EncodeError> =>
    Effect.gen(function* () {
      const byTopic = new Map<string, Message[]>(node.sinks.map((sink) => [topics[sink.topic], []]));
      // One program for the batch's encodings (a batch has thousands of records): the record that
      // fails names its topic.
      let encoding = "";
      yield* Effect.tryPromise({
        try: async () => {
          for (const output of outputs) {
            encoding = topics[output.topic];
            byTopic.get(encoding)?.push(await encodeOutput(environment, output));
          }
        },
        catch: (cause) => new EncodeError({ topic: encoding, cause }),
      });
      for (const entry of changelog) {
        const partition = entry.partition === undefined ? {} : { partition: entry.partition };
        byTopic.get(topics[entry.topic])?.push({ key: entry.key, value: entry.value, ...partition });
      }
      for (const group of order) {
        const topicMessages: TopicMessages[] = group
          .map((topic) => ({ topic, messages: byTopic.get(topic) ?? [] }))
          .filter((entry) => entry.messages.length > 0);
        if (topicMessages.length === 0) continue;
        yield* Effect.tryPromise({
          try: () => client.send(topicMessages),
          catch: (cause) => new KafkaIoError({ operation: `send ${name} outputs`, cause }),
        });
      }
      const results =
        changelog.filter((entry) => entry.topic === "results").length +
        outputs.filter((output) => output.topic === "results").length;
      if (results > 0) {
        const help = "Result upserts and tombstones written to the results topic";
        telemetry.count("agentops_results_published_total", help, {}, results);
      }
    });

  const settleAndWrite: RecordCollector["settleAndWrite"] = (entry, partition, result) =>
    Effect.gen(function* () {
      entry.storesAhead = true;
      const settled = yield* processorPromise(name, () =>
        settleBatch(name, result, entry.stores, partition, (value) => environment.serde.encodeResult(value)),
      );
      // Writes that failed are sent again ahead of the next ones: kafkajs retries the batch, but the
      // task has already applied it (its records are redeliveries now, its stores hold the values),
      // so the retry alone would not produce them again.
      const outputs = [...(entry.unsent?.outputs ?? []), ...settled.outputs];
      const changelog = [...(entry.unsent?.changelog ?? []), ...settled.changelog];
      entry.unsent = { outputs, changelog };
      yield* write(outputs, changelog);
      entry.unsent = undefined;
      entry.storesAhead = false;
      return settled.changelog;
    });

  return { settleAndWrite };
}
