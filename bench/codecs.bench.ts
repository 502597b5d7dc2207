/**
 * Micro-benchmark of the internal topics' record encodings (`npm run bench:codecs`), per record,
 * on the bench workload's accepted facts:
 *
 *   engine-facts record (ingest encodes, the engine decodes; ~79% of the workload):
 *     - JSON (before): `{"fact":…,"source":…}` written by JSON.stringify, read by JSON.parse and
 *       validated again with parseNormalizedFact (the legacy path readEngineFact still takes);
 *     - binary layout (after): encodeEngineFact / decodeEngineFact, read without validating;
 *     - Avro body only (for the choice): the public schema of the fact's type through avsc
 *       (`toBuffer` / `fromBuffer`), without what an exact round trip would add (absent fields as
 *       null, re-validation), on the facts without invalid measures (the public schemas cannot
 *       carry those): a lower bound of an Avro form's cost.
 *   agent-event record (ingest writes, the run monitor reads; ~21%):
 *     - registry Avro (before): the same bytes forwarded, read as the run monitor did (avsc decode
 *       of the Confluent body, plain data, parseDecodedFact), registry lookup excluded;
 *     - binary layout (after): encodeAgentEvent / decodeAgentEvent.
 *
 * 7 rounds each, alternating the forms; reports the median records/s and bytes per record, with
 * the load average before and after.
 *
 *   node bench/codecs.bench.ts [file]   (default bench/out/facts-100000-seed42.ndjson; `npm run bench` generates it)
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { isAgentEvent, type AgentEvent, type MetricFact } from "../src/contract/facts.ts";
import { parseDecodedFact, parseFactJson } from "../src/contract/parse-fact.ts";
import { decodeAgentEvent, encodeAgentEvent } from "../src/kafka/serde/agent-events-record.ts";
import { shapeForAvro } from "../src/kafka/serde/avro-shape.ts";
import {
  decodeEngineFact,
  encodeEngineFact,
  engineFactKey,
  readEngineFact,
  type SourceCoordinates,
} from "../src/kafka/serde/engine-facts-record.ts";
import { loadSchemas } from "../src/kafka/serde/schemas.ts";
import { plainData } from "../src/kafka/serde/wire-decoder.ts";

const file = process.argv[2] ?? "bench/out/facts-100000-seed42.ndjson";
const ROUNDS = 7;
const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(" / ");

const facts: MetricFact[] = [];
const events: AgentEvent[] = [];
for (const line of readFileSync(file, "utf8").split("\n")) {
  if (line.length === 0) continue;
  const parsed = parseFactJson(line);
  if (!parsed.ok) continue;
  if (isAgentEvent(parsed.fact)) events.push(parsed.fact);
  else facts.push(parsed.fact);
}
const sources: SourceCoordinates[] = facts.map((_, index) => ({
  topic: "agentops.facts.v1",
  partition: index % 3,
  offset: String(1_000_000 + index),
}));
const schemas = loadSchemas();
/** Avro records of the public schemas (absent fields as null), for the facts they can carry. */
const avroFacts = facts.flatMap((fact) => {
  const type = schemas.facts.get(fact.type)?.type;
  if (type === undefined) throw new Error(`no schema for ${fact.type}`);
  const record = shapeForAvro(fact, type);
  return type.isValid(record) ? [{ type, record }] : [];
});
const eventType = (event: AgentEvent) => {
  const type = schemas.facts.get(event.type)?.type;
  if (type === undefined) throw new Error(`no schema for ${event.type}`);
  return type;
};
const avroEvents = events.map((event) => ({
  type: eventType(event),
  bytes: eventType(event).toBuffer(shapeForAvro(event, eventType(event))),
}));

/** Today's engine-facts value (before this change), as ingest wrote it. */
function encodeJson(fact: MetricFact, source: SourceCoordinates): { key: string; value: Buffer } {
  const canonical = JSON.stringify(fact);
  return {
    key: engineFactKey(fact, canonical),
    value: Buffer.from(`{"fact":${canonical},"source":${JSON.stringify(source)}}`, "utf8"),
  };
}

interface Form {
  readonly name: string;
  readonly records: number;
  encode(): Buffer[];
  decode(values: readonly Buffer[]): number;
}

const forms: Form[] = [
  {
    name: "engine-facts: JSON + parseNormalizedFact (before)",
    records: facts.length,
    encode: () => facts.map((fact, index) => encodeJson(fact, sources[index] as SourceCoordinates).value),
    decode: (values) => values.reduce((count, value) => count + (readEngineFact(value).ok ? 1 : 0), 0),
  },
  {
    name: "engine-facts: binary layout (after)",
    records: facts.length,
    encode: () => facts.map((fact, index) => encodeEngineFact(fact, sources[index] as SourceCoordinates).value),
    decode: (values) => values.reduce((count, value) => count + (decodeEngineFact(value) === undefined ? 0 : 1), 0),
  },
  {
    name: "engine-facts: Avro body via avsc (lower bound)",
    records: avroFacts.length,
    encode: () => avroFacts.map(({ type, record }) => type.toBuffer(record)),
    decode: (values) =>
      values.reduce(
        (count, value, index) => count + ((avroFacts[index]?.type.fromBuffer(value) as unknown) === undefined ? 0 : 1),
        0,
      ),
  },
  {
    name: "agent events: registry Avro, decode + validate (before)",
    records: events.length,
    encode: () => avroEvents.map(({ bytes }) => bytes),
    decode: (values) =>
      values.reduce(
        (count, value, index) =>
          count + (parseDecodedFact(plainData(avroEvents[index]?.type.fromBuffer(value))).ok ? 1 : 0),
        0,
      ),
  },
  {
    name: "agent events: binary layout (after)",
    records: events.length,
    encode: () => events.map((event) => encodeAgentEvent(event)),
    decode: (values) => values.reduce((count, value) => count + (decodeAgentEvent(value).fact_id === "" ? 0 : 1), 0),
  },
];

console.log(
  `${file}: ${facts.length} metric facts (${avroFacts.length} without invalid measures), ${events.length} agent events; ${ROUNDS} rounds; load average before ${load()}`,
);
const timings = new Map<Form, { encode: number[]; decode: number[]; bytes: number }>(
  forms.map((form) => [form, { encode: [], decode: [], bytes: 0 }]),
);
for (let round = 0; round < ROUNDS; round++) {
  for (const form of forms) {
    const timing = timings.get(form);
    if (timing === undefined) continue;
    let started = performance.now();
    const values = form.encode();
    timing.encode.push(form.records / ((performance.now() - started) / 1000));
    started = performance.now();
    const decoded = form.decode(values);
    timing.decode.push(form.records / ((performance.now() - started) / 1000));
    if (decoded !== form.records) throw new Error(`${form.name}: decoded ${decoded} of ${form.records}`);
    timing.bytes = values.reduce((sum, value) => sum + value.length, 0) / values.length;
  }
}

const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const rate = (value: number): string => Math.round(value).toLocaleString("en-US");
console.log("| record form | encode (records/s) | decode (records/s) | encode + decode (records/s) | bytes/record |");
console.log("|---|---:|---:|---:|---:|");
for (const form of forms) {
  const timing = timings.get(form);
  if (timing === undefined) continue;
  const encode = median(timing.encode);
  const decode = median(timing.decode);
  console.log(
    `| ${form.name} | ${rate(encode)} | ${rate(decode)} | ${rate(1 / (1 / encode + 1 / decode))} | ${timing.bytes.toFixed(0)} |`,
  );
}
console.log(`load average after ${load()}`);
