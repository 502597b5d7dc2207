import type { CliCommand } from "../command.ts";
import { UsageError } from "../command.ts";
import { parseFlags, stringFlag } from "../flags.ts";
import { createKafka, resolveBrokers } from "../../kafka/client.ts";
import { applyTopicActions, observeTopics, planTopics } from "../../kafka/topic-admin.ts";
import type { TopicAction } from "../../kafka/topic-plan.ts";
import { DEFAULT_TOPICS_FILE, desiredConfigs, loadTopicSpecFile, TopicSpecError } from "../../kafka/topic-spec.ts";

const usage = `Usage: agentops topics <apply|list> [--brokers host:port[,host:port]] [--file path]

  apply   create missing topics, add partitions, and set the configs that differ from the spec
          (idempotent; partitions are never decreased: that is reported as an error)
  list    show each topic of the spec next to what the broker has

Flags:
  --brokers  Kafka bootstrap servers (default: $KAFKA_BROKERS, else 127.0.0.1:19092)
  --file     topic spec file (default: topics/topics.json)`;

function describeAction(action: TopicAction): string[] {
  switch (action.kind) {
    case "create":
      return [`created   ${action.topic.name} (${action.topic.partitions} partitions, replication ${action.topic.replication}, ${Object.entries(action.configs).map(([name, value]) => `${name}=${value}`).join(", ")})`];
    case "update":
      return [
        `updated   ${action.topic.name}: ${[...action.changes.map((change) => `${change.name} ${change.from ?? "(unset)"} -> ${change.to}`), ...(action.addPartitions === null ? [] : [`partitions -> ${action.addPartitions}`])].join(", ")}`,
        ...action.warnings.map((warning) => `warning   ${warning}`),
      ];
    case "unchanged":
      return [`unchanged ${action.topic.name}`, ...action.warnings.map((warning) => `warning   ${warning}`)];
    case "error":
      return [`ERROR     ${action.message}`];
  }
}

async function run(argv: readonly string[]): Promise<number> {
  const flags = parseFlags(argv, { brokers: { type: "string" }, file: { type: "string" } }, "topics");
  const [subcommand, ...extra] = flags.positionals;
  if (subcommand !== "apply" && subcommand !== "list") {
    throw new UsageError("subcommand", subcommand === undefined ? "is missing" : `"${subcommand}" is not known`, "use `agentops topics apply` or `agentops topics list`");
  }
  if (extra.length > 0) throw new UsageError("arguments", `unexpected "${extra.join(" ")}"`, "run `agentops topics --help`");
  const file = stringFlag(flags, "file") ?? DEFAULT_TOPICS_FILE;
  let spec;
  try {
    spec = await loadTopicSpecFile(file);
  } catch (error) {
    if (error instanceof TopicSpecError) {
      process.stderr.write(`agentops topics: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const brokers = resolveBrokers(stringFlag(flags, "brokers"));
  const admin = createKafka({ brokers, clientId: "agentops-topics", connectionTimeoutMs: 10_000 }).admin();
  try {
    await admin.connect();
  } catch (error) {
    process.stderr.write(`agentops topics: cannot reach Kafka at ${brokers.join(",")}: ${error instanceof Error ? error.message : String(error)}. Fix: start it (npm run services:up) or pass --brokers / KAFKA_BROKERS.\n`);
    return 1;
  }
  try {
    if (subcommand === "list") {
      const observed = await observeTopics(admin, spec.topics);
      process.stdout.write(`${"topic".padEnd(34)} ${"spec".padEnd(44)} broker\n`);
      for (const topic of spec.topics) {
        const wanted = desiredConfigs(topic);
        const actual = observed.get(topic.name);
        const specText = `${topic.partitions}p r${topic.replication} ${wanted["cleanup.policy"]} ${wanted["retention.ms"]}`;
        const brokerText = actual === undefined ? "(missing)" : `${actual.partitions}p r${actual.replication} ${actual.configs["cleanup.policy"] ?? "?"} ${actual.configs["retention.ms"] ?? "?"}`;
        process.stdout.write(`${topic.name.padEnd(34)} ${specText.padEnd(44)} ${brokerText}\n`);
      }
      return 0;
    }
    const actions = await planTopics(admin, spec.topics);
    const runnable = actions.filter((action) => action.kind !== "error");
    await applyTopicActions(admin, runnable);
    for (const action of actions) for (const line of describeAction(action)) process.stdout.write(`${line}\n`);
    return actions.some((action) => action.kind === "error") ? 1 : 0;
  } finally {
    await admin.disconnect();
  }
}

export const topicsCommand: CliCommand = { name: "topics", summary: "create and align the project's Kafka topics from topics/topics.json", usage, run };
