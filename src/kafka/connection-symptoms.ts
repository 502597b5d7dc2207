import * as Cause from "effect/Cause";
import * as Runtime from "effect/Runtime";
import type { FailureKind } from "./connection-failure.ts";

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

export type Symptom = {
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

export function kafkaSymptom(error: unknown): Symptom | undefined {
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

export function registrySymptom(error: unknown): Symptom | undefined {
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
