/**
 * Kafka clients on the engine member's work (issue #33), `npm run bench:kafka-clients`, on the
 * local broker:
 *   0. the generated workload's metric facts encoded as the engine-facts topic's records
 *      (src/kafka/serde/engine-facts-record.ts, as ingest writes them), produced once to a fresh
 *      one-partition topic;
 *   1. per round, per client (alternating, each in a fresh child process): fetch the whole topic
 *      from offset 0 in a consumer group and decode every record with the engine's decoder
 *      (readEngineFact), then produce as many records of the engine's write size to a fresh topic
 *      (idempotent, acks=all), a batch's writes at a time, each awaited as the member awaits its
 *      writes before committing.
 * Reports CPU seconds (process.cpuUsage, every thread: librdkafka's included) per 100k records by
 * phase, records/s, peak RSS, the broker's CPU, medians and ranges, and the ratio to kafkajs.
 * Writes the section "Kafka clients: fetch, decode, produce (issue #33)" of bench/RESULTS.md.
 *
 *   node_modules/.bin/node bench/kafka-clients.bench.ts [--lines 200000] [--rounds 5]
 *     [--clients kafkajs,platformatic,confluent,confluent-standard] [--no-write] [--keep-topics]
 *
 * @platformatic/kafka is a devDependency. @confluentinc/kafka-javascript (both of its APIs) is not:
 * its install downloads librdkafka from GitHub, or builds it from source with CKJS_LINKING=dynamic
 * (bench/RESULTS.md, this section, says how it was installed here). It is measured when installed and
 * skipped otherwise.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, totalmem } from "node:os";
import type { Kafka } from "kafkajs";
import { isAgentEvent } from "../src/contract/facts.ts";
import { parseFactJson } from "../src/contract/parse-fact.ts";
import { createKafka, orderedProducer } from "../src/kafka/client.ts";
import { resolveBrokers } from "../src/kafka/connection-addresses.ts";
import { topicRecordCount } from "../src/kafka/read-topic.ts";
import { sendBounded } from "../src/kafka/send-bounded.ts";
import { encodeEngineFact, readEngineFact } from "../src/kafka/serde/engine-facts-record.ts";
import { createTopicsWithLeaders } from "../src/kafka/topic-admin.ts";
import {
  benchLog,
  brokerPid,
  CLI_ENV,
  CLI_NODE_FLAGS,
  cpuSeconds,
  deletePrefixedTopics,
  median,
  NODE,
  procStatus,
} from "./kafka-harness.ts";
import { publishResultsSection } from "./results-section.ts";
import { ensureWorkload } from "./workload-file.ts";
import { linesFrom } from "./workload-lines.ts";

const HEADING = "## Kafka clients: fetch, decode, produce (issue #33)";
const BROKERS = [...resolveBrokers(undefined).value];
const CLIENTS = ["kafkajs", "platformatic", "confluent", "confluent-standard"] as const;
type ClientName = (typeof CLIENTS)[number];
const PACKAGES: Record<ClientName, string> = {
  kafkajs: "kafkajs",
  platformatic: "@platformatic/kafka",
  confluent: "@confluentinc/kafka-javascript",
  "confluent-standard": "@confluentinc/kafka-javascript",
};
/** How the table names a client: its package, and the API where a package offers two. */
const LABELS: Record<ClientName, string> = {
  kafkajs: "kafkajs",
  platformatic: "@platformatic/kafka",
  confluent: "@confluentinc/kafka-javascript (KafkaJS API)",
  "confluent-standard": "@confluentinc/kafka-javascript (Standard API)",
};
/** The engine's writes are mostly its contributions changelog: keys of about 20 bytes, values of about 500 (the median of a 1M run's log). */
const WRITE_KEY_BYTES = 20;
const WRITE_VALUE_BYTES = 500;
/**
 * Records per send: one fetched batch's writes, under the member's 512 KiB request bound
 * (src/kafka/send-bounded.ts). Every client names partition 0, as the engine does for its
 * one-partition topics (src/stream/transports/sink-roles.ts), so no key is hashed.
 */
const WRITES_PER_SEND = 800;
/** The engine member's fetch wait (src/stream/transports/kafka/kafka-member.ts). */
const MAX_WAIT_MS = 200;

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string =>
  argv.includes(name) ? (argv[argv.indexOf(name) + 1] ?? fallback) : fallback;

