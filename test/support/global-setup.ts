import type { TestProject } from "vitest/node";
import { dockerAvailable, startContainers } from "./containers.ts";
import { opsPorts, opsSecurity, opsServicesRunning, runOpsServices } from "./ops-services.ts";
import "./provided-context.ts";

/**
 * Finds or starts a Kafka broker and a schema registry for the integration tests, in this order:
 *  1. KAFKA_BROKERS and SCHEMA_REGISTRY_URL both set: the user's own services, untouched;
 *  2. a Docker engine answers: containers from the docker-compose images, removed afterwards;
 *  3. otherwise ops/services.sh (Kafka and Apicurio from Maven Central, run as local JVMs).
 * Services this setup did not start are never stopped by it, and AGENTOPS_KEEP_SERVICES=1 keeps
 * the ones it did start (a faster next run). ops/ honours AGENTOPS_SERVICES_DIR and the
 * AGENTOPS_*_PORT overrides, so a second pair of services can run next to the default one.
 *
 * The broker's secured listeners (SASL_SSL with SCRAM, SSL with a client certificate; CA and users
 * made by ops/ at start) are provided as `secureServices` when ops/ runs the services, or when
 * AGENTOPS_SERVICES_DIR names the state directory of services given through the environment;
 * otherwise the TLS tests skip and say why.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const keep = process.env["AGENTOPS_KEEP_SERVICES"] === "1";
  const envBrokers = process.env["KAFKA_BROKERS"];
  const envRegistry = process.env["SCHEMA_REGISTRY_URL"];

  if (envBrokers !== undefined && envBrokers !== "" && envRegistry !== undefined && envRegistry !== "") {
    provideAll(project, envBrokers, envRegistry, "env");
    provideSecurity(
      project,
      process.env["AGENTOPS_SERVICES_DIR"] === undefined ? undefined : opsSecurity(),
      "KAFKA_BROKERS/SCHEMA_REGISTRY_URL name services of your own and AGENTOPS_SERVICES_DIR does not name their ops/ state directory",
    );
    return async () => {};
  }

  if (await dockerAvailable()) {
    process.stderr.write("[global-setup] Docker engine found: starting Kafka and Apicurio containers\n");
    const services = await startContainers();
    provideAll(project, services.brokers, services.registryUrl, "testcontainers");
    provideSecurity(project, undefined, "the Docker images run plaintext listeners only");
    return async () => {
      if (!keep) await services.stop();
    };
  }

  const alreadyRunning = await opsServicesRunning();
  if (!alreadyRunning) {
    process.stderr.write("[global-setup] no Docker engine: starting Kafka and Apicurio with ops/services.sh\n");
    const code = await runOpsServices("up");
    if (code !== 0)
      throw new Error(`ops/services.sh up failed with exit code ${code}; see the lines above and .services/*/logs/`);
  }
  const ports = opsPorts();
  provideAll(project, `127.0.0.1:${ports.kafka}`, `http://127.0.0.1:${ports.registry}/apis/ccompat/v7`, "ops");
  provideSecurity(
    project,
    opsSecurity(),
    "ops/ runs services started before the secured listeners existed (restart them: npm run services:down && npm run services:up)",
  );
  return async () => {
    if (!alreadyRunning && !keep) await runOpsServices("down");
  };
}

function provideSecurity(project: TestProject, security: string | undefined, whyMissing: string): void {
  project.provide("secureServices", security ?? "");
  project.provide("secureServicesMissing", security === undefined ? whyMissing : "");
}

function provideAll(project: TestProject, brokers: string, registryUrl: string, source: string): void {
  project.provide("kafkaBrokers", brokers);
  project.provide("schemaRegistryUrl", registryUrl);
  project.provide("servicesSource", source);
  // Also as environment, for code under test that resolves endpoints the way the CLI does.
  process.env["KAFKA_BROKERS"] = brokers;
  process.env["SCHEMA_REGISTRY_URL"] = registryUrl;
}
