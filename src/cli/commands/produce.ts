import { statSync } from "node:fs";
import { readRecords } from "../../stream/transports/embedded/record-source.ts";
import { createFactPublisher } from "../../ingest/fact-publisher.ts";
import { CLUSTER_FLAGS, withCluster } from "../cluster-flags.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { integerFlag, parseFlags, requiredStringFlag } from "../flags.ts";
import { progressReporter } from "../progress.ts";

const USAGE = `Usage: agentops produce --input <facts.ndjson|facts.avro> [--brokers host:port] [--schema-registry URL]
                        [--topic-prefix P] [--batch 500] [--log-level debug]

Publishes observation facts to the facts topic as Avro (Confluent wire format, schemas
registered in the registry), keyed by fact_id; agent_step and sandbox_event records go to the
agent-events topic keyed by run_id. Records that fail validation are not sent: each is reported
with its line and reason (the processors would dead-letter them anyway).`;

export const produceCommand: CliCommand = {
  name: "produce",
  summary: "publish a facts file to Kafka (Avro through the schema registry)",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(argv, { input: { type: "string" }, ...CLUSTER_FLAGS, batch: { type: "string" } }, "produce");
    const input = requiredStringFlag(flags, "input", "name the facts file, e.g. --input samples/facts.ndjson");
    const batchSize = integerFlag(flags, "batch", 500, 1, 100_000);
    let size: number;
    try {
      size = statSync(input).size;
    } catch {
      throw new UsageError("--input", `cannot read ${input}`, "check the path; generate a file with `agentops generate --out facts.ndjson`");
    }
    return withCluster(flags, "agentops-produce", async ({ kafka, serde, topics }) => {
    // The broker first: a broker that is down is named at once, not after the schemas were
    // registered (on a cold or loaded registry that took up to the 30 s request bound, and the
    // failure then named the registry instead of the broker).
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const progress = progressReporter("produce", size);
    let sent = 0;
    let skipped = 0;
    const publisher = createFactPublisher(producer, serde, topics, batchSize);
    try {
      await serde.registerAll();
      for await (const record of readRecords(input, (bytes) => progress.update(bytes))) {
        if (!record.parsed.ok) {
          skipped += 1;
          process.stderr.write(`line ${record.position}: not sent: ${record.parsed.rejection.reason} ${record.parsed.rejection.detail}\n`);
          continue;
        }
        const fact = record.parsed.fact;
        try {
          if ((await publisher.add(fact)) === "without-invalid-measures") process.stderr.write(`line ${record.position}: sent without its invalid measure(s): Avro cannot carry the values received
`);
        } catch (error) {
          skipped += 1;
          process.stderr.write(`line ${record.position}: not sent: ${fact.fact_id} cannot be written in Avro (${error instanceof Error ? error.message : String(error)})
`);
          continue;
        }
        sent += 1;
      }
      await publisher.flush();
    } finally {
      progress.done();
      await producer.disconnect();
    }
    process.stdout.write(`sent ${sent} records to ${topics.facts} / ${topics.agentEvents}; ${skipped} invalid records not sent\n`);
    return 0;
    });
  },
};
