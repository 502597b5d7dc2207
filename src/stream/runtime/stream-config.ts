import { tmpdir } from "node:os";
import { join } from "node:path";
import * as Effect from "effect/Effect";
import { z } from "zod";
import { DEFAULT_BROKERS, DEFAULT_SCHEMA_REGISTRY_URL } from "../../kafka/connection-addresses.ts";
import {
  DEFAULT_ENGINE_CONFIG,
  DEFAULT_WINDOW,
  engineConfigSchema,
  parseWindowSize,
} from "../../metrics/engine-config.ts";
import { PROCESSOR_NAMES } from "../topology.ts";
import { ConfigError } from "../../errors.ts";

/**
 * A processor instance's configuration, from flags first and environment second. Every value is
 * validated; a bad one names its flag and environment variable and the fix. Secrets (SASL
 * passwords) are never part of this object's log form.
 */
export const streamConfigSchema = z.strictObject({
  brokers: z.array(z.string().regex(/^[^\s:]+:\d{1,5}$/, "a broker is host:port")).min(1),
  schemaRegistryUrl: z.url(),
  instanceId: z.string().min(1).max(100),
  /** Consumer groups are `${groupPrefix}.ingest`, `.engine`, `.run-monitor`. */
  groupPrefix: z.string().min(1).max(100),
  /** Prefixes every topic name (`<prefix>.agentops.facts.v1`); empty for the standard names. */
  topicPrefix: z.string().regex(/^[A-Za-z0-9._-]{0,100}$/, "letters, digits, . _ - only"),
  roles: z.array(z.enum(PROCESSOR_NAMES)).min(1),
  // The engine's own rules for these two, so a window the replay refuses is refused here too.
  windowMillis: engineConfigSchema.shape.windowMillis,
  coverageThresholdHundredths: engineConfigSchema.shape.coverageThresholdHundredths,
  metricsPort: z.number().int().min(0).max(65535),
  /**
   * The URL other members reach this one's HTTP port at (explanations are routed to the member
   * owning the engine's partition, as Kafka Streams' application.server). Default: the loopback
   * address of the port.
   */
  advertisedUrl: z.url().optional(),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
  /**
   * How long SIGTERM may take: the batches in flight finish and commit, consumers leave their
   * groups, producers flush. Past it the instance exits non-zero, and the next member re-processes
   * what was not committed (at-least-once), rather than hanging on an unreachable broker.
   */
  shutdownTimeoutMs: z.number().int().min(1_000, "must be at least 1s").max(600_000, "must be at most 10m"),
  /**
   * How long the group coordinator waits for a member's heartbeat before moving its partitions to
   * another member. A member heartbeats every third of it (at most every 3 s), also while restoring
   * its state; a longer timeout rides out longer pauses (a slow disk, a long GC), a shorter one
   * moves a dead member's partitions sooner. The broker accepts 6s to 30m by default
   * (group.min/max.session.timeout.ms).
   */
  sessionTimeoutMs: z
    .number()
    .int()
    .min(6_000, "must be at least 6s (the broker's group.min.session.timeout.ms default)")
    .max(1_800_000, "must be at most 30m (the broker's group.max.session.timeout.ms default)"),
  /**
   * Where the engine keeps its state on disk, one store per engine partition. Default: under the
   * system's temporary directory, by group prefix and instance id, so a restarted instance with
   * the same --instance-id resumes from its checkpoint.
   */
  stateDir: z.string().min(1),
  /** The engine state's record cache, per partition (docs/engine-state.md §1). */
  stateCacheMb: z.number().int().min(1, "must be at least 1").max(65_536, "must be at most 65536"),
  /**
   * The engine role's topology: `single` (one partition; the default) or `stages` (the
   * partitioned engine: four stages on the partition count of topics.json's stage topics, shared
   * by any number of instances). Every instance of a deployment must use the same.
   */
  engineTopology: z.enum(["single", "stages"]),
});

