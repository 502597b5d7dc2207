import { SchemaType } from "@kafkajs/confluent-schema-registry";
import type avro from "avsc";
import { describe, expect, it } from "vitest";
import { FACT_TYPES, type FactType } from "../../src/contract/fact-schema.ts";
import { asReported, parseDecodedFact } from "../../src/contract/parse-fact.ts";
import { decodeFact } from "../../src/kafka/serde/decode-fact.ts";
import { RAW_VALUES_FIELD } from "../../src/contract/raw-values.ts";
import { factToAvro } from "../../src/kafka/serde/fact-record.ts";
import { FACT_SCHEMA_FILES, loadSchemaFile, type LoadedSchema } from "../../src/kafka/serde/schemas.ts";
import { plainData } from "../../src/kafka/serde/wire-decoder.ts";
import { serviceEndpoints, testRegistry, uniqueName } from "../support/kafka.ts";
import { sampleFacts } from "../support/sample-records.ts";

/**
 * The fact schemas that carry every accepted fact (nullable money measures, raw_values) evolve
 * the first published ones compatibly: the registry's own BACKWARD check accepts each new version
 * over the old one, and a record written under an old schema still decodes, through the registry
 * and through a reader of the new schema, to the fact it was before.
 */

const OLD_SCHEMAS = new URL("../fixtures/schemas-v1/", import.meta.url).pathname;
const registry = testRegistry();
const ccompat = serviceEndpoints().registryUrl.replace(/\/$/, "");

async function ccompatCall(method: "POST" | "PUT", path: string, body: unknown): Promise<Record<string, unknown>> {
  const headers = { "content-type": "application/vnd.schemaregistry.v1+json" };
  const response = await fetch(`${ccompat}${path}`, { method, headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** The registry's BACKWARD check of `schema` against the subject's latest version. */
async function backwardCompatible(subject: string, schema: string): Promise<boolean> {
  const path = `/compatibility/subjects/${encodeURIComponent(subject)}/versions/latest`;
  const answer = await ccompatCall("POST", path, { schema });
  return answer["is_compatible"] === true;
}

/** A sample fact in the shape of `schema`: its defaults for fields the sample does not name. */
function inShapeOf(schema: LoadedSchema, record: Record<string, unknown>): Record<string, unknown> {
  const shaped: Record<string, unknown> = {};
  for (const field of (schema.type as avro.types.RecordType).fields) {
    shaped[field.name] = field.name in record ? record[field.name] : field.defaultValue();
  }
  return shaped;
}

function oldAndNew(type: FactType): { old: LoadedSchema; current: LoadedSchema } {
  const file = FACT_SCHEMA_FILES[type];
  return { old: loadSchemaFile(file, OLD_SCHEMAS), current: loadSchemaFile(file) };
}

describe("fact schemas evolve BACKWARD-compatibly", () => {
  for (const type of FACT_TYPES) {
    it(`${type}: the registry accepts the new version over the old, and old records read the same`, async () => {
      const { old, current } = oldAndNew(type);
      expect(current.text).not.toBe(old.text);
      const subject = uniqueName(`agentops.test.evolution.${type}`);
      await ccompatCall("PUT", `/config/${encodeURIComponent(subject)}`, { compatibility: "BACKWARD" });
      const oldId = (await registry.register({ type: SchemaType.AVRO, schema: old.text }, { subject })).id;

      // The check can fail: a new field without a default cannot be read from old records.
      const withoutDefault = JSON.parse(current.text) as { fields: Record<string, unknown>[] };
      const rawValues = withoutDefault.fields.find((field) => field["name"] === RAW_VALUES_FIELD);
      if (rawValues === undefined) throw new Error(`${current.file} has no ${RAW_VALUES_FIELD}`);
      delete rawValues["default"];
      expect(await backwardCompatible(subject, JSON.stringify(withoutDefault))).toBe(false);
      expect(await backwardCompatible(subject, current.text)).toBe(true);
      const newId = (await registry.register({ type: SchemaType.AVRO, schema: current.text }, { subject })).id;
      expect(newId).not.toBe(oldId);

      const sample = inShapeOf(old, sampleFacts[type]);
      const expected = parseDecodedFact(structuredClone(sample));
      expect(expected.ok).toBe(true);
      if (!expected.ok) return;
      // Through the registry: written under the old id, under the new one, and read.
      const underOld = await decodeFact(registry, await registry.encode(oldId, sample));
      const newRecord = factToAvro(asReported(expected.fact) as unknown as Record<string, unknown>, current.type);
      const underNew = await decodeFact(registry, await registry.encode(newId, newRecord));
      expect(underOld).toEqual({ ...expected, factId: expected.fact.fact_id });
      expect(underNew).toEqual(underOld);
      // A consumer holding the new schema reads old bytes by Avro schema resolution.
      const resolver = current.type.createResolver(old.type);
      const oldBytes = old.type.toBuffer(sample);
      const resolved = plainData(current.type.fromBuffer(oldBytes, resolver)) as Record<string, unknown>;
      expect(resolved[RAW_VALUES_FIELD]).toEqual({});
      expect(parseDecodedFact(resolved)).toEqual(expected);
    });
  }
});
