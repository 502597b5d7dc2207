import { ConnectionFailure } from "./connection-failure.ts";
import { ENV, describeOrigin } from "./connection-sources.ts";
import type { ConnectionSettings, KafkaConnection, RegistryConnection } from "./connection-settings.ts";
import { kafkaSymptom, registrySymptom, type Symptom } from "./connection-symptoms.ts";

const SERVICES_UP = "npm run services:up";

function kafkaFailure(symptom: Symptom, kafka: KafkaConnection, cause: unknown): ConnectionFailure {
  const address = symptom.broker ?? kafka.brokers.value.join(",");
  const from = `${kafka.brokers.value.join(",")}, ${describeOrigin(kafka.brokers.origin)}`;
  const security = kafkaSecurityLine(kafka);
  const lines: Array<[string, string]> = [["address", from]];
  if (security !== undefined) lines.push(["security", security]);
  lines.push(["cause", symptom.message]);
  const sasl = kafka.sasl;
  switch (symptom.kind) {
    case "unreachable": {
      const closed = /Closed connection|closed by the server|disconnected before secure TLS/i.test(symptom.message);
      const hint = closed
        ? kafka.tls === undefined
          ? `; the broker closed the connection: if this listener uses TLS or SASL, ` +
            `set ${ENV.ssl}=true and/or ${ENV.saslMechanism}, ${ENV.saslUsername}, ${ENV.saslPassword}`
          : `; the broker closed the connection: if this listener is plaintext, unset ${ENV.ssl}; if it uses SASL, ` +
            `set ${ENV.saslMechanism}, ${ENV.saslUsername}, ${ENV.saslPassword}`
        : "";
      lines.push([
        "fix",
        `start the local services (${SERVICES_UP}), or set ${ENV.brokers} (or pass --brokers) to a reachable broker${hint}`,
      ]);
      return new ConnectionFailure({
        service: "kafka",
        kind: "unreachable",
        summary: `cannot reach Kafka at ${address}`,
        lines,
        cause,
      });
    }
    case "authentication":
      lines.push([
        "fix",
        sasl === undefined
          ? `set ${ENV.saslMechanism}, ${ENV.saslUsername} and ${ENV.saslPassword} for this listener`
          : `check ${ENV.saslUsername} and ${ENV.saslPassword}, and that ${ENV.saslMechanism}=${sasl.mechanism} is a mechanism this listener enables`,
      ]);
      return new ConnectionFailure({
        service: "kafka",
        kind: "authentication",
        summary:
          `Kafka at ${address} refused the ` +
          `${sasl === undefined ? "connection's" : `${sasl.mechanism.toUpperCase()} login of user "${sasl.username}"`} ` +
          `credentials`,
        lines,
        cause,
      });
    case "authorisation":
      lines.push([
        "fix",
        `grant the principal${sasl === undefined ? "" : ` User:${sasl.username}`} the ACLs this command needs ` +
          `(${symptom.code ?? "an operation"} was denied: e.g. kafka-acls --add --allow-principal User:... --operation ` +
          `All --topic 'agentops.' --resource-pattern-type prefixed, and --group for consumer groups), ` +
          `or connect as a principal that has them`,
      ]);
      return new ConnectionFailure({
        service: "kafka",
        kind: "authorisation",
        summary:
          `Kafka at ${address} denied ${sasl === undefined ? "this client" : `user "${sasl.username}"`} an operation ` +
          `(${symptom.code ?? "authorisation failed"})`,
        lines,
        cause,
      });
    case "missing-topic":
      lines.push([
        "fix",
        "create the project's topics: npx agentops topics apply (npx agentops run also creates missing ones); " +
          "check --topic-prefix / AGENTOPS_TOPIC_PREFIX if you use one",
      ]);
      return new ConnectionFailure({
        service: "kafka",
        kind: "missing-topic",
        summary: `a topic this command reads does not exist on Kafka at ${address}`,
        lines,
        cause,
      });
    default:
      return tlsFailure("kafka", symptom, address, lines, cause, {
        ca: ENV.sslCaFile,
        cert: ENV.sslCertFile,
        key: ENV.sslKeyFile,
        servername: ENV.sslServername,
      });
  }
}

function kafkaSecurityLine(kafka: KafkaConnection): string | undefined {
  const parts: string[] = [];
  if (kafka.tls !== undefined)
    parts.push(
      `TLS (${ENV.ssl}=true${Object.entries(kafka.tls.given)
        .map(([name, value]) => `, ${name}=${value}`)
        .join("")})`,
    );
  if (kafka.sasl !== undefined)
    parts.push(
      `SASL ${kafka.sasl.mechanism.toUpperCase()} as "${kafka.sasl.username}" (${ENV.saslMechanism}, ${ENV.saslUsername}, ${ENV.saslPassword})`,
    );
  return parts.length === 0 ? undefined : parts.join("; ");
}

