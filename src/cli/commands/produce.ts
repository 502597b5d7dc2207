import { orderedProducer } from "../../kafka/client.ts";
import { statSync } from "node:fs";
import { deadLetterKey, type DeadLetterRecord } from "../../contract/dead-letter.ts";
import type { Rejection } from "../../contract/rejection.ts";
import { FactNotCarriableError } from "../../kafka/serde/fact-record.ts";
import { readRecords, type SourcedRecord } from "../../stream/transports/embedded/record-source.ts";
import { createFactPublisher } from "../../ingest/fact-publisher.ts";
import { CLUSTER_FLAGS, withCluster } from "../cluster-flags.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { integerFlag, parseFlags, requiredStringFlag } from "../flags.ts";
import { progressReporter } from "../progress.ts";

const USAGE = `Usage: agentops produce --input <facts.ndjson|facts.avro> [--brokers host:port] [--schema-registry URL]
                        [--topic-prefix P] [--batch 500] [--log-level debug]

Publishes observation facts to the facts topic as Avro (Confluent wire format, schemas
registered in the registry), keyed by fact_id; agent_step and sandbox_event records go to the
agent-events topic keyed by run_id. Every fact the file replay accepts is sent as reported, invalid
measures included (the processors report them). A record that fails validation is not sent: it goes
to the dead-letter topic with its line and reason, as the processors would dead-letter it.`;

export const produceCommand: CliCommand = {
  name: "produce",
  summary: "publish a facts file to Kafka (Avro through the schema registry)",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(
      argv,
      { input: { type: "string" }, ...CLUSTER_FLAGS, batch: { type: "string" } },
      "produce",
    );
    const input = requiredStringFlag(flags, "input", "name the facts file, e.g. --input samples/facts.ndjson");
    const batchSize = integerFlag(flags, "batch", 500, 1, 100_000);
    let size: number;
    try {
      size = statSync(input).size;
    } catch {
      throw new UsageError(
        "--input",
        `cannot read ${input}`,
        "check the path; generate a file with `agentops generate --out facts.ndjson`",
      );
    }
    return withCluster(flags, "agentops-produce", async ({ kafka, serde, topics }) => {
      // The broker first: a broker that is down is named at once, not after the schemas were
      // registered (on a cold or loaded registry that took up to the 30 s request bound, and the
      // failure then named the registry instead of the broker).
      const producer = orderedProducer(kafka);
      await producer.connect();
      const progress = progressReporter("produce", size);
      let sent = 0;
      let skipped = 0;
      const publisher = createFactPublisher(producer, serde, topics, batchSize);
      const letters: { key: string; value: Buffer }[] = [];
      const deadLetter = async (record: SourcedRecord, rejection: Rejection, factId: string | null): Promise<void> => {
        skipped += 1;
        process.stderr.write(`line ${record.position}: not sent: ${rejection.reason} ${rejection.detail}\n`);
        const letter = inputDeadLetter(input, record, rejection, factId);
        letters.push({ key: deadLetterKey(letter), value: await serde.encodeDeadLetter(letter) });
        if (letters.length >= batchSize)
          await producer.send({ topic: topics.deadLetters, messages: letters.splice(0) });
      };
      try {
        await serde.registerAll();
        for await (const record of readRecords(input, (bytes) => progress.update(bytes))) {
          if (!record.parsed.ok) {
            await deadLetter(record, record.parsed.rejection, null);
            continue;
          }
          const fact = record.parsed.fact;
          try {
            await publisher.add(fact);
          } catch (error) {
            if (!(error instanceof FactNotCarriableError)) throw error;
            const detail = `${fact.fact_id} cannot be written in Avro: ${error.message}`;
            await deadLetter(record, { reason: "UNENCODABLE_FACT", field: "", detail }, fact.fact_id);
            continue;
          }
          sent += 1;
        }
        await publisher.flush();
        if (letters.length > 0) await producer.send({ topic: topics.deadLetters, messages: letters.splice(0) });
      } finally {
        progress.done();
        await producer.disconnect();
      }
      const deadLettered = skipped === 0 ? "" : ` (each on ${topics.deadLetters} with its line and reason)`;
      const notSent = `${skipped} invalid records not sent${deadLettered}`;
      process.stdout.write(`sent ${sent} records to ${topics.facts} / ${topics.agentEvents}; ${notSent}\n`);
      return 0;
    });
  },
};

/**
 * A record of the input file that is not sent, for the dead-letter topic: the file and line stand
 * for the source coordinates (topic, partition 0, offset), the line's text for the value.
 */
function inputDeadLetter(input: string, record: SourcedRecord, rejection: Rejection, factId: string | null) {
  const source = { topic: `file:${input}`, partition: 0, offset: String(record.position) };
  const value = record.raw === undefined ? null : Buffer.from(record.raw, "utf8");
  const letter: DeadLetterRecord = { ...rejection, source, factId, key: null, value, recordRejected: true };
  return letter;
}
