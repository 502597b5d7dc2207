import { Cause, Runtime } from "effect";
import {
  ENV,
  describeOrigin,
  type ConnectionSettings,
  type KafkaConnection,
  type RegistryConnection,
} from "./connection-settings.ts";

/**
 * What went wrong between us and the broker or the registry, in the terms an operator acts on:
 * unreachable, authentication refused, authorisation refused, a TLS certificate not trusted or
 * not matching the name, the server refusing our TLS handshake (a client certificate it wants),
 * or a registry URL that is not a Confluent-compatible API root. Each becomes a ConnectionFailure
 * that names the address, where it came from, the variables involved and the fix; the CLI prints
 * it without a stack trace. Only "unreachable" is worth retrying: a broker or registry may still be
 * starting, but a refused password or an untrusted certificate stays refused.
 */
export type FailureKind =
  | "unreachable"
  | "authentication"
  | "authorisation"
  | "tls-untrusted"
  | "tls-name"
  | "tls-refused"
  | "wrong-path"
  | "missing-topic";

const REASONS: Record<"kafka" | "registry", Partial<Record<FailureKind, string>>> = {
  kafka: {
    unreachable: "KAFKA_UNREACHABLE",
    authentication: "KAFKA_AUTHENTICATION_FAILED",
    authorisation: "KAFKA_AUTHORISATION_FAILED",
    "tls-untrusted": "KAFKA_TLS_UNTRUSTED",
    "tls-name": "KAFKA_TLS_NAME_MISMATCH",
    "tls-refused": "KAFKA_TLS_REFUSED",
    "missing-topic": "KAFKA_TOPIC_MISSING",
  },
  registry: {
    unreachable: "REGISTRY_UNREACHABLE",
    authentication: "REGISTRY_AUTHENTICATION_FAILED",
    authorisation: "REGISTRY_AUTHORISATION_FAILED",
    "tls-untrusted": "REGISTRY_TLS_UNTRUSTED",
    "tls-name": "REGISTRY_TLS_NAME_MISMATCH",
    "tls-refused": "REGISTRY_TLS_REFUSED",
    "wrong-path": "REGISTRY_WRONG_PATH",
  },
};

export interface FailureDetail {
  readonly service: "kafka" | "registry";
  readonly kind: FailureKind;
  /** One line: what failed, e.g. "cannot reach Kafka at 127.0.0.1:19092". */
  readonly summary: string;
  /** Labelled lines: address (and its origin), mechanism, cause, fix. */
  readonly lines: readonly (readonly [label: string, text: string])[];
  readonly cause: unknown;
}

export class ConnectionFailure extends Error {
  readonly service: "kafka" | "registry";
  readonly kind: FailureKind;
  /** Machine-readable, e.g. KAFKA_AUTHENTICATION_FAILED. */
  readonly reason: string;
  readonly lines: readonly (readonly [string, string])[];
  override readonly cause: unknown;
  constructor(detail: FailureDetail) {
    const reason =
      REASONS[detail.service][detail.kind] ??
      `${detail.service.toUpperCase()}_${detail.kind.toUpperCase().replace(/-/g, "_")}`;
    super(`${detail.summary} [${reason}]`);
    this.name = "ConnectionFailure";
    this.service = detail.service;
    this.kind = detail.kind;
    this.reason = reason;
    this.lines = detail.lines;
    this.cause = detail.cause;
  }

  /** The message, then one aligned line per detail; the cause's stack only when asked (--log-level debug). */
  render(withStack = false): string {
    const width = Math.max(...this.lines.map(([label]) => label.length)) + 1;
    const body = this.lines.map(([label, text]) => `  ${`${label}:`.padEnd(width)} ${text}`);
    const stack = withStack ? [`  stack:`, ...causeChain(this.cause).map((line) => `    ${line}`)] : [];
    return [this.message, ...body, ...stack].join("\n");
  }
}

function causeChain(error: unknown): string[] {
  const lines: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth += 1) {
    lines.push(...(current instanceof Error ? (current.stack ?? current.message) : String(current)).split("\n"));
    current = current instanceof Error ? current.cause : undefined;
  }
  return lines;
}

/**
 * Whether waiting may help: an unreachable service (it may be starting) or an error that is not a
 * connection problem at all (left to the caller's retry policy). Authentication, authorisation, TLS
 * and wrong-path failures stay what they are: retrying them only delays the message.
 */
export function isRetriableError(error: unknown): boolean {
  const symptom = kafkaSymptom(error) ?? registrySymptom(error);
  return symptom === undefined || symptom.kind === "unreachable";
}

const TLS_UNTRUSTED = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
]);
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "ECONNRESET",
  "EPIPE",
]);

type Symptom = {
  readonly kind: FailureKind;
  readonly code: string | undefined;
  readonly message: string;
  readonly broker?: string;
  readonly status?: number;
};

