import { Data } from "effect";

/** A configuration value a user gave is wrong: which field, what is wrong, how to fix it. */
export class ConfigError extends Data.TaggedError("ConfigError")<{ readonly field: string; readonly problem: string; readonly fix: string }> {
  override get message(): string {
    return `${this.field}: ${this.problem}. Fix: ${this.fix}`;
  }
}

/** The broker refused or timed out on a produce, commit or metadata call (retried before surfacing). */
export class KafkaIoError extends Data.TaggedError("KafkaIoError")<{ readonly operation: string; readonly cause: unknown }> {
  override get message(): string {
    return `kafka ${this.operation} failed: ${this.cause instanceof Error ? this.cause.message : String(this.cause)}`;
  }
}

/** The schema registry refused or could not be reached while encoding. */
export class RegistryError extends Data.TaggedError("RegistryError")<{ readonly operation: string; readonly cause: unknown }> {
  override get message(): string {
    return `schema registry ${this.operation} failed: ${this.cause instanceof Error ? this.cause.message : String(this.cause)}`;
  }
}
