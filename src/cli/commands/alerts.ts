import { readTopicToEnd } from "../../kafka/read-topic.ts";
import type { TripwireAlert } from "../../tripwires/index.ts";
import { jsonLine } from "../../contract/json-form.ts";
import { CLUSTER_FLAGS, withCluster } from "../cluster-flags.ts";
import type { CliCommand } from "../command.ts";
import { booleanFlag, parseFlags } from "../flags.ts";
import { followTopic } from "./follow-topic.ts";

const USAGE = `Usage: agentops alerts [--follow] [--json] [--brokers host:port] [--schema-registry URL] [--topic-prefix P] [--log-level debug]

Prints tripwire alerts from the alerts topic: time, run, rule, severity, evidence and message.
--follow keeps printing new alerts as they arrive, until Ctrl-C; --json prints one JSON object a line.`;

export function describeAlert(alert: TripwireAlert): string {
  const evidence = alert.evidence;
  const parts = [`seq ${evidence.seq_from}..${evidence.seq_to}`];
  if (evidence.cycle_length !== undefined && evidence.cycle_length !== null)
    parts.push(`cycle ${evidence.cycle_length}`);
  if (evidence.repetitions !== undefined && evidence.repetitions !== null) parts.push(`x${evidence.repetitions}`);
  if (evidence.command !== undefined && evidence.command !== null)
    parts.push(`command ${JSON.stringify(evidence.command)}`);
  if (evidence.path !== undefined && evidence.path !== null) parts.push(`path ${evidence.path}`);
  return (
    `${new Date(alert.event_time).toISOString()}  ${alert.severity.toUpperCase().padEnd(8)}  run ${alert.run_id}  ` +
    `${alert.rule_id}@${alert.rule_version}  ${parts.join(", ")}  ${alert.message}`
  );
}

export const alertsCommand: CliCommand = {
  name: "alerts",
  summary: "print tripwire alerts from the alerts topic",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(
      argv,
      { follow: { type: "boolean" }, json: { type: "boolean" }, ...CLUSTER_FLAGS },
      "alerts",
    );
    return withCluster(flags, "agentops-alerts", async ({ kafka, serde, topics }) => {
      const topic = topics.alerts;
      const json = booleanFlag(flags, "json");
      const print = async (value: Buffer | null): Promise<void> => {
        if (value === null) return;
        const alert = (await serde.decodeAlert(value)) as TripwireAlert;
        process.stdout.write(json ? `${jsonLine(alert)}\n` : `${describeAlert(alert)}\n`);
      };
      if (booleanFlag(flags, "follow")) await followTopic(kafka, topic, (message) => print(message.value));
      else await readTopicToEnd(kafka, topic, (message) => print(message.value));
      return 0;
    });
  },
};
