import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import type * as Scope from "effect/Scope";
import { pino } from "pino";
import { shippedCatalog } from "../../catalog/metric-definitions.ts";
import { ConfigError, KafkaIoError, RegistryError, type TransportError } from "../../errors.ts";
import { createKafka } from "../../kafka/client.ts";
import { ensureTopics } from "../../kafka/ensure-topics.ts";
import { createSchemaRegistry } from "../../kafka/registry.ts";
import { AvroTopicSerde } from "../../kafka/serde/avro-serde.ts";
import type { Processor } from "../processor.ts";
import { enginePartitions, STAGE_TOPIC_ROLES, topicNames, type TopicNames } from "../topic-names.ts";
import {
  kafkaMember,
  type KafkaEnvironment,
  type MemberCommits,
  type MemberFailure,
} from "../transports/kafka/kafka-member.ts";
import { memberClientLayer } from "../transports/kafka/member-client.ts";
import { boundEngineHeapGrowth } from "../../state/heap-growth.ts";
import { serveTelemetry, type TelemetryRoute } from "./metrics-server.ts";
import { EngineDirectory } from "../../lineage/engine-directory.ts";
import { explainRoute } from "../../lineage/explain-route.ts";
import { partitionOwnerAddress } from "../transports/kafka/advertised-address.ts";
import { startupStage } from "./startup-stage.ts";
import {
  Catalog,
  Config,
  runTopology,
  Telemetry as TelemetryTag,
  TopicSerde,
  Transport,
  type TransportShape,
} from "./services.ts";
import type { StreamConfig } from "./stream-config.ts";
import { Telemetry } from "./telemetry.ts";

function isUnknownTopicPartition(cause: unknown): boolean {
  // kafkajs may wrap the broker's error (KafkaJSNonRetriableError): look along the cause chain.
  for (
    let current = cause, depth = 0;
    typeof current === "object" && current !== null && depth < 5;
    current = (current as { cause?: unknown }).cause, depth += 1
  ) {
    if ((current as { type?: unknown }).type === "UNKNOWN_TOPIC_OR_PARTITION") return true;
  }
  return false;
}

export interface RunningInstance {
  /** The /metrics and /healthz port. */
  readonly metricsPort: number;
  readonly failure: Deferred.Deferred<never, MemberFailure>;
  readonly telemetry: Telemetry;
  /** Roles that processed records whose offsets are not committed (read after the scope closed). */
  readonly uncommittedRoles: () => readonly string[];
}

/**
 * One processor instance on Kafka: the Kafka layer (one client, the registry serde, telemetry and
 * its endpoint, the catalog and configuration) under the topology program every transport runs
 * (services.ts `runTopology`): one consumer-group member per role, each with its own idempotent
 * producer. Everything is acquired in the enclosing scope, so closing it (SIGTERM) stops each
 * member's consumer first (committing what it processed), then its producer, and the endpoint last.
 */