/** What a child measures in one phase. */
interface PhaseFigures {
  readonly records: number;
  readonly cpuSeconds: number;
  readonly wallSeconds: number;
  /** VmHWM at the phase's end: the peak so far in the child. */
  readonly peakRssBytes: number;
  /** The broker's CPU over the phase (undefined without ops/services.sh's pid file). */
  readonly brokerCpuSeconds: number | undefined;
}

interface ChildReport {
  readonly client: ClientName;
  readonly version: string;
  readonly fetch: PhaseFigures;
  readonly produce: PhaseFigures;
}

/** The part of a client the benchmark drives: the member's fetch and decode, and its sends. */
interface ClientUnderTest {
  /** Reads `topic` from offset 0 in a fresh group, calling `onValue` for each record, until `records` were read. */
  readonly fetch: (topic: string, records: number, onValue: (value: Buffer | null) => void) => Promise<void>;
  /** Sends the batches in order, each acknowledged by every in-sync replica before the next. */
  readonly produce: (topic: string, batches: readonly (readonly WriteRecord[])[]) => Promise<void>;
  readonly close: () => Promise<void>;
}

interface WriteRecord {
  readonly key: Buffer;
  readonly value: Buffer;
}

const require = createRequire(import.meta.url);

/** The installed version of a client's package (read from its directory: some packages' exports hide package.json). */
function installedVersion(client: ClientName): string | undefined {
  for (const directory of require.resolve.paths(PACKAGES[client]) ?? []) {
    const manifest = `${directory}/${PACKAGES[client]}/package.json`;
    if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
  }
  return undefined;
}

const groupId = (client: ClientName): string => `kcb-${client}-${Date.now().toString(36)}`;

/** kafkajs as the project runs it: its module replacements loaded (src/kafka/kafkajs.ts), eachBatch, sendBounded. */
async function kafkajsClient(): Promise<ClientUnderTest> {
  const kafka = createKafka({ brokers: BROKERS, clientId: "kcb-kafkajs" });
  // The member's producer (src/stream/transports/kafka/member-client.ts), connected before the phases, as the others are.
  const producer = orderedProducer(kafka);
  await producer.connect();
  return {
    fetch: async (topic, records, onValue) => {
      const consumer = kafka.consumer({ groupId: groupId("kafkajs"), maxWaitTimeInMs: MAX_WAIT_MS });
      let read = 0;
      let finished: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (finished = resolve));
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: ({ batch, resolveOffset }) => {
          if (read >= records) return Promise.resolve();
          for (const message of batch.messages) onValue(message.value);
          read += batch.messages.length;
          // As the member does once a batch is handled: the next fetch starts after it.
          resolveOffset(batch.lastOffset());
          if (read >= records) finished();
          return Promise.resolve();
        },
      });
      await done;
      await consumer.disconnect();
    },
    produce: async (topic, batches) => {
      for (const messages of batches) {
        await sendBounded(producer, [
          { topic, messages: messages.map(({ key, value }) => ({ key, value, partition: 0 })) },
        ]);
      }
    },
    close: async () => {
      await producer.disconnect();
    },
  };
}

/** @platformatic/kafka as its README shows: a consumer stream read by "data" events, producer.send of a batch. */
async function platformaticClient(): Promise<ClientUnderTest> {
  const { Consumer, Producer, ProduceAcks, MessagesStreamModes } = await import("@platformatic/kafka");
  const producer = new Producer({
    clientId: "kcb-platformatic",
    bootstrapBrokers: BROKERS,
    idempotent: true,
    acks: ProduceAcks.ALL,
  });
  // It connects on first use: connected here, before the phases, as the others are.
  await producer.connectToBrokers();
  return {
    fetch: async (topic, records, onValue) => {
      const consumer = new Consumer({
        groupId: groupId("platformatic"),
        clientId: "kcb-platformatic",
        bootstrapBrokers: BROKERS,
        maxWaitTime: MAX_WAIT_MS,
        autocommit: false,
      });
      const stream = await consumer.consume({ topics: [topic], mode: MessagesStreamModes.EARLIEST });
      let read = 0;
      await new Promise<void>((resolve, reject) => {
        stream.on("error", reject);
        stream.on("data", (message: { value: Buffer | null }) => {
          if (read >= records) return;
          onValue(message.value);
          read += 1;
          if (read === records) resolve();
        });
      });
      await stream.close();
      await consumer.close();
    },
    produce: async (topic, batches) => {
      for (const messages of batches) {
        await producer.send({ messages: messages.map(({ key, value }) => ({ topic, partition: 0, key, value })) });
      }
    },
    close: async () => {
      await producer.close();
    },
  };
}

