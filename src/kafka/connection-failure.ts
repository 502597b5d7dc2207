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
