import { orderedProducer } from "../../kafka/client.ts";
import { statSync } from "node:fs";
import { pino, type Logger } from "pino";
import { fileDeadLetters, topicDeadLetters } from "../../notify/dead-letter-sinks.ts";
import { Notifier } from "../../notify/notifier.ts";
import { notifyFromFiles, notifyFromTopics } from "../../notify/notify-sources.ts";
import { loadNotifyConfig } from "../../notify/webhook-config.ts";
import { CLUSTER_FLAGS, withCluster } from "../cluster-flags.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { booleanFlag, parseFlags, stringFlag } from "../flags.ts";
import { deadLetterKey, type DeadLetterRecord } from "../../contract/dead-letter.ts";

const USAGE = `Usage: agentops notify --webhooks hooks.json --alerts <alerts.ndjson> [--results <results.ndjson>]
                       --dlq <failed.ndjson>
       agentops notify --webhooks hooks.json --from-topics [--group agentops-notify] [--from-beginning]
                       [--brokers host:port] [--schema-registry URL] [--topic-prefix P]

Sends tripwire alerts and LOW_COVERAGE changes to webhooks (generic JSON or Slack incoming
webhooks), at least once: each delivery is retried with backoff, carries a delivery key (header
Idempotency-Key and field delivery_key) that is the same on every retry and redelivery, and a
delivery that keeps failing goes to the dead-letter topic (--dlq file in file mode). It runs
apart from the run monitor, so a slow webhook never holds it up.

  --webhooks     JSON file: {"webhooks": [{"name", "format": "json"|"slack", "url": {"env": VAR} | {"file": PATH},
                 "token"?: {"env"|"file"}, "events"?: ["alert","coverage"], "minSeverity"?: "warning"|"critical"}],
                 "delivery"?: {"attempts": 5, "timeoutMs": 5000, "backoffMs": 500, "maxBackoffMs": 8000}}
                 URLs and tokens come only from environment variables or files and are never logged
  --alerts       a replay's alerts file: every alert is sent (one pass, then exit)
  --results      a replay's results file: every result in LOW_COVERAGE is sent
  --dlq          file for deliveries that kept failing (file mode); exit code 1 when any were written
  --from-topics  follow the alerts and results topics with consumer group --group until Ctrl-C
  --group        the consumer group (default agentops-notify): a restart resumes where it committed
  --from-beginning  a new group starts at the topics' beginning and sends their history (default: the end)
  --log-level    info (default), debug, warn, error; logs are JSON lines on stderr`;

const FLAGS = {
  webhooks: { type: "string" },
  alerts: { type: "string" },
  results: { type: "string" },
  dlq: { type: "string" },
  "from-topics": { type: "boolean" },
  group: { type: "string" },
  "from-beginning": { type: "boolean" },
  ...CLUSTER_FLAGS,
} as const;

const LOG_LEVELS = new Set(["trace", "debug", "info", "warn", "error", "fatal", "silent"]);

function readableFile(flag: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    if (statSync(path).isFile()) return path;
  } catch {
    // named below
  }
  const fix =
    "write it first with `agentops replay --input samples/facts.ndjson --output out/results.ndjson" +
    " --alerts out/alerts.ndjson`";
  throw new UsageError(`--${flag}`, `cannot read ${path}`, fix);
}

function logger(level: string | undefined): Logger {
  const chosen = level ?? process.env["AGENTOPS_LOG_LEVEL"] ?? "info";
  if (!LOG_LEVELS.has(chosen)) {
    throw new UsageError("--log-level", `"${chosen}" is not a level`, `give one of ${[...LOG_LEVELS].join(", ")}`);
  }
  return pino({ name: "agentops-notify", level: chosen }, pino.destination(2));
}

function stopSignal(): AbortController {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return controller;
}

