import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import avro from "avsc";
import { ConfigError, InvariantError } from "../../errors.ts";
import { FACT_TYPES, type FactType } from "../../contract/fact-schema.ts";

/**
 * The Avro schemas under schemas/, and which one each fact type and output record uses.
 *
 * Subject naming: several fact types share agentops.facts.v1, so TopicNameStrategy
 * (`<topic>-value`, one schema per topic) cannot hold them. Subjects follow RecordNameStrategy:
 * the record's full name, e.g. `agentops.v1.ModelCall`, the same in every topic that carries it.
 * That is also what @kafkajs/confluent-schema-registry derives from an Avro schema by default.
 */
export const SCHEMAS_DIR = fileURLToPath(new URL("../../../schemas/", import.meta.url));

export const NAMESPACE = "agentops.v1";

/** File of each fact type's schema. */
export const FACT_SCHEMA_FILES: Readonly<Record<FactType, string>> = {
  model_call: "model-call.avsc",
  cost: "cost.avsc",
  delivery_summary: "delivery-summary.avsc",
  packet: "packet.avsc",
  repair: "repair.avsc",
  task_snapshot: "task-snapshot.avsc",
  agent_step: "agent-step.avsc",
  sandbox_event: "sandbox-event.avsc",
};

/** Files of the records the processors write. */
export const OUTPUT_SCHEMA_FILES = {
  metricResult: "metric-result.avsc",
  tripwireAlert: "tripwire-alert.avsc",
  deadLetter: "dead-letter.avsc",
} as const;

export type OutputRecord = keyof typeof OUTPUT_SCHEMA_FILES;

export interface LoadedSchema {
  readonly file: string;
  /** e.g. agentops.v1.ModelCall */
  readonly fullName: string;
  /** Registry subject (RecordNameStrategy): the full name. */
  readonly subject: string;
  /** The schema as written in the file, for registering it. */
  readonly text: string;
  /** The parsed avsc type, for local encoding, decoding and validation. */
  readonly type: avro.Type;
}

export interface SchemaCatalog {
  readonly facts: ReadonlyMap<FactType, LoadedSchema>;
  readonly outputs: Readonly<Record<OutputRecord, LoadedSchema>>;
  /** Every schema, facts first. */
  readonly all: readonly LoadedSchema[];
}

export function subjectFor(fullName: string): string {
  return fullName;
}

function isRecordSchema(value: unknown): value is { type: "record"; name: string; namespace?: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { type?: unknown }).type === "record" &&
    typeof (value as { name?: unknown }).name === "string"
  );
}

export function loadSchemaFile(file: string, dir: string = SCHEMAS_DIR): LoadedSchema {
  const path = `${dir.replace(/\/?$/, "/")}${file}`;
  let text: string;
  let json: unknown;
  try {
    text = readFileSync(path, "utf8");
    json = JSON.parse(text);
  } catch (error) {
    throw schemaFileError(path, `cannot be read or parsed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isRecordSchema(json)) throw schemaFileError(path, "the top level is not an Avro record with a name");
  if (json.namespace !== NAMESPACE)
    throw schemaFileError(path, `namespace is ${String(json.namespace)}, not ${NAMESPACE}`);
  let type: avro.Type;
  try {
    type = avro.Type.forSchema(json as avro.Schema);
  } catch (error) {
    throw schemaFileError(
      path,
      `is not a valid Avro schema: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const fullName = `${json.namespace}.${json.name}`;
  return { file, fullName, subject: subjectFor(fullName), text, type };
}

/** A schema file the program ships is missing or broken: the installation needs repair. */
function schemaFileError(path: string, problem: string): ConfigError {
  return new ConfigError({
    field: path,
    problem,
    fix: "restore the file as the release ships it (git checkout -- schemas/)",
  });
}

/** Loads every schema; fails naming the file when one is missing or invalid. */
export function loadSchemas(dir: string = SCHEMAS_DIR): SchemaCatalog {
  const facts = new Map<FactType, LoadedSchema>();
  for (const factType of FACT_TYPES) facts.set(factType, loadSchemaFile(FACT_SCHEMA_FILES[factType], dir));
  const outputs = {
    metricResult: loadSchemaFile(OUTPUT_SCHEMA_FILES.metricResult, dir),
    tripwireAlert: loadSchemaFile(OUTPUT_SCHEMA_FILES.tripwireAlert, dir),
    deadLetter: loadSchemaFile(OUTPUT_SCHEMA_FILES.deadLetter, dir),
  };
  return { facts, outputs, all: [...facts.values(), ...Object.values(outputs)] };
}

export function factSchema(catalog: SchemaCatalog, factType: FactType): LoadedSchema {
  const schema = catalog.facts.get(factType);
  if (schema === undefined) throw new InvariantError({ problem: `no schema for fact type ${factType}` });
  return schema;
}
