import { byUtf8 } from "../../contract/code-point-order.ts";
import type { MetricResult } from "../../contract/result-record.ts";
import { formatTable } from "../text-table.ts";
import { RESULT_HEADERS, resultRow } from "../result-rows.ts";
import { readLatestResults } from "../../stream/audit/topic-results.ts";
import { CLUSTER_FLAGS, withCluster } from "../cluster-flags.ts";
import type { CliCommand } from "../command.ts";
import { booleanFlag, parseFlags, stringFlag } from "../flags.ts";
import { followTopic } from "./follow-topic.ts";

const USAGE = `Usage: agentops results [--follow] [--json] [--metric ID] [--brokers host:port] [--schema-registry URL] [--topic-prefix P] [--log-level debug]

Prints the latest metric results from the compacted results topic: a readable table (metric,
scope, cohort, status, value, coverage), or one JSON object a line with --json. --follow keeps
printing each result as it changes, until Ctrl-C.`;

export const resultsCommand: CliCommand = {
  name: "results",
  summary: "print the latest metric results from the results topic",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(
      argv,
      { follow: { type: "boolean" }, json: { type: "boolean" }, metric: { type: "string" }, ...CLUSTER_FLAGS },
      "results",
    );
    return withCluster(flags, "agentops-results", async ({ kafka, serde, topics }) => {
      const topic = topics.results;
      const metric = stringFlag(flags, "metric");
      const json = booleanFlag(flags, "json");
      if (booleanFlag(flags, "follow")) {
        await followTopic(kafka, topic, async (message) => {
          const key = message.key?.toString("utf8") ?? "";
          if (message.value === null) {
            process.stdout.write(json ? `${JSON.stringify({ key, result: null })}\n` : `deleted ${key}\n`);
            return;
          }
          const result = await serde.decodeResult(message.value);
          if (metric !== undefined && result.metric_id !== metric) return;
          process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${resultRow(result).join("  ")}\n`);
        });
        return 0;
      }
      const latest = await readLatestResults(kafka, serde, topic);
      const results = [...latest.keys()]
        .sort(byUtf8)
        .map((key) => latest.get(key) as MetricResult)
        .filter((result) => metric === undefined || result.metric_id === metric);
      if (json) for (const result of results) process.stdout.write(`${JSON.stringify(result)}\n`);
      else
        process.stdout.write(
          `${formatTable(RESULT_HEADERS, results.map(resultRow))}\n${results.length} results on ${topic}\n`,
        );
      return 0;
    });
  },
};