/** The parts of @confluentinc/kafka-javascript's KafkaJS-compatible API used here (it is not a dependency, so not typed by it). */
interface ConfluentKafkaJs {
  readonly Kafka: new (config: Record<string, unknown>) => {
    consumer: (config: Record<string, unknown>) => {
      connect: () => Promise<void>;
      subscribe: (options: { topics: string[] }) => Promise<void>;
      run: (options: {
        eachBatch: (payload: { batch: { messages: { value: Buffer | null }[] } }) => Promise<void>;
      }) => Promise<void>;
      disconnect: () => Promise<void>;
    };
    producer: (config: Record<string, unknown>) => {
      connect: () => Promise<void>;
      send: (options: { topic: string; messages: (WriteRecord & { partition: number })[] }) => Promise<unknown>;
      disconnect: () => Promise<void>;
    };
  };
  readonly logLevel: { readonly NOTHING: number };
}

/** The parts of the same package's Standard (node-rdkafka) API used here. */
interface ConfluentStandard {
  readonly KafkaConsumer: new (
    config: Record<string, unknown>,
    topicConfig: Record<string, unknown>,
  ) => {
    connect: (options: undefined, callback: (error: unknown) => void) => void;
    subscribe: (topics: string[]) => void;
    consume: (count: number, callback: (error: unknown, messages: { value: Buffer | null }[]) => void) => void;
    disconnect: (callback: () => void) => void;
  };
  readonly Producer: new (config: Record<string, unknown>) => {
    connect: (options: undefined, callback: (error: unknown) => void) => void;
    setPollInBackground: (set: boolean) => void;
    on: (event: "delivery-report", listener: (error: unknown) => void) => void;
    produce: (topic: string, partition: number, value: Buffer, key: Buffer) => void;
    disconnect: (callback: () => void) => void;
  };
}

const connected = (client: {
  connect: (options: undefined, callback: (error: unknown) => void) => void;
}): Promise<void> =>
  new Promise((resolve, reject) => client.connect(undefined, (error) => (error ? reject(toError(error)) : resolve())));

const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/**
 * @confluentinc/kafka-javascript (librdkafka) through its KafkaJS-compatible API, the one its
 * migration guide gives kafkajs users: eachBatch without the 32-record cap, send of a batch.
 */
async function confluentClient(): Promise<ClientUnderTest> {
  const { KafkaJS } = (await import(PACKAGES.confluent)) as { KafkaJS: ConfluentKafkaJs };
  const kafka = new KafkaJS.Kafka({
    kafkaJS: { brokers: BROKERS, clientId: "kcb-confluent", logLevel: KafkaJS.logLevel.NOTHING },
  });
  const producer = kafka.producer({ kafkaJS: { idempotent: true, acks: -1 } });
  await producer.connect();
  return {
    fetch: async (topic, records, onValue) => {
      const consumer = kafka.consumer({
        kafkaJS: {
          groupId: groupId("confluent"),
          fromBeginning: true,
          autoCommit: false,
          maxWaitTimeInMs: MAX_WAIT_MS,
        },
        "js.consumer.max.batch.size": -1,
      });
      await consumer.connect();
      await consumer.subscribe({ topics: [topic] });
      let read = 0;
      await new Promise<void>((resolve, reject) => {
        consumer
          .run({
            eachBatch: (payload) => {
              if (read >= records) return Promise.resolve();
              for (const message of payload.batch.messages) onValue(message.value);
              read += payload.batch.messages.length;
              if (read >= records) resolve();
              return Promise.resolve();
            },
          })
          .catch(reject);
      });
      await consumer.disconnect();
    },
    produce: async (topic, batches) => {
      for (const messages of batches) {
        await producer.send({ topic, messages: messages.map(({ key, value }) => ({ key, value, partition: 0 })) });
      }
    },
    close: async () => {
      await producer.disconnect();
    },
  };
}

/**
 * The same package's Standard API, which its introduction calls the more performant for high
 * volumes: non-flowing consume of up to 10,000 messages a call, produce() per message with delivery
 * reports polled on librdkafka's background thread.
 */
