import { existsSync } from "node:fs";

/**
 * Kafka and Apicurio from the same public images as docker-compose.yml, on the same fixed host
 * ports: the broker advertises 127.0.0.1:19092, which only works when the host port is that one.
 */
export const KAFKA_IMAGE = "apache/kafka:4.4.0";
export const REGISTRY_IMAGE = "apicurio/apicurio-registry:3.3.3";

export interface StartedServices {
  readonly brokers: string;
  readonly registryUrl: string;
  stop(): Promise<void>;
}

/** A Docker engine is only worth probing when its socket or DOCKER_HOST exists. */
export async function dockerAvailable(timeoutMs = 10_000): Promise<boolean> {
  if (process.env["DOCKER_HOST"] === undefined && !existsSync("/var/run/docker.sock")) return false;
  const { getContainerRuntimeClient } = await import("testcontainers");
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
  const probe = getContainerRuntimeClient().then(
    () => true,
    () => false,
  );
  return Promise.race([probe, timeout]);
}

export async function startContainers(): Promise<StartedServices> {
  const { GenericContainer, Wait } = await import("testcontainers");
  const kafka = await new GenericContainer(KAFKA_IMAGE)
    .withExposedPorts({ container: 19092, host: 19092 })
    .withEnvironment({
      KAFKA_NODE_ID: "1",
      KAFKA_PROCESS_ROLES: "broker,controller",
      KAFKA_LISTENERS: "PLAINTEXT://:19092,CONTROLLER://:19093",
      KAFKA_ADVERTISED_LISTENERS: "PLAINTEXT://127.0.0.1:19092",
      KAFKA_CONTROLLER_LISTENER_NAMES: "CONTROLLER",
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
      KAFKA_CONTROLLER_QUORUM_VOTERS: "1@localhost:19093",
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: "1",
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: "1",
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: "1",
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR: "1",
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR: "1",
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: "0",
      KAFKA_LOG_CLEANER_BACKOFF_MS: "1000",
    })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .withStartupTimeout(180_000)
    .start();
  const registry = await new GenericContainer(REGISTRY_IMAGE)
    .withExposedPorts({ container: 8080, host: 18081 })
    .withEnvironment({
      APICURIO_REST_DELETION_ARTIFACT_ENABLED: "true",
      APICURIO_REST_DELETION_ARTIFACT_VERSION_ENABLED: "true",
      APICURIO_REST_DELETION_GROUP_ENABLED: "true",
      APICURIO_RULES_GLOBAL_COMPATIBILITY: "BACKWARD",
    })
    .withWaitStrategy(Wait.forHttp("/apis/ccompat/v7/subjects", 8080).forStatusCode(200))
    .withStartupTimeout(240_000)
    .start();
  return {
    brokers: "127.0.0.1:19092",
    registryUrl: "http://127.0.0.1:18081/apis/ccompat/v7",
    async stop() {
      await registry.stop();
      await kafka.stop();
    },
  };
}
