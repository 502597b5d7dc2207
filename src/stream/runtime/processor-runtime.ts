import type { AddressInfo } from "node:net";
import { availableParallelism } from "node:os";
import { Deferred, Effect, type Scope } from "effect";
import type { TopicMessages } from "kafkajs";
import { pino } from "pino";
import { shippedCatalog } from "../../catalog/metric-definitions.ts";
import { AvroTopicSerde } from "../../kafka/serde/avro-serde.ts";
import { createKafka } from "../../kafka/client.ts";
import { createSchemaRegistry } from "../../kafka/registry.ts";
import { sendBounded } from "../../kafka/send-bounded.ts";
import { TOPOLOGY } from "../topology.ts";
import { engineProcessor } from "../processors/engine-processor.ts";
import { engineThread } from "./engine-thread.ts";
import { ensureTopics } from "../../kafka/ensure-topics.ts";
import { KafkaIoError, RegistryError } from "./errors.ts";
import { ingestProcessor } from "../processors/ingest-processor.ts";
import { Processors, type CommitState, type ProcessorEnvironment } from "./processor-environment.ts";
import { runMonitorProcessor } from "../processors/run-monitor-processor.ts";
import { serveTelemetry } from "./metrics-server.ts";
import { startupStage } from "./startup-stage.ts";
import type { StreamConfig } from "./stream-config.ts";
import { Telemetry } from "./telemetry.ts";
import { topicNames } from "../topic-names.ts";

/**
 * One processor instance: the roles it was given (ingest, engine, run-monitor), sharing one Kafka
 * client, the registry serde and the telemetry endpoint; each role has its own idempotent
 * producer. Everything is acquired in the enclosing scope, so closing it (SIGTERM) stops each
 * role's consumer first (committing what it processed), then that role's producer, and the
 * endpoint last.
 */
export interface InstanceOptions {
  /** Serve /metrics and /healthz (false on the engine thread, which reports to its parent). */
  readonly serveTelemetry?: boolean;
}

export interface RunningInstance {
  /** The /metrics port; 0 when telemetry is not served. */
  readonly metricsPort: number;
  readonly failure: Deferred.Deferred<never, KafkaIoError>;
  readonly telemetry: Telemetry;
  /** Roles that processed records whose offsets are not committed (read after the scope closed). */
  readonly uncommittedRoles: () => readonly string[];
}

export function runInstance(config: StreamConfig, options: InstanceOptions = {}): Effect.Effect<RunningInstance, KafkaIoError | RegistryError, Scope.Scope> {
  return Effect.gen(function* () {
    const logger = pino({ name: "agentops", level: config.logLevel, base: { instance: config.instanceId } });
    const telemetry = new Telemetry();
    const kafka = createKafka({ brokers: config.brokers, clientId: `agentops-${config.instanceId}`, logger });
    const topics = topicNames(config.topicPrefix);

    const createTopics = Effect.tryPromise({
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
    });
    // Each stage logs when it begins, each retry and when it is done (startup-stage.ts): a start-up
    // that stalls says where.
    const created = yield* startupStage(logger, "create missing topics", createTopics, { retry: true });
    if (created.length > 0) logger.info({ created }, "created missing topics");

    const registry = createSchemaRegistry(config.schemaRegistryUrl);
    const serde = new AvroTopicSerde(registry);
    yield* startupStage(logger, "register schemas", Effect.tryPromise({ try: () => serde.registerAll(), catch: (cause) => new RegistryError({ operation: "register schemas", cause }) }), { retry: true });

    // One idempotent producer per role: each keeps one request in flight (ordering per partition),
    // and roles do not queue behind each other's acknowledgements.
    const connectProducer = (role: string) =>
      Effect.acquireRelease(
        startupStage(
          logger,
          `connect ${role} producer`,
          Effect.tryPromise({
            try: async () => {
              const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { initialRetryTime: 300, maxRetryTime: 10_000 } });
              await producer.connect();
              return producer;
            },
            catch: (cause) => new KafkaIoError({ operation: "connect producer", cause }),
          }),
          { retry: true },
        ),
        (producer) => Effect.promise(() => producer.disconnect().catch(() => undefined)),
      );

    let started = false;
    const failure = yield* Deferred.make<never, KafkaIoError>();
    const fail = (reason: string): void => {
      logger.fatal({ reason }, "processor instance failed");
      Effect.runSync(Deferred.fail(failure, new KafkaIoError({ operation: "process", cause: new Error(reason) })));
    };
    const server = options.serveTelemetry === false ? undefined : yield* serveTelemetry(telemetry, config.metricsPort, () => started && !Effect.runSync(Deferred.isDone(failure)));
    const shared = { kafka, registry, serde, topics, config, logger, telemetry, catalog: shippedCatalog(), fail };
    const roles = { ingest: ingestProcessor, engine: engineProcessor, "run-monitor": runMonitorProcessor } as const;
    // Alone, the engine has the event loop to itself: a thread would only add a hop.
    const threadedEngine = config.roles.length > 1 && (config.engineThread === "on" || (config.engineThread === "auto" && availableParallelism() > 1));
    const commitStates = new Map<string, CommitState>();
    const uncommittedRoles = (): string[] => [...commitStates].filter(([, state]) => state.uncommitted).map(([role]) => role);
    for (const role of config.roles) {
      if (role === "engine" && threadedEngine) {
        yield* startupStage(logger, "start engine thread", engineThread(config, telemetry, fail, logger));
        continue;
      }
      const commitState: CommitState = { uncommitted: false };
      commitStates.set(role, commitState);
      const producer = yield* connectProducer(role);
      const sinks = new Set(TOPOLOGY[role].sinks.map((sink) => topics[sink.topic]));
      const send = (topicMessages: readonly TopicMessages[]): Promise<void> => {
        const undeclared = topicMessages.find((entry) => !sinks.has(entry.topic));
        if (undeclared !== undefined) return Promise.reject(new Error(`${role} writes ${undeclared.topic}, which src/stream/topology.ts does not declare as its sink`));
        return sendBounded(producer, topicMessages);
      };
      const environment: ProcessorEnvironment = { ...shared, send, commitState };
      yield* roles[role].pipe(Effect.provideService(Processors, environment));
    }
    started = true;
    if (server === undefined) {
      // The engine thread: its parent logs the instance (and its /metrics port) once.
      logger.info({ roles: config.roles, topics }, "engine thread running");
      return { metricsPort: 0, failure, telemetry, uncommittedRoles };
    }
    const metricsPort = (server.address() as AddressInfo).port;
    logger.info({ roles: config.roles, engineThread: threadedEngine, topics, metricsPort, brokers: config.brokers }, "processor instance running");
    return { metricsPort, failure, telemetry, uncommittedRoles };
  });
}