async function confluentStandardClient(): Promise<ClientUnderTest> {
  const rdkafka = (await import(PACKAGES["confluent-standard"])) as { default: ConfluentStandard };
  const { KafkaConsumer, Producer } = rdkafka.default;
  const brokers = BROKERS.join(",");
  const producer = new Producer({
    "bootstrap.servers": brokers,
    "client.id": "kcb-confluent-standard",
    "enable.idempotence": true,
    acks: "all",
    dr_cb: true,
  });
  await connected(producer);
  producer.setPollInBackground(true);
  let onReport: (error: unknown) => void = () => undefined;
  producer.on("delivery-report", (error) => onReport(error));
  return {
    fetch: async (topic, records, onValue) => {
      const consumer = new KafkaConsumer(
        {
          "bootstrap.servers": brokers,
          "client.id": "kcb-confluent-standard",
          "group.id": groupId("confluent-standard"),
          "enable.auto.commit": false,
          "fetch.wait.max.ms": MAX_WAIT_MS,
        },
        { "auto.offset.reset": "earliest" },
      );
      await connected(consumer);
      consumer.subscribe([topic]);
      let read = 0;
      while (read < records) {
        const messages = await new Promise<{ value: Buffer | null }[]>((resolve, reject) =>
          consumer.consume(10_000, (error, batch) => (error ? reject(toError(error)) : resolve(batch))),
        );
        for (const message of messages) onValue(message.value);
        read += messages.length;
      }
      await new Promise<void>((resolve) => consumer.disconnect(resolve));
    },
    produce: async (topic, batches) => {
      for (const messages of batches) {
        let pending = messages.length;
        await new Promise<void>((resolve, reject) => {
          onReport = (error) => {
            if (error) reject(toError(error));
            else if (--pending === 0) resolve();
          };
          for (const { key, value } of messages) producer.produce(topic, 0, value, key);
        });
      }
    },
    close: () => new Promise<void>((resolve) => producer.disconnect(resolve)),
  };
}

function clientUnderTest(client: ClientName): Promise<ClientUnderTest> {
  if (client === "kafkajs") return kafkajsClient();
  if (client === "platformatic") return platformaticClient();
  if (client === "confluent") return confluentClient();
  return confluentStandardClient();
}

/** The records one child sends: `count` of the engine's write size, in batches of WRITES_PER_SEND. */
function writeBatches(count: number): WriteRecord[][] {
  const batches: WriteRecord[][] = [];
  const filler = Buffer.alloc(WRITE_VALUE_BYTES - 8, "contribution ");
  for (let start = 0; start < count; start += WRITES_PER_SEND) {
    const batch: WriteRecord[] = [];
    for (let index = start; index < Math.min(count, start + WRITES_PER_SEND); index += 1) {
      const key = Buffer.from(index.toString(36).padStart(WRITE_KEY_BYTES, "u"));
      const value = Buffer.concat([Buffer.from(index.toString(16).padStart(8, "0")), filler]);
      batch.push({ key, value });
    }
    batches.push(batch);
  }
  return batches;
}

async function measured(run: () => Promise<number>, broker: number | undefined): Promise<PhaseFigures> {
  const brokerBefore = broker === undefined ? undefined : cpuSeconds(broker);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const records = await run();
  const wallSeconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const brokerAfter = broker === undefined ? undefined : cpuSeconds(broker);
  return {
    records,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    wallSeconds,
    peakRssBytes: procStatus(process.pid, "VmHWM"),
    brokerCpuSeconds: brokerBefore === undefined || brokerAfter === undefined ? undefined : brokerAfter - brokerBefore,
  };
}

/** One client in this process: fetch and decode `source`, then produce to `sink`; the figures as JSON on stdout. */
async function child(client: ClientName, source: string, records: number, sink: string): Promise<void> {
  const broker = brokerPid();
  const batches = writeBatches(records);
  const underTest = await clientUnderTest(client);
  let decoded = 0;
  let unreadable = 0;
  const fetch = await measured(async () => {
    await underTest.fetch(source, records, (value) => {
      const reading = value === null ? undefined : readEngineFact(value);
      if (reading?.ok === true) decoded += 1;
      else unreadable += 1;
    });
    return decoded + unreadable;
  }, broker);
  if (unreadable > 0 || decoded !== records)
    throw new Error(`${client}: ${decoded} records decoded, ${unreadable} unreadable, ${records} expected`);
  const produce = await measured(async () => {
    await underTest.produce(sink, batches);
    return records;
  }, broker);
  await underTest.close();
  const report: ChildReport = { client, version: installedVersion(client) ?? "?", fetch, produce };
  // Synchronously, then exit: a client's timers or native threads must not keep the child alive.
  writeSync(1, `${JSON.stringify(report)}\n`);
  process.exit(0);
}

