import * as Effect from "effect/Effect";
import { KafkaIoError, ProcessorError } from "../../../errors.ts";
import type { SinkRecord } from "../../processor.ts";
import { processorCall, type MemberContext, type PartitionTask } from "./member-context.ts";
import type { CollectorError, RecordCollector } from "./record-collector.ts";
import { headerText, WRITER_HEADER } from "./sink-encoding.ts";

/**
 * A partitioned engine stage's task, before it goes live: what it wrote since its checkpoint
 * (everything, without one) is read back from its output topics, and every key it wrote there is
 * set to what the task holds now, so no reader keeps a value sent from state the task lost.
 */
export type Reconciler = (entry: PartitionTask, partition: number) => Effect.Effect<void, CollectorError>;

export function reconciler(member: MemberContext, collector: RecordCollector): Reconciler {
  const { environment, name, client } = member;
  const { topics, logger } = environment;
  return (entry, partition) =>
    Effect.gen(function* () {
      const reconciliation = entry.task.reconciliation;
      if (reconciliation === undefined) return;
      const since = yield* processorCall(name, () => reconciliation.writtenSince());
      const roleOf = new Map([...since.from.keys()].map((role) => [topics[role], role] as const));
      const from = new Map(
        [...since.from].map(([role, starts]) => {
          const offsets = new Map([...starts].map(([at, offset]) => [at, BigInt(offset)] as const));
          return [topics[role], offsets] as const;
        }),
      );
      const corrections = new Map<string, SinkRecord>();
      let failure: unknown;
      const started = performance.now();
      const read = yield* Effect.tryPromise({
        try: () =>
          client.readFrom(from, (message, topic, at) => {
            const role = roleOf.get(topic);
            if (role === undefined || message.key === null || failure !== undefined) return;
            if (headerText(message.headers?.[WRITER_HEADER]) !== since.writer) return;
            const key = message.key.toString("utf8");
            try {
              const correction = reconciliation.reconcile(role, key, at);
              if (correction !== undefined) corrections.set(`${topic}\u0000${key}`, correction);
            } catch (error) {
              failure = error;
            }
          }),
        catch: (cause) => new KafkaIoError({ operation: `read back what ${since.writer} wrote`, cause }),
      });
      if (failure !== undefined) return yield* Effect.fail(new ProcessorError({ processor: name, cause: failure }));
      yield* collector.settleAndWrite(entry, partition, { outputs: [...corrections.values()] });
      const seconds = Number(((performance.now() - started) / 1000).toFixed(3));
      const reconciled = { processor: name, partition, writer: since.writer, read, corrections: corrections.size };
      logger.info({ ...reconciled, seconds, stage: "reconciled" }, `${name} outputs read back and reconciled`);
    });
}
