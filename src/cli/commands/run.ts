import { Cause, Deferred, Effect, Exit, Fiber, Option } from "effect";
import { classifyConnectionError } from "../../kafka/connection-errors.ts";
import { resolveConnectionSettings } from "../../kafka/connection-settings.ts";
import { runInstance } from "../../stream/processor-runtime.ts";
import { resolveStreamConfig, type RawStreamConfig } from "../../stream/stream-config.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { parseFlags, stringFlag } from "../flags.ts";

const USAGE = `Usage: agentops run [--brokers host:port[,...]] [--schema-registry URL] [--roles ingest,engine,run-monitor]
                    [--instance-id NAME] [--group PREFIX] [--topic-prefix PREFIX]
                    [--window 1d] [--coverage-threshold 10] [--metrics-port 9464] [--log-level info]
                    [--engine-thread auto|on|off]

Starts one processor instance on Kafka. Every flag can also come from the environment:
KAFKA_BROKERS, SCHEMA_REGISTRY_URL, AGENTOPS_ROLES, AGENTOPS_INSTANCE_ID, AGENTOPS_GROUP,
AGENTOPS_TOPIC_PREFIX, AGENTOPS_WINDOW, AGENTOPS_COVERAGE_THRESHOLD, AGENTOPS_METRICS_PORT,
AGENTOPS_LOG_LEVEL, AGENTOPS_ENGINE_THREAD (flags win). The engine role runs on a thread of its
own (a second core) when the instance has other roles too: --engine-thread auto (the default) does
so when the machine has more than one core; on and off force it. Missing topics are created from topics/topics.json.
More instances with the same --group share the work (consumer groups). SIGTERM or Ctrl-C stops
consumers cleanly, committing what was processed. Logs are JSON lines (pino) on stdout;
/metrics (Prometheus) and /healthz are served on 127.0.0.1:<metrics-port>.`;

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
  "log-level": "logLevel",
  "engine-thread": "engineThread",
} as const;

export const runCommand: CliCommand = {
  name: "run",
  summary: "start a processor instance on Kafka (ingest, engine, run monitor)",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(argv, Object.fromEntries(Object.keys(FLAG_FIELDS).map((flag) => [flag, { type: "string" as const }])), "run");
    const raw: RawStreamConfig = {};
    for (const [flag, field] of Object.entries(FLAG_FIELDS)) raw[field] = stringFlag(flags, flag);
    const config = await Effect.runPromise(Effect.either(resolveStreamConfig(raw, process.env)));
    if (config._tag === "Left") throw new UsageError(config.left.field, config.left.problem, config.left.fix);
    // Security settings are checked here, before anything connects (a ConfigError names the variable).
    const settings = resolveConnectionSettings({ brokers: raw.brokers, schemaRegistry: raw.schemaRegistryUrl });

    // Runs until interrupted (SIGTERM, Ctrl-C: exit 0) or until a role fails for good (exit 1).
    const fiber = Effect.runFork(Effect.scoped(Effect.flatMap(runInstance(config.right), ({ failure }) => Deferred.await(failure))));
    const stop = (): void => {
      void Effect.runPromise(Fiber.interrupt(fiber));
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    const exit = await Effect.runPromise(Fiber.await(fiber));
    if (Exit.isInterrupted(exit)) return 0;
    if (Exit.isFailure(exit)) {
      // Refused credentials, untrusted certificates, a wrong registry path: not retried, and told plainly.
      const failure = Option.getOrUndefined(Cause.failureOption(exit.cause));
      const connection = failure === undefined ? undefined : classifyConnectionError(failure.cause, settings);
      if (connection !== undefined) throw connection;
      process.stderr.write(`agentops run: ${Cause.pretty(exit.cause)}\n`);
      return 1;
    }
    return 0;
  },
};