/** The innermost error of a chain that carries a socket or TLS code, else the deepest one. */
function errorsOf(
  error: unknown,
): Array<Error & { code?: unknown; type?: unknown; broker?: unknown; status?: unknown }> {
  const chain: Array<Error & { code?: unknown }> = [];
  // An Effect program run with runPromise rejects with a FiberFailure: read the failure it carries.
  let current: unknown = Runtime.isFiberFailure(error) ? Cause.squash(error[Runtime.FiberFailureCauseId]) : error;
  for (let depth = 0; current instanceof Error && depth < 8; depth += 1) {
    chain.push(current);
    current = current.cause;
  }
  return chain;
}

function codeOf(error: { code?: unknown }): string | undefined {
  return typeof error.code === "string" ? error.code : undefined;
}

/** TLS symptoms by the Node/OpenSSL code, or by message where a client library dropped the code. */
function tlsSymptom(code: string | undefined, message: string): FailureKind | undefined {
  if (code !== undefined && TLS_UNTRUSTED.has(code)) return "tls-untrusted";
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID" || /does not match certificate's altnames/i.test(message))
    return "tls-name";
  if (
    /self[- ]signed certificate|unable to verify the first certificate|unable to get (local )?issuer certificate|certificate has expired/i.test(
      message,
    )
  )
    return "tls-untrusted";
  if (
    (code !== undefined && /^ERR_SSL_/.test(code)) ||
    /SSL alert number|alert (bad|unknown|handshake|certificate)|certificate required/i.test(message)
  )
    return "tls-refused";
  return undefined;
}

function kafkaSymptom(error: unknown): Symptom | undefined {
  const chain = errorsOf(error);
  if (chain.length === 0) return undefined;
  // kafkajs names: a top-level KafkaJS* error means the failure came from the Kafka client.
  if (!chain.some((link) => link.name.startsWith("KafkaJS"))) return undefined;
  const broker = chain.map((link) => link.broker).find((value): value is string => typeof value === "string");
  const base = broker === undefined ? {} : { broker };
  for (const link of chain) {
    const code = codeOf(link);
    if (
      link.name === "KafkaJSSASLAuthenticationError" ||
      /SASL .*(authentication failed|mechanism)/i.test(link.message)
    )
      return { kind: "authentication", code, message: link.message, ...base };
    const type = typeof link.type === "string" ? link.type : undefined;
    if (type !== undefined && /AUTHORIZATION_FAILED$/.test(type))
      return { kind: "authorisation", code: type, message: link.message, ...base };
    if (type === "UNKNOWN_TOPIC_OR_PARTITION")
      return { kind: "missing-topic", code: type, message: link.message, ...base };
    if (type === "SASL_AUTHENTICATION_FAILED" || type === "ILLEGAL_SASL_STATE" || type === "UNSUPPORTED_SASL_MECHANISM")
      return { kind: "authentication", code: type, message: link.message, ...base };
    const tls = tlsSymptom(code, link.message);
    if (tls !== undefined) return { kind: tls, code, message: link.message, ...base };
  }
  for (const link of chain) {
    const code = codeOf(link);
    if (
      (code !== undefined && UNREACHABLE.has(code)) ||
      link.name === "KafkaJSConnectionError" ||
      link.name === "KafkaJSConnectionClosedError" ||
      link.name === "KafkaJSBrokerNotFound" ||
      link.name === "KafkaJSNoBrokerAvailableError" ||
      /Connection (timeout|error)|Closed connection|ECONNREFUSED/.test(link.message)
    ) {
      return { kind: "unreachable", code, message: (chain[chain.length - 1] ?? link).message, ...base };
    }
  }
  return undefined;
}

function registrySymptom(error: unknown): Symptom | undefined {
  const chain = errorsOf(error);
  for (const link of chain) {
    const status = typeof link.status === "number" ? link.status : undefined;
    const code = codeOf(link);
    const message = link.message.replace(/^Confluent_Schema_Registry - /, "").replace(/^agentops-stream - /, "");
    // The Confluent client reports a socket failure as status 400 with the socket's message.
    const tls = tlsSymptom(code, message);
    if (tls !== undefined) return { kind: tls, code, message };
    if (status === 401) return { kind: "authentication", code, message, status };
    if (status === 403) return { kind: "authorisation", code, message, status };
    // A 5xx is a registry that is up but not serving (starting, or its storage is down): as unreachable;
    // so is a request past its bound ("Timeout (30000ms)", src/kafka/registry.ts).
    if (
      (code !== undefined && UNREACHABLE.has(code)) ||
      (status !== undefined && status >= 500) ||
      /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|socket hang up|Timeout \(\d+ms\)/.test(message)
    )
      return { kind: "unreachable", code, message };
    if (
      link.name === "RegistryPathError" ||
      (status === 404 && !/"?error_code"?/.test(message) && !/not found\.?$/i.test(message))
    )
      return { kind: "wrong-path", code, message, status: 404 };
  }
  return undefined;
}

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
