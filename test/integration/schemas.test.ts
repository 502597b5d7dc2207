import { SchemaType } from "@kafkajs/confluent-schema-registry";
import type avro from "avsc";
import type { Admin } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FACT_TYPES } from "../../src/contract/fact-schema.ts";
import { AvroTopicSerde } from "../../src/kafka/serde/avro-serde.ts";
import type { MetricResult } from "../../src/contract/result-record.ts";
import { loadSchemas, type LoadedSchema } from "../../src/kafka/serde/schemas.ts";
import {
  closeAll,
  connectedAdmin,
  connectedProducer,
  consumeMessages,
  createTestTopic,
  testRegistry,
  uniqueName,
} from "../support/kafka.ts";
import { sampleFacts, sampleOutputs, sampleSnapshotResult } from "../support/sample-records.ts";

const catalog = loadSchemas();
const registry = testRegistry();
let admin: Admin;

beforeAll(async () => {
  admin = await connectedAdmin();
});
afterAll(closeAll);

/**
 * A sample completed with the schema's defaults for fields it does not mention, so a field added
 * later as `["null", T]` with a default (the only BACKWARD-compatible kind) keeps these tests valid.
 */
function withDefaults(schema: LoadedSchema, record: Record<string, unknown>): Record<string, unknown> {
  const completed: Record<string, unknown> = {};
  for (const field of (schema.type as avro.types.RecordType).fields)
    completed[field.name] = field.name in record ? record[field.name] : field.defaultValue();
  return completed;
}

function cases(): Array<{ schema: LoadedSchema; record: Record<string, unknown> }> {
  return withSchemaDefaults([
    ...FACT_TYPES.map((factType) => {
      const schema = catalog.facts.get(factType);
      if (schema === undefined) throw new Error(`no schema for ${factType}`);
      return { schema, record: sampleFacts[factType] };
    }),
    { schema: catalog.outputs.metricResult, record: sampleOutputs.metricResult },
    { schema: catalog.outputs.metricResult, record: sampleSnapshotResult },
    { schema: catalog.outputs.tripwireAlert, record: sampleOutputs.tripwireAlert },
    { schema: catalog.outputs.deadLetter, record: sampleOutputs.deadLetter },
  ]);
}

function withSchemaDefaults(
  list: Array<{ schema: LoadedSchema; record: Record<string, unknown> }>,
): Array<{ schema: LoadedSchema; record: Record<string, unknown> }> {
  return list.map(({ schema, record }) => ({ schema, record: withDefaults(schema, record) }));
}

describe("Avro schemas", () => {
  it("cover all 8 fact types with subjects named after the record (RecordNameStrategy)", () => {
    expect([...catalog.facts.keys()].sort()).toEqual([...FACT_TYPES].sort());
    expect(catalog.facts.get("model_call")?.subject).toBe("agentops.v1.ModelCall");
    expect(new Set(catalog.all.map((schema) => schema.subject)).size).toBe(11);
    for (const { schema, record } of cases())
      expect(schema.type.isValid(record), `${schema.fullName} sample`).toBe(true);
  });

  it("every schema round-trips: register, encode, produce to the broker, consume, decode, equal", async () => {
    const topic = await createTestTopic(admin, "schemas-roundtrip", { numPartitions: 3 });
    const all = cases();
    // Sequentially: Apicurio 3.3.3 answers concurrent first registrations of new subjects with
    // "A rule named 'COMPATIBILITY' already exists" (a race in its rule bootstrap).
    const encoded: Array<{ key: string; value: Buffer }> = [];
    for (const [index, { schema, record }] of all.entries()) {
      const { id } = await registry.register(
        { type: SchemaType.AVRO, schema: schema.text },
        { subject: schema.subject },
      );
      expect(await registry.getLatestSchemaId(schema.subject)).toBe(id);
      encoded.push({ key: String(index), value: await registry.encode(id, record) });
    }
    const producer = await connectedProducer();
    await producer.send({ topic, messages: encoded });
    const messages = await consumeMessages(topic, all.length);
    expect(messages).toHaveLength(all.length);
    for (const message of messages) {
      const index = Number(message.key?.toString());
      const expected = all[index];
      if (expected === undefined || message.value === null)
        throw new Error(`unexpected message ${String(message.key)}`);
      expect(message.value[0], "Confluent wire format magic byte").toBe(0);
      const decoded: unknown = await registry.decode(message.value);
      expect(decoded, expected.schema.fullName).toEqual(expected.record);
    }
  });

  it("the result serde names its form by the schema id its encodings carry (a store of results checkpointed under another id is compared in full)", async () => {
    const serde = new AvroTopicSerde(registry, catalog);
    const result: MetricResult = {
      catalog: "agentops.evaluation.metric-catalog@1.0.0",
      metric_id: "operational-latency-ms",
      metric_version: "1.0.0",
      scope: { kind: "window", start: "2026-10-01T00:00:00.000Z", end: "2026-10-02T00:00:00.000Z" },
      cohort: {},
      status: "NOT_AVAILABLE",
      value: null,
      na_reason:
        "N/A when no attributed operational model call with a valid native Span duration exists in the window; unavailable is never zero",
      measures: null,
      eligible_units: 0,
      minimum_sample: 1,
      coverage: {
        numerator: 0,
        denominator: 0,
        raw_ratio: null,
        state: "NO_COVERAGE",
        alert: false,
        threshold_hundredths: 10,
      },
      exclusions: {},
      as_of: null,
    };
    const encoded = await serde.encodeResult(result);
    expect(await serde.resultEncoding()).toBe(`avro:${String(encoded.readUInt32BE(1))}`);
  });

  it("the registry refuses an incompatible change under BACKWARD and accepts a compatible one", async () => {
    const subject = uniqueName("agentops.test.Evolving");
    const base = JSON.parse(catalog.facts.get("packet")?.text ?? "{}") as { fields: unknown[] };
    const v1 = { ...base, name: "Evolving", namespace: "agentops.test" };
    await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(v1) }, { subject });
    // BACKWARD: readers of the new schema must read data written with the old one. A required
    // field without a default cannot be filled from old data, so the registry must refuse it.
    const requiredField = { ...v1, fields: [...v1.fields, { name: "new_required", type: "string" }] };
    await expect(
      registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(requiredField) }, { subject }),
    ).rejects.toThrow(/incompatib/i);
    const changedType = {
      ...v1,
      fields: v1.fields.map((field) =>
        (field as { name: string }).name === "packet_id" ? { name: "packet_id", type: "long" } : field,
      ),
    };
    await expect(
      registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(changedType) }, { subject }),
    ).rejects.toThrow(/incompatib/i);
    const optionalField = {
      ...v1,
      fields: [...v1.fields, { name: "new_optional", type: ["null", "string"], default: null }],
    };
    const { id } = await registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(optionalField) },
      { subject },
    );
    expect(await registry.getLatestSchemaId(subject)).toBe(id);
  });
});
