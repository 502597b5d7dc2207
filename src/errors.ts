import * as Data from "effect/Data";

/**
 * The failures of a running program, one tagged error per failure domain. They live at the top
 * of src/ because every layer raises them: kafka/ (connection settings, the broker) must not
 * import stream/.
 */

/** A configuration value a user gave is wrong: which field, what is wrong, how to fix it. */
export class ConfigError extends Data.TaggedError("ConfigError")<{
  readonly field: string;
  readonly problem: string;
  readonly fix: string;
}> {
  override get message(): string {
    return `${this.field}: ${this.problem}. Fix: ${this.fix}`;
  }
}

/** The broker refused or timed out on a produce, commit, fetch or metadata call (retried before surfacing). */
export class KafkaIoError extends Data.TaggedError("KafkaIoError")<{
  readonly operation: string;
  readonly cause: unknown;
}> {
  override get message(): string {
    return `kafka ${this.operation} failed: ${causeText(this.cause)}`;
  }
}

/** The schema registry refused or could not be reached. */
export class RegistryError extends Data.TaggedError("RegistryError")<{
  readonly operation: string;
  readonly cause: unknown;
}> {
  override get message(): string {
    return `schema registry ${this.operation} failed: ${causeText(this.cause)}`;
  }
}

/** The /metrics and /healthz endpoint could not listen. */
export class TelemetryServerError extends Data.TaggedError("TelemetryServerError")<{
  readonly address: string;
  readonly cause: unknown;
}> {
  override get message(): string {
    return `cannot serve /metrics on ${this.address}: ${causeText(this.cause)}`;
  }
}

/** A file, or a store on local disk, could not be read or written. */
export class FileIoError extends Data.TaggedError("FileIoError")<{
  readonly path: string;
  readonly operation: string;
  readonly cause: unknown;
}> {
  override get message(): string {
    return `${this.operation} ${this.path} failed: ${causeText(this.cause)}`;
  }
}

/** A processor's batch failed (a bug: processors do not do I/O); the instance stops and is restarted. */
export class ProcessorError extends Data.TaggedError("ProcessorError")<{
  readonly processor: string;
  readonly cause: unknown;
}> {
  override get message(): string {
    return `processor ${this.processor} failed: ${causeText(this.cause)}`;
  }
}

/**
 * A sink record could not be encoded in the form its topic carries (a value the topic's schema
 * cannot hold): a bug, like a failing processor, so the instance stops rather than skip the record.
 */
export class EncodeError extends Data.TaggedError("EncodeError")<{ readonly topic: string; readonly cause: unknown }> {
  override get message(): string {
    return `encoding a record for ${this.topic} failed: ${causeText(this.cause)}`;
  }
}

/**
 * Code broke one of its own invariants (a processor returned a record its role cannot carry, a
 * stage read a topic it does not read): a bug, so the instance stops rather than guess.
 */
export class InvariantError extends Data.TaggedError("InvariantError")<{
  readonly problem: string;
  readonly cause?: unknown;
}> {
  override get message(): string {
    return this.cause === undefined ? this.problem : `${this.problem}: ${causeText(this.cause)}`;
  }
}

/** What running a topology on a transport can fail with. */
export type TransportError =
  ConfigError | KafkaIoError | RegistryError | TelemetryServerError | FileIoError | ProcessorError | EncodeError;

function causeText(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