function tlsFailure(
  service: "kafka" | "registry",
  symptom: Symptom,
  address: string,
  lines: Array<[string, string]>,
  cause: unknown,
  names: { ca: string; cert: string; key: string; servername: string },
): ConnectionFailure {
  const what = service === "kafka" ? "Kafka" : "the schema registry";
  switch (symptom.kind) {
    case "tls-untrusted":
      lines.push(["fix", `set ${names.ca} to the PEM file of the CA that signed ${what}'s certificate`]);
      return new ConnectionFailure({
        service,
        kind: "tls-untrusted",
        summary: `the TLS certificate of ${what} at ${address} is not trusted`,
        lines,
        cause,
      });
    case "tls-name":
      lines.push(["fix", `connect by a name the certificate carries, or set ${names.servername} to one of them`]);
      return new ConnectionFailure({
        service,
        kind: "tls-name",
        summary: `the TLS certificate of ${what} at ${address} does not match the name connected to`,
        lines,
        cause,
      });
    default:
      lines.push([
        "fix",
        `${what} refused the TLS handshake: if it requires a client certificate (mutual TLS), ` +
          `set ${names.cert} and ${names.key} to the PEM files of one its CA trusts`,
      ]);
      return new ConnectionFailure({
        service,
        kind: "tls-refused",
        summary: `${what} at ${address} refused the TLS handshake`,
        lines,
        cause,
      });
  }
}

/** `suggestion`: a URL that does answer as a Confluent-compatible root, when one was found. */
function registryFailure(
  symptom: Symptom,
  registry: RegistryConnection,
  cause: unknown,
  suggestion?: string,
): ConnectionFailure {
  const address = registry.url.value;
  const lines: Array<[string, string]> = [["address", `${address}, ${describeOrigin(registry.url.origin)}`]];
  if (registry.auth !== undefined)
    lines.push([
      "security",
      `basic auth as "${registry.auth.username}" (${ENV.registryUsername}, ${ENV.registryPassword})`,
    ]);
  if (registry.tls !== undefined && Object.keys(registry.tls.given).length > 0)
    lines.push([
      "tls",
      Object.entries(registry.tls.given)
        .map(([name, value]) => `${name}=${value}`)
        .join(", "),
    ]);
  lines.push(["cause", symptom.message]);
  switch (symptom.kind) {
    case "unreachable":
      lines.push([
        "fix",
        `start the local services (${SERVICES_UP}), or set ${ENV.registryUrl} (or pass --schema-registry) to a reachable registry`,
      ]);
      return new ConnectionFailure({
        service: "registry",
        kind: "unreachable",
        summary: `cannot reach the schema registry at ${address}`,
        lines,
        cause,
      });
    case "authentication":
      lines.push([
        "fix",
        registry.auth === undefined
          ? `the registry wants credentials: set ${ENV.registryUsername} and ${ENV.registryPassword} (basic auth)`
          : `check ${ENV.registryUsername} and ${ENV.registryPassword}`,
      ]);
      return new ConnectionFailure({
        service: "registry",
        kind: "authentication",
        summary: `the schema registry at ${address} refused the credentials (HTTP 401)`,
        lines,
        cause,
      });
    case "authorisation":
      lines.push([
        "fix",
        `give ${registry.auth === undefined ? "this client" : `user "${registry.auth.username}"`} read and write ` +
          `rights on the registry's subjects, or set ${ENV.registryUsername} / ${ENV.registryPassword} to a user that ` +
          `has them`,
      ]);
      return new ConnectionFailure({
        service: "registry",
        kind: "authorisation",
        summary: `the schema registry at ${address} denied access (HTTP 403)`,
        lines,
        cause,
      });
    case "wrong-path":
      lines.push([
        "fix",
        suggestion === undefined
          ? `set ${ENV.registryUrl} (or --schema-registry) to the Confluent-compatible API root: ` +
            `a Confluent registry's root URL, or Apicurio's .../apis/ccompat/v7`
          : `set ${ENV.registryUrl}=${suggestion} (Apicurio serves the Confluent-compatible API there)`,
      ]);
      return new ConnectionFailure({
        service: "registry",
        kind: "wrong-path",
        summary: `${address} is not a Confluent-compatible schema registry API root`,
        lines,
        cause,
      });
    default:
      return tlsFailure("registry", symptom, address, lines, cause, {
        ca: ENV.registryCaFile,
        cert: ENV.registryCertFile,
        key: ENV.registryKeyFile,
        servername: ENV.registryServername,
      });
  }
}

/** A Kafka client error as a ConnectionFailure, or undefined when it is not a connection problem. */
export function classifyKafkaError(error: unknown, kafka: KafkaConnection): ConnectionFailure | undefined {
  if (error instanceof ConnectionFailure) return error;
  const symptom = kafkaSymptom(error);
  return symptom === undefined ? undefined : kafkaFailure(symptom, kafka, error);
}

/** A registry client error as a ConnectionFailure, or undefined when it is not a connection problem. */
export function classifyRegistryError(
  error: unknown,
  registry: RegistryConnection,
  suggestion?: string,
): ConnectionFailure | undefined {
  if (error instanceof ConnectionFailure) return error;
  const symptom = registrySymptom(error);
  return symptom === undefined ? undefined : registryFailure(symptom, registry, error, suggestion);
}

/** Either client's error: Kafka's are recognised by kafkajs' error names, the rest is tried as the registry's. */
export function classifyConnectionError(error: unknown, settings: ConnectionSettings): ConnectionFailure | undefined {
  return classifyKafkaError(error, settings.kafka) ?? classifyRegistryError(error, settings.registry);
}