export type StreamConfig = z.output<typeof streamConfigSchema>;

export const DEFAULT_SHUTDOWN_TIMEOUT = "30s";
export const DEFAULT_SESSION_TIMEOUT = "30s";
/**
 * The engine state's record cache per partition, MiB (Kafka Streams' default is 10 MiB per instance).
 * 16 rather than 32: a restoring member peaked lower and was as fast (bench/RESULTS.md, issue #13).
 */
export const DEFAULT_STATE_CACHE_MB = 16;

/** Flag name and environment variable for each field, so an error can name both. */
const SOURCES: Record<keyof StreamConfig, { flag: string; env: string; fix: string }> = {
  brokers: { flag: "--brokers", env: "KAFKA_BROKERS", fix: `give host:port[,host:port], e.g. ${DEFAULT_BROKERS}` },
  schemaRegistryUrl: {
    flag: "--schema-registry",
    env: "SCHEMA_REGISTRY_URL",
    fix: `give the registry's Confluent-compatible URL, e.g. ${DEFAULT_SCHEMA_REGISTRY_URL}`,
  },
  instanceId: {
    flag: "--instance-id",
    env: "AGENTOPS_INSTANCE_ID",
    fix: "give a short name for this instance, e.g. worker-1",
  },
  groupPrefix: { flag: "--group", env: "AGENTOPS_GROUP", fix: "give a consumer group prefix, e.g. agentops" },
  topicPrefix: {
    flag: "--topic-prefix",
    env: "AGENTOPS_TOPIC_PREFIX",
    fix: "give letters, digits, '.', '_' or '-' (or nothing for the standard topic names)",
  },
  roles: { flag: "--roles", env: "AGENTOPS_ROLES", fix: "give a comma-separated subset of ingest,engine,run-monitor" },
  windowMillis: {
    flag: "--window",
    env: "AGENTOPS_WINDOW",
    fix: "give a size dividing one day (1h, 15m) or whole days (1d)",
  },
  coverageThresholdHundredths: {
    flag: "--coverage-threshold",
    env: "AGENTOPS_COVERAGE_THRESHOLD",
    fix: "give a whole number from 0 to 99 (hundredths; 0 turns the alert off)",
  },
  metricsPort: { flag: "--metrics-port", env: "AGENTOPS_METRICS_PORT", fix: "give a free TCP port, or 0 to pick one" },
  advertisedUrl: {
    flag: "--advertised-url",
    env: "AGENTOPS_ADVERTISED_URL",
    fix: "give the http://host:port other members reach this one's --metrics-port at",
  },
  logLevel: {
    flag: "--log-level",
    env: "AGENTOPS_LOG_LEVEL",
    fix: "give one of fatal, error, warn, info, debug, trace, silent",
  },
  shutdownTimeoutMs: {
    flag: "--shutdown-timeout",
    env: "AGENTOPS_SHUTDOWN_TIMEOUT",
    fix: "give a duration from 1s to 10m, e.g. 30s",
  },
  sessionTimeoutMs: {
    flag: "--session-timeout",
    env: "AGENTOPS_SESSION_TIMEOUT",
    fix: "give a duration from 6s to 30m, e.g. 45s",
  },
  stateDir: {
    flag: "--state-dir",
    env: "AGENTOPS_STATE_DIR",
    fix: "give a writable directory for the engine's local state, e.g. /var/lib/agentops",
  },
  engineTopology: {
    flag: "--engine",
    env: "AGENTOPS_ENGINE",
    fix: "give single (one partition, the default) or stages (the partitioned engine)",
  },
  stateCacheMb: {
    flag: "--state-cache-mb",
    env: "AGENTOPS_STATE_CACHE_MB",
    fix: `give whole MiB from 1 to 65536 (default ${String(DEFAULT_STATE_CACHE_MB)})`,
  },
};

export type RawStreamConfig = Partial<Record<keyof StreamConfig, string | undefined>>;