function runChild(client: ClientName, source: string, records: number, sink: string): Promise<ChildReport> {
  const args = [
    import.meta.filename,
    "--child",
    client,
    "--source",
    source,
    "--records",
    String(records),
    "--sink",
    sink,
  ];
  const process_ = spawn(NODE, [...CLI_NODE_FLAGS, ...args], { env: CLI_ENV, stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  process_.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    process_.once("exit", (code) => {
      if (code !== 0) reject(new Error(`${client} child exited ${String(code)}`));
      else resolve(JSON.parse(output.trim().split("\n").at(-1) ?? "") as ChildReport);
    });
  });
}

/** The workload's metric facts as ingest writes them to the engine-facts topic, sent once with the project's producer. */
async function produceEngineFacts(kafka: Kafka, workload: string, topic: string): Promise<Buffer[]> {
  const producer = orderedProducer(kafka);
  await producer.connect();
  const values: Buffer[] = [];
  let pending: { key: string; value: Buffer; partition: number }[] = [];
  for (const { text } of linesFrom(workload, 0)) {
    const parsed = parseFactJson(text);
    if (!parsed.ok || isAgentEvent(parsed.fact)) continue;
    const record = encodeEngineFact(parsed.fact, {
      topic: "agentops.facts.v1",
      partition: 0,
      offset: String(values.length),
    });
    pending.push({ ...record, partition: 0 });
    values.push(record.value);
    if (pending.length === 5_000) {
      await sendBounded(producer, [{ topic, messages: pending }]);
      pending = [];
    }
  }
  await sendBounded(producer, [{ topic, messages: pending }]);
  await producer.disconnect();
  return values;
}

/** CPU seconds per 100k records of the engine's decoder alone over the topic's values (median of 3 passes in this process). */
function decodeAlone(values: readonly Buffer[]): number[] {
  const passes: number[] = [];
  for (let pass = 0; pass < 3; pass += 1) {
    const before = process.cpuUsage();
    for (const value of values) {
      if (!readEngineFact(value).ok) throw new Error("an engine-facts record the engine cannot read");
    }
    const cpu = process.cpuUsage(before);
    passes.push(((cpu.user + cpu.system) / 1e6 / values.length) * 100_000);
  }
  return passes;
}

interface Summary {
  readonly client: ClientName;
  readonly version: string;
  readonly rounds: readonly ChildReport[];
}

const per100k = (figures: PhaseFigures): number => (figures.cpuSeconds * 100_000) / figures.records;
const rangeOf = (values: readonly number[], digits: number): string =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;

