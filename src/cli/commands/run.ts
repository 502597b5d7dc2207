import * as Cause from "effect/Cause";
import * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Fiber from "effect/Fiber";
import * as Option from "effect/Option";
import { ConfigError } from "../../errors.ts";
import { classifyConnectionError } from "../../kafka/connection-errors.ts";
import { resolveConnectionSettings } from "../../kafka/connection-settings.ts";
import { runInstance, type RunningInstance } from "../../stream/runtime/processor-runtime.ts";
import { resolveStreamConfig, type RawStreamConfig } from "../../stream/runtime/stream-config.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { parseFlags, stringFlag } from "../flags.ts";

const USAGE = `Usage: agentops run [--brokers host:port[,...]] [--schema-registry URL] [--roles ingest,engine,run-monitor]
                    [--instance-id NAME] [--group PREFIX] [--topic-prefix PREFIX]
                    [--window 1d] [--coverage-threshold 10] [--metrics-port 9464] [--advertised-url URL] [--log-level info]
                    [--shutdown-timeout 30s] [--session-timeout 30s] [--state-dir DIR] [--state-cache-mb 16]
                    [--engine single|stages]

Starts one processor instance on Kafka. Every flag can also come from the environment:
KAFKA_BROKERS, SCHEMA_REGISTRY_URL, AGENTOPS_ROLES, AGENTOPS_INSTANCE_ID, AGENTOPS_GROUP,
AGENTOPS_TOPIC_PREFIX, AGENTOPS_WINDOW, AGENTOPS_COVERAGE_THRESHOLD, AGENTOPS_METRICS_PORT, AGENTOPS_ADVERTISED_URL,
AGENTOPS_LOG_LEVEL, AGENTOPS_SHUTDOWN_TIMEOUT, AGENTOPS_SESSION_TIMEOUT, AGENTOPS_STATE_DIR,
AGENTOPS_STATE_CACHE_MB, AGENTOPS_ENGINE (flags win). Roles are processes: to give the engine
a core of its own, run it as a second instance (--roles engine) beside one with --roles
ingest,run-monitor. Missing topics are created from topics/topics.json.
More instances with the same --group share the work (consumer groups). SIGTERM or Ctrl-C stops
consumers cleanly, committing what was processed, within --shutdown-timeout (default 30s): exit 0
when everything processed was committed, 1 when something could not be (the next member
re-processes it) or the bound passed. A member silent for --session-timeout (default 30s, 6s to
30m) loses its partitions to the others; it heartbeats every third of it, also while it restores
its state. Logs are JSON lines (pino) on stdout;
/metrics (Prometheus), /healthz and /explain (agentops explain --member) are served on
127.0.0.1:<metrics-port>; --advertised-url is the address other members give for it (default
http://127.0.0.1:<port>), found through the engine's consumer group, so that any member answers an
explanation, redirecting to the one that owns the engine's partition.
The engine keeps its state on disk under --state-dir (default <tmp>/agentops-state/<group>/<instance-id>),
checkpointed with the offset it reflects: restarted with the same --instance-id it resumes in seconds;
without that directory it rebuilds from the engine-facts topic. --state-cache-mb bounds its in-memory
record cache per engine partition.
--engine stages runs the partitioned engine instead of the single one (docs/engine-state.md §4):
ingest writes accepted facts to the stage facts topic placed by fact_id, and the engine role runs
four stages (fact ledger, domain ledger, entities, aggregation) on the partition count of the stage
topics in topics/topics.json, shared by every instance with the same --group. Every instance of a
deployment must use the same --engine.`;

const FLAG_FIELDS = {
  brokers: "brokers",
  "schema-registry": "schemaRegistryUrl",
  roles: "roles",
  "instance-id": "instanceId",
  group: "groupPrefix",
  "topic-prefix": "topicPrefix",
  window: "windowMillis",
  "coverage-threshold": "coverageThresholdHundredths",
  "metrics-port": "metricsPort",
  "advertised-url": "advertisedUrl",
  "log-level": "logLevel",
  "shutdown-timeout": "shutdownTimeoutMs",
  "session-timeout": "sessionTimeoutMs",
  "state-dir": "stateDir",
  "state-cache-mb": "stateCacheMb",
  engine: "engineTopology",
} as const;

export const runCommand: CliCommand = {
  name: "run",
  summary: "start a processor instance on Kafka (ingest, engine, run monitor)",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(
      argv,
      Object.fromEntries(Object.keys(FLAG_FIELDS).map((flag) => [flag, { type: "string" as const }])),
      "run",
    );
    const raw: RawStreamConfig = {};
    for (const [flag, field] of Object.entries(FLAG_FIELDS)) raw[field] = stringFlag(flags, flag);
    const config = await Effect.runPromise(Effect.either(resolveStreamConfig(raw, process.env)));
    if (config._tag === "Left") throw new UsageError(config.left.field, config.left.problem, config.left.fix);
    // Security settings are checked here, before anything connects (a ConfigError names the variable).
    const settings = resolveConnectionSettings({ brokers: raw.brokers, schemaRegistry: raw.schemaRegistryUrl });

    // Runs until interrupted (SIGTERM, Ctrl-C: exit 0) or until a role fails for good (exit 1).
    let instance: RunningInstance | undefined;
    const fiber = Effect.runFork(
      Effect.scoped(
        Effect.flatMap(runInstance(config.right), (running) => {
          instance = running;
          return Deferred.await(running.failure);
        }),
      ),
    );
    const { shutdownTimeoutMs } = config.right;
    let stopping = false;
    const stop = (): void => {
      if (stopping) return;
      stopping = true;
      // Closing the scope waits on the broker (the batch in flight, leaving the group); an
      // unreachable broker must not keep the process alive past the bound a supervisor expects.
      setTimeout(() => {
        process.stderr.write(
          `agentops run: shutdown did not finish within ${shutdownTimeoutMs} ms; ` +
            `processed offsets may not be committed (the next member re-processes them). Exiting with 1.\n`,
        );
        process.exit(1);
      }, shutdownTimeoutMs).unref();
      void Effect.runPromise(Fiber.interrupt(fiber));
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    const exit = await Effect.runPromise(Fiber.await(fiber));
    if (Exit.isInterrupted(exit)) {
      const uncommitted = instance?.uncommittedRoles() ?? [];
      if (uncommitted.length === 0) return 0;
      process.stderr.write(
        `agentops run: stopped, but ${uncommitted.join(", ")} could not commit processed offsets (the next member re-processes them)\n`,
      );
      return 1;
    }
    if (Exit.isFailure(exit)) {
      // Refused credentials, untrusted certificates, a wrong registry path: not retried, and told plainly.
      const failure = Option.getOrUndefined(Cause.failureOption(exit.cause));
      const connection = failure === undefined ? undefined : classifyConnectionError(failure.cause, settings);
      if (connection !== undefined) throw connection;
      // A misconfigured cluster (the stages' topics of two partition counts) is told as its field and fix.
      if (failure instanceof ConfigError) throw failure;
      process.stderr.write(`agentops run: ${Cause.pretty(exit.cause)}\n`);
      return 1;
    }
    return 0;
  },
};