/** Reads the environment's part of the configuration. */
export function configFromEnv(env: NodeJS.ProcessEnv): RawStreamConfig {
  const raw: RawStreamConfig = {};
  for (const [field, source] of Object.entries(SOURCES) as [
    keyof StreamConfig,
    (typeof SOURCES)[keyof StreamConfig],
  ][]) {
    const value = env[source.env];
    if (value !== undefined && value !== "") raw[field] = value;
  }
  return raw;
}
/**
 * `<tmp>/agentops-state/<group prefix>/<instance id>`: an instance started without --instance-id
 * (whose id is its pid) uses `default`, so that it too finds its state after a restart.
 */
function defaultStateDir(merged: RawStreamConfig): string {
  const group =
    merged.groupPrefix ??
    (merged.topicPrefix === undefined || merged.topicPrefix === "" ? "agentops" : `${merged.topicPrefix}.agentops`);
  return join(tmpdir(), "agentops-state", group, merged.instanceId ?? "default");
}

/** Flags override environment, which overrides defaults; then everything is validated. */
export function resolveStreamConfig(
  flags: RawStreamConfig,
  env: NodeJS.ProcessEnv,
): Effect.Effect<StreamConfig, ConfigError> {
  const merged: RawStreamConfig = {
    ...configFromEnv(env),
    ...Object.fromEntries(Object.entries(flags).filter(([, value]) => value !== undefined)),
  };
  const window = merged.windowMillis ?? DEFAULT_WINDOW;
  const windowMillis = parseWindowSize(window);
  const candidate = {
    brokers: (merged.brokers ?? DEFAULT_BROKERS)
      .split(",")
      .map((broker) => broker.trim())
      .filter((broker) => broker !== ""),
    schemaRegistryUrl: (merged.schemaRegistryUrl ?? DEFAULT_SCHEMA_REGISTRY_URL).replace(/\/+$/, ""),
    instanceId: merged.instanceId ?? `agentops-${process.pid}`,
    // Deployments sharing a cluster under different topic prefixes must not share consumer groups.
    groupPrefix:
      merged.groupPrefix ??
      (merged.topicPrefix === undefined || merged.topicPrefix === "" ? "agentops" : `${merged.topicPrefix}.agentops`),
    topicPrefix: merged.topicPrefix ?? "",
    roles: (merged.roles ?? PROCESSOR_NAMES.join(",")).split(",").map((role) => role.trim()),
    windowMillis: windowMillis ?? Number.NaN,
    coverageThresholdHundredths:
      merged.coverageThresholdHundredths === undefined
        ? DEFAULT_ENGINE_CONFIG.coverageThresholdHundredths
        : Number(merged.coverageThresholdHundredths),
    metricsPort: merged.metricsPort === undefined ? 9464 : Number(merged.metricsPort),
    ...(merged.advertisedUrl === undefined ? {} : { advertisedUrl: merged.advertisedUrl.replace(/\/+$/, "") }),
    logLevel: merged.logLevel ?? "info",
    // Durations read like window sizes (30s, 2m), so one parser serves both.
    shutdownTimeoutMs: parseWindowSize(merged.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT) ?? Number.NaN,
    sessionTimeoutMs: parseWindowSize(merged.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT) ?? Number.NaN,
    stateDir: merged.stateDir ?? defaultStateDir(merged),
    stateCacheMb: merged.stateCacheMb === undefined ? DEFAULT_STATE_CACHE_MB : Number(merged.stateCacheMb),
    engineTopology: merged.engineTopology ?? "single",
  };
  const parsed = streamConfigSchema.safeParse(candidate);
  if (parsed.success) return Effect.succeed(parsed.data);
  const issue = parsed.error.issues[0];
  const field = (issue?.path[0] ?? "brokers") as keyof StreamConfig;
  const source = SOURCES[field];
  return Effect.fail(
    new ConfigError({
      field: `${source.flag} / ${source.env}`,
      problem: issue?.message ?? "invalid value",
      fix: source.fix,
    }),
  );
}