function table(summaries: readonly Summary[]): string {
  const base = summaries.find((summary) => summary.client === "kafkajs");
  const medianOf = (summary: Summary, phase: "fetch" | "produce"): number =>
    median(summary.rounds.map((round) => per100k(round[phase])));
  const lines = [
    "| client | phase | CPU s per 100k records | records/s | peak RSS MiB | broker CPU s per 100k | CPU ratio to kafkajs (median; kafkajs ÷ client) |",
    "|---|---|---:|---:|---:|---:|---:|",
  ];
  for (const summary of summaries) {
    for (const phase of ["fetch", "produce"] as const) {
      const figures = summary.rounds.map((round) => round[phase]);
      const broker = figures.flatMap((figure) =>
        figure.brokerCpuSeconds === undefined ? [] : [(figure.brokerCpuSeconds * 100_000) / figure.records],
      );
      const ratio = base === undefined ? "—" : `${(medianOf(base, phase) / medianOf(summary, phase)).toFixed(2)}×`;
      const label = phase === "fetch" ? "fetch + decode" : "produce (acks=all)";
      lines.push(
        `| ${LABELS[summary.client]} ${summary.version} | ${label} | ${rangeOf(figures.map(per100k), 2)} | ${rangeOf(
          figures.map((figure) => figure.records / figure.wallSeconds),
          0,
        )} | ${rangeOf(
          figures.map((figure) => figure.peakRssBytes / 1_048_576),
          0,
        )} | ${broker.length === 0 ? "—" : rangeOf(broker, 2)} | ${ratio} |`,
      );
    }
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const log = benchLog("bench:kafka-clients");
  const lines = Number(option("--lines", "200000"));
  const rounds = Number(option("--rounds", "5"));
  const asked = option("--clients", CLIENTS.join(",")).split(",") as ClientName[];
  const clients = asked.filter((client) => {
    if (installedVersion(client) !== undefined) return true;
    log(`${LABELS[client]}: ${PACKAGES[client]} is not installed, skipped`);
    return false;
  });
  const load = loadavg();
  const date = new Date().toISOString();
  const workload = await ensureWorkload(lines, log);
  const kafka = createKafka({ brokers: BROKERS, clientId: "kcb" });
  const prefix = `kcb.${Date.now().toString(36)}`;
  const admin = kafka.admin();
  await admin.connect();
  const source = `${prefix}.engine-facts`;
  const summaries: Summary[] = clients.map((client) => ({
    client,
    version: installedVersion(client) ?? "?",
    rounds: [],
  }));
  try {
    await createTopicsWithLeaders(admin, [{ topic: source, numPartitions: 1, replicationFactor: 1 }]);
    const values = await produceEngineFacts(kafka, workload, source);
    const records = values.length;
    log(`${records.toLocaleString("en-US")} engine-facts records on ${source}`);
    const decoding = decodeAlone(values);
    for (let round = 0; round < rounds; round += 1) {
      // Alternate the order, so no client always runs first after the others warmed the broker's cache.
      const order = round % 2 === 0 ? summaries : [...summaries].reverse();
      for (const summary of order) {
        const sink = `${prefix}.sink-${summary.client}-${round}`;
        await createTopicsWithLeaders(admin, [{ topic: sink, numPartitions: 1, replicationFactor: 1 }]);
        const report = await runChild(summary.client, source, records, sink);
        const written = await topicRecordCount(kafka, sink);
        if (written !== records) throw new Error(`${summary.client}: ${written} records on ${sink}, ${records} sent`);
        (summary.rounds as ChildReport[]).push(report);
        await admin.deleteTopics({ topics: [sink] });
        log(
          `round ${round + 1} ${summary.client}: fetch+decode ${per100k(report.fetch).toFixed(2)} CPU s/100k, produce ${per100k(report.produce).toFixed(2)} CPU s/100k`,
        );
      }
    }
    const after = loadavg();
    const section = [
      HEADING,
      "",
      `- Date: ${date} (UTC)`,
      `- Machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, node ${process.version}; the local broker (ops/services.sh) on the same cores`,
      `- Load average 1/5/15 min: ${load.map((value) => value.toFixed(1)).join(" / ")} before, ${after.map((value) => value.toFixed(1)).join(" / ")} after`,
      `- Command: \`npm run bench:kafka-clients -- --lines ${lines} --rounds ${rounds}\``,
      `- Workload: \`agentops generate --facts ${lines} --seed 42\`, its ${records.toLocaleString("en-US")} metric facts as engine-facts records on one partition; each client in a fresh child per round, alternating; produce: ${records.toLocaleString("en-US")} records (key ${WRITE_KEY_BYTES} B, value ${WRITE_VALUE_BYTES} B) to partition 0 in sends of ${WRITES_PER_SEND}, each awaited, idempotent, acks=all`,
      "",
      `Medians over ${rounds} rounds, (min–max). CPU is the client process's user + system time (every thread).`,
      "",
      table(summaries),
      "",
      `The engine's decoder alone (readEngineFact over the same values in the parent, 3 passes): ${rangeOf(decoding, 2)} CPU s per 100k records; the rest of fetch + decode is the client's.`,
    ].join("\n");
    publishResultsSection(HEADING, section, !argv.includes("--no-write"), log);
  } finally {
    await admin.disconnect();
    if (!argv.includes("--keep-topics")) {
      const deleted = await deletePrefixedTopics(kafka, prefix, log);
      log(`deleted ${deleted} topics of ${prefix}`);
    }
  }
}

if (argv.includes("--child")) {
  await child(
    option("--child", "") as ClientName,
    option("--source", ""),
    Number(option("--records", "0")),
    option("--sink", ""),
  );
} else {
  await main();
}