export const notifyCommand: CliCommand = {
  name: "notify",
  summary: "send tripwire alerts and LOW_COVERAGE changes to webhooks (JSON, Slack), at least once",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(argv, FLAGS, "notify");
    const webhooksPath = stringFlag(flags, "webhooks");
    if (webhooksPath === undefined) {
      const fix = "give the webhook configuration file, e.g. --webhooks ops/notify/webhooks.example.json";
      throw new UsageError("--webhooks", "is required", fix);
    }
    const fromTopics = booleanFlag(flags, "from-topics");
    const alerts = readableFile("alerts", stringFlag(flags, "alerts"));
    const results = readableFile("results", stringFlag(flags, "results"));
    const dlq = stringFlag(flags, "dlq");
    if (fromTopics && (alerts !== undefined || results !== undefined || dlq !== undefined)) {
      const fix = "notify either from a replay's files or from the Kafka topics";
      throw new UsageError("--from-topics", "cannot be combined with --alerts/--results/--dlq", fix);
    }
    if (!fromTopics && alerts === undefined && results === undefined) {
      const fix = "give --alerts and/or --results (a replay's files), or --from-topics";
      throw new UsageError("--alerts", "no source was named", fix);
    }
    const topicOnly = ["group", "from-beginning"].find((flag) => flags.values[flag] !== undefined);
    if (!fromTopics && topicOnly !== undefined) {
      throw new UsageError(`--${topicOnly}`, "only applies with --from-topics", "add --from-topics, or drop it");
    }
    if (!fromTopics && dlq === undefined) {
      const fix = "name a file for deliveries that keep failing, e.g. --dlq out/notify-failed.ndjson";
      throw new UsageError("--dlq", "is required in file mode", fix);
    }
    const log = logger(stringFlag(flags, "log-level"));
    const config = loadNotifyConfig(webhooksPath);

    if (dlq !== undefined) {
      const stop = stopSignal();
      const notifier = new Notifier(config, fileDeadLetters(dlq), log, stop.signal);
      await notifyFromFiles({ alerts, results }, notifier, log);
      const { delivered, deadLettered, aborted } = notifier.summary;
      process.stdout.write(`${delivered} delivered, ${deadLettered} dead-lettered to ${dlq}, ${aborted} stopped\n`);
      return deadLettered > 0 || aborted > 0 ? 1 : 0;
    }
    const groupId = stringFlag(flags, "group") ?? "agentops-notify";
    return withCluster(flags, "agentops-notify", async ({ kafka, registry, serde, topics }) => {
      await serde.registerAll();
      const producer = orderedProducer(kafka);
      await producer.connect();
      const stop = stopSignal();
      const notifier = new Notifier(config, topicDeadLetters(producer, serde, topics.deadLetters), log, stop.signal);
      const stopping = stop.signal;
      const fromBeginning = booleanFlag(flags, "from-beginning");
      let exitCode = 0;
      const onFatal = (): void => {
        exitCode = 1;
        stop.abort();
      };
      const undecodable = async (letter: DeadLetterRecord): Promise<void> => {
        const value = await serde.encodeDeadLetter(letter);
        await producer.send({ topic: topics.deadLetters, messages: [{ key: deadLetterKey(letter), value }] });
      };
      const options = {
        kafka,
        serde,
        registry,
        undecodable,
        topics,
        groupId,
        notifier,
        stopping,
        logger: log,
        fromBeginning,
        onFatal,
      };
      const running = await notifyFromTopics(options);
      const webhooks = config.webhooks.map((hook) => hook.name);
      log.info({ group: groupId, topics: [topics.alerts, topics.results], webhooks }, "notify running");
      await new Promise<void>((resolve) => stop.signal.addEventListener("abort", () => resolve(), { once: true }));
      await running.stop();
      await producer.disconnect();
      const { delivered, deadLettered, aborted } = notifier.summary;
      const stopped = `${aborted} stopped (read again on restart)`;
      const failed = `${deadLettered} dead-lettered to ${topics.deadLetters}`;
      process.stdout.write(`${delivered} delivered, ${failed}, ${stopped}\n`);
      return exitCode;
    });
  },
};