export function runInstance(config: StreamConfig): Effect.Effect<RunningInstance, TransportError, Scope.Scope> {
  return Effect.gen(function* () {
    const logger = pino({ name: "agentops", level: config.logLevel, base: { instance: config.instanceId } });
    const telemetry = new Telemetry();
    const kafka = createKafka({ brokers: config.brokers, clientId: `agentops-${config.instanceId}`, logger });
    const topics = topicNames(config.topicPrefix);
    if (config.roles.includes("engine")) {
      const heapGrowingPercent = boundEngineHeapGrowth();
      logger.info(
        { heapGrowingPercent: heapGrowingPercent ?? "as set by the operator" },
        "engine heap growth bounded (docs/operations.md, Memory)",
      );
    }

    const created = yield* startupStage(
      logger,
      "create missing topics",
      Effect.tryPromise({
        try: async () => {
          const admin = kafka.admin();
          await admin.connect();
          try {
            return await ensureTopics(admin, config.topicPrefix);
          } finally {
            await admin.disconnect();
          }
        },
        catch: (cause) => new KafkaIoError({ operation: "create missing topics", cause }),
      }),
      // Instances starting together create the same topics: one may read a topic's metadata before
      // the broker hosts the partitions another just created. That heals by waiting.
      { retry: true, retryAlso: isUnknownTopicPartition },
    );
    logger.info(
      { created, stage: "create missing topics" },
      created.length > 0 ? "created missing topics" : "every topic exists",
    );

    const registry = createSchemaRegistry(config.schemaRegistryUrl);
    const serde = new AvroTopicSerde(registry);
    yield* startupStage(
      logger,
      "register schemas",
      Effect.tryPromise({
        try: () => serde.registerAll(),
        catch: (cause) => new RegistryError({ operation: "register schemas", cause }),
      }),
      { retry: true },
    );

    let started = false;
    const failure = yield* Deferred.make<never, MemberFailure>();
    const fail = (error: MemberFailure): void => {
      logger.fatal({ reason: error.message, error: error._tag }, "processor instance failed");
      Effect.runSync(Deferred.fail(failure, error));
    };
    // Explanations (agentops explain --member): this process's engine partitions, and where the
    // member owning the engine's partition is, read from the engine's consumer group.
    const directory = new EngineDirectory();
    const address = { self: "" };
    const ownerAddress = async (): Promise<string | undefined> => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        return await partitionOwnerAddress(admin, `${config.groupPrefix}.engine`, topics.engineFacts, 0);
      } finally {
        await admin.disconnect();
      }
    };
    const explain: TelemetryRoute = (url) =>
      explainRoute(url, {
        directory,
        partition: 0,
        ownerAddress,
        selfAddress: address.self,
        partitioned: config.engineTopology === "stages",
      });
    const server = yield* serveTelemetry(
      telemetry,
      config.metricsPort,
      () => started && !Effect.runSync(Deferred.isDone(failure)),
      undefined,
      new Map([["/explain", explain]]),
    );
    address.self = config.advertisedUrl ?? `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
    // The partitioned engine places records by key modulo its topics' partition count: the count
    // the cluster has (topics.json's when this instance created them), the same on all four.
    const partitions =
      config.engineTopology === "stages"
        ? yield* startupStage(logger, "read the engine's partition count", stagePartitionCount(kafka, topics), {
            retry: true,
            retryAlso: isUnknownTopicPartition,
          })
        : enginePartitions();
    const environment: KafkaEnvironment = {
      kafka,
      registry,
      serde,
      topics,
      config,
      logger,
      telemetry,
      fail,
      enginePartitions: partitions,
      advertisedUrl: address.self,
    };
    const members = new Map<string, MemberCommits>();
    const uncommittedRoles = (): string[] =>
      [...members].filter(([, member]) => member.uncommitted()).map(([role]) => role);

    const transport: TransportShape = {
      member: (processor: Processor<never>) =>
        Effect.gen(function* () {
          // Each member's own client (admin and idempotent producer), released when the instance's scope closes.
          const connect = Layer.build(memberClientLayer(kafka, processor.name));
          const client = yield* startupStage(logger, `connect ${processor.name} client`, connect, { retry: true });
          // A topic another instance has just created may not be hosted yet: that heals by waiting.
          const join = kafkaMember(environment, processor).pipe(Effect.provide(client));
          const retries = { retry: true, retryAlso: isUnknownTopicPartition };
          members.set(
            processor.name,
            yield* startupStage(logger, `join ${processor.name} consumer group`, join, retries),
          );
        }),
      run: Effect.void,
    };
    const layer = Layer.mergeAll(
      Layer.succeed(Transport, transport),
      Layer.succeed(TopicSerde, serde),
      Layer.succeed(TelemetryTag, telemetry),
      Layer.succeed(Config, {
        roles: config.roles,
        engine: { windowMillis: config.windowMillis, coverageThresholdHundredths: config.coverageThresholdHundredths },
        engineState: {
          directory: (partition) => join(config.stateDir, `engine-${String(partition)}`),
          cacheBytes: config.stateCacheMb * 1024 * 1024,
        },
        engineTopology: config.engineTopology === "stages" ? { kind: "stages", partitions } : { kind: "single" },
        engineObserver: directory,
        tripwires: {},
      }),
      Layer.succeed(Catalog, shippedCatalog()),
    );
    yield* runTopology.pipe(Effect.provide(layer));
    started = true;
    const metricsPort = (server.address() as AddressInfo).port;
    logger.info({ roles: config.roles, topics, metricsPort, brokers: config.brokers }, "processor instance running");
    return { metricsPort, failure, telemetry, uncommittedRoles };
  });
}

/**
 * The partition count of the partitioned engine's topics on the cluster. They must agree: a
 * record's partition is its key's hash modulo this count, so a stage topic with another count
 * would hold records no task of its stage reads.
 */
function stagePartitionCount(
  kafka: ReturnType<typeof createKafka>,
  topics: TopicNames,
): Effect.Effect<number, KafkaIoError | ConfigError> {
  return Effect.gen(function* () {
    const counts = yield* Effect.tryPromise({
      try: async () => {
        const admin = kafka.admin();
        await admin.connect();
        try {
          const names = STAGE_TOPIC_ROLES.map((role) => topics[role]);
          // Topics created a moment ago may list no partitions yet: that heals by waiting.
          for (let attempt = 0; ; attempt++) {
            const metadata = await admin.fetchTopicMetadata({ topics: names });
            const counts = names.map((name) => ({
              name,
              partitions: metadata.topics.find((topic) => topic.name === name)?.partitions.length ?? 0,
            }));
            if (attempt >= 20 || counts.every((entry) => entry.partitions > 0)) return counts;
            await new Promise((resolve) => setTimeout(resolve, 500));
          }
        } finally {
          await admin.disconnect();
        }
      },
      catch: (cause) =>
        new KafkaIoError({ operation: "read the partitioned engine's topics' partition counts", cause }),
    });
    const first = counts[0]?.partitions ?? 0;
    if (first > 0 && counts.every((entry) => entry.partitions === first)) return first;
    const found = counts.map((entry) => `${entry.name}=${String(entry.partitions)}`).join(", ");
    const problem = `the partitioned engine's topics must have one partition count; the cluster has ${found}`;
    return yield* Effect.fail(
      new ConfigError({
        field: "--engine stages",
        problem,
        fix: "recreate them with one count, or run under a new --topic-prefix",
      }),
    );
  });
}
