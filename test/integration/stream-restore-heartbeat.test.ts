import { Effect, Exit, Layer, Scope } from "effect";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { ensureTopics } from "../../src/kafka/ensure-topics.ts";
import { createSchemaRegistry } from "../../src/kafka/registry.ts";
import { AvroTopicSerde } from "../../src/kafka/serde/avro-serde.ts";
import { NOTHING, type Processor, type Task } from "../../src/stream/processor.ts";
import { resolveStreamConfig } from "../../src/stream/runtime/stream-config.ts";
import { Telemetry } from "../../src/stream/runtime/telemetry.ts";
import { topicNames } from "../../src/stream/topic-names.ts";
import { kafkaMember, type MemberFailure } from "../../src/stream/transports/kafka/kafka-member.ts";
import { memberClientLayer } from "../../src/stream/transports/kafka/member-client.ts";
import {
  closeAll,
  connectedAdmin,
  connectedProducer,
  serviceEndpoints,
  testKafka,
  uniqueName,
} from "../support/kafka.ts";

/** The shortest session timeout the broker accepts by default (group.min.session.timeout.ms). */
const SESSION_TIMEOUT = "6s";
/** Contributions-log records, each taking LOAD_DELAY_MS to load: a restore of 10 s, longer than the session timeout. */
const LOG_RECORDS = 40;
const LOAD_DELAY_MS = 250;

afterAll(closeAll);

/**
 * A member without local state loads its contributions log before its first batch. kafkajs sends
 * heartbeats only between batches, and that batch waits for the load: a load longer than the
 * session timeout (30 s at 1M facts on a slow core, longer with every day of history) got the
 * member removed from its group, and each rejoin loaded the log again, so it never went live.
 * Here the engine member runs a processor whose log load is slow by design, with the broker's
 * minimum session timeout, over the real broker.
 */
describe("a member restoring for longer than its session timeout", () => {
  it("keeps its assignment: loads its contributions log once, goes live once, and processes what comes after", async () => {
    const prefix = uniqueName("heartbeat");
    const topics = topicNames(prefix);
    const kafka = testKafka();
    const admin = await connectedAdmin(kafka);
    await ensureTopics(admin, prefix);
    const producer = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
    // The log's records and one engine-facts record (its content is the processor's business: unreadable here).
    await producer.send({
      topic: topics.engineContributions,
      messages: Array.from({ length: LOG_RECORDS }, (_, index) => ({
        key: `unit-${String(index)}`,
        value: Buffer.from([index]),
      })),
    });
    await producer.send({
      topic: topics.engineFacts,
      messages: [{ key: "before", value: Buffer.from("not an engine fact") }],
    });

    const seen = { loads: 0, restored: 0, live: 0, processed: 0, opened: 0 };
    const processor: Processor<never> = {
      name: "engine",
      open: (): Task<never> => {
        seen.opened += 1;
        return {
          localState: { resumeFrom: () => "0", committed: () => Promise.resolve(), close: () => Promise.resolve() },
          changelogLoad: {
            load: async () => {
              seen.loads += 1;
              await new Promise((resolve) => setTimeout(resolve, LOAD_DELAY_MS));
            },
            loaded: () => ({}),
          },
          sourceRestore: {
            restore: (records) => {
              seen.restored += records.length;
              return NOTHING;
            },
            goLive: () => {
              seen.live += 1;
              return [NOTHING];
            },
          },
          process: (batch) => {
            seen.processed += batch.records.length;
            return NOTHING;
          },
        };
      },
    };
    const { brokers, registryUrl } = serviceEndpoints();
    const config = Effect.runSync(
      resolveStreamConfig(
        {
          brokers: brokers.join(","),
          schemaRegistryUrl: registryUrl,
          topicPrefix: prefix,
          instanceId: "heartbeat",
          roles: "engine",
          sessionTimeoutMs: SESSION_TIMEOUT,
        },
        {},
      ),
    );
    const registry = createSchemaRegistry(registryUrl);
    const telemetry = new Telemetry();
    const failures: MemberFailure[] = [];
    const scope = Effect.runSync(Scope.make());
    await Effect.runPromise(
      Scope.extend(
        kafkaMember(
          {
            kafka,
            registry,
            serde: new AvroTopicSerde(registry),
            topics,
            config,
            logger: pino({ level: "silent" }),
            telemetry,
            enginePartitions: 1,
            fail: (error) => failures.push(error),
          },
          processor,
        ).pipe(Effect.provide(Layer.extendScope(memberClientLayer(kafka, "engine")))),
        scope,
      ),
    );
    try {
      const started = Date.now();
      while (seen.live === 0 && Date.now() - started < 60_000) await new Promise((resolve) => setTimeout(resolve, 200));
      const restoreSeconds = (Date.now() - started) / 1000;
      expect(seen.live, "went live").toBe(1);
      // The load really outlasted the session timeout, or this test proves nothing.
      expect(restoreSeconds).toBeGreaterThan(6);
      await producer.send({
        topic: topics.engineFacts,
        messages: [{ key: "after", value: Buffer.from("not an engine fact either") }],
      });
      const waited = Date.now();
      while (seen.processed === 0 && Date.now() - waited < 20_000)
        await new Promise((resolve) => setTimeout(resolve, 200));
      // Two more session timeouts: a member removed from its group would have rejoined and loaded again.
      await new Promise((resolve) => setTimeout(resolve, 12_000));
      expect(failures).toEqual([]);
      expect(seen).toEqual({ loads: LOG_RECORDS, restored: 1, live: 1, processed: 1, opened: 1 });
      expect(telemetry.total("agentops_rebalances_total")).toBe(1);
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void));
    }
  }, 120_000);
});
