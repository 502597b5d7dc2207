import type { Admin } from "kafkajs";
import type { CliCommand } from "../command.ts";
import { UsageError } from "../command.ts";
import { parseFlags, stringFlag } from "../flags.ts";
import { withKafka } from "../cluster-flags.ts";
import { applyTopicActions, observeTopics, planTopics } from "../../kafka/topic-admin.ts";
import type { TopicAction } from "../../kafka/topic-plan.ts";
import { ConfigError } from "../../errors.ts";
import { DEFAULT_TOPICS_FILE, desiredConfigs, loadTopicSpecFile, type TopicSpec } from "../../kafka/topic-spec.ts";

const usage = `Usage: agentops topics <apply|list> [--brokers host:port[,host:port]] [--file path] [--log-level debug]

  apply   create missing topics, add partitions, and set the configs that differ from the spec
          (idempotent; partitions are never decreased: that is reported as an error)
  list    show each topic of the spec next to what the broker has

Flags:
  --brokers  Kafka bootstrap servers (default: $KAFKA_BROKERS, else 127.0.0.1:19092)
  --file     topic spec file (default: topics/topics.json)

TLS and SASL come from the environment (KAFKA_SSL, KAFKA_SSL_CA_FILE, KAFKA_SASL_MECHANISM, ...:
docs/operations.md). A connection failure names the address and the fix; --log-level debug adds
the stack trace.`;

function describeAction(action: TopicAction): string[] {
  switch (action.kind) {
    case "create":
      return [
        `created   ${action.topic.name} (${action.topic.partitions} partitions, replication ${action.topic.replication}, ${Object.entries(
          action.configs,
        )
          .map(([name, value]) => `${name}=${value}`)
          .join(", ")})`,
      ];
    case "update":
      return [
        `updated   ${action.topic.name}: ${[
          ...action.changes.map((change) => `${change.name} ${change.from ?? "(unset)"} -> ${change.to}`),
          ...(action.addPartitions === null ? [] : [`partitions -> ${action.addPartitions}`]),
        ].join(", ")}`,
        ...action.warnings.map((warning) => `warning   ${warning}`),
      ];
    case "unchanged":
      return [`unchanged ${action.topic.name}`, ...action.warnings.map((warning) => `warning   ${warning}`)];
    case "error":
      return [`ERROR     ${action.message}`];
  }
}

async function run(argv: readonly string[]): Promise<number> {
  const flags = parseFlags(
    argv,
    { brokers: { type: "string" }, file: { type: "string" }, "log-level": { type: "string" } },
    "topics",
  );
  const [subcommand, ...extra] = flags.positionals;
  if (subcommand !== "apply" && subcommand !== "list") {
    throw new UsageError(
      "subcommand",
      subcommand === undefined ? "is missing" : `"${subcommand}" is not known`,
      "use `agentops topics apply` or `agentops topics list`",
    );
  }
  if (extra.length > 0)
    throw new UsageError("arguments", `unexpected "${extra.join(" ")}"`, "run `agentops topics --help`");
  const file = stringFlag(flags, "file") ?? DEFAULT_TOPICS_FILE;
  let spec;
  try {
    spec = await loadTopicSpecFile(file);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`agentops topics: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  return withKafka(flags, "agentops-topics", (kafka) => applyOrList(kafka.admin(), subcommand, spec.topics), 10_000);
}

async function applyOrList(admin: Admin, subcommand: "apply" | "list", topics: readonly TopicSpec[]): Promise<number> {
  await admin.connect();
  try {
    if (subcommand === "list") {
      const observed = await observeTopics(admin, topics);
      process.stdout.write(`${"topic".padEnd(34)} ${"spec".padEnd(44)} broker\n`);
      for (const topic of topics) {
        const wanted = desiredConfigs(topic);
        const actual = observed.get(topic.name);
        const specText = `${topic.partitions}p r${topic.replication} ${wanted["cleanup.policy"]} ${wanted["retention.ms"]}`;
        const brokerText =
          actual === undefined
            ? "(missing)"
            : `${actual.partitions}p r${actual.replication} ${actual.configs["cleanup.policy"] ?? "?"} ${actual.configs["retention.ms"] ?? "?"}`;
        process.stdout.write(`${topic.name.padEnd(34)} ${specText.padEnd(44)} ${brokerText}\n`);
      }
      return 0;
    }
    const actions = await planTopics(admin, topics);
    const runnable = actions.filter((action) => action.kind !== "error");
    await applyTopicActions(admin, runnable);
    for (const action of actions) for (const line of describeAction(action)) process.stdout.write(`${line}\n`);
    return actions.some((action) => action.kind === "error") ? 1 : 0;
  } finally {
    await admin.disconnect();
  }
}

export const topicsCommand: CliCommand = {
  name: "topics",
  summary: "create and align the project's Kafka topics from topics/topics.json",
  usage,
  run,
};
