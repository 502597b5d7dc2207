import { SchemaType, type SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import type { Fact } from "../../contract/facts.ts";
import { asReported } from "../../contract/parse-fact.ts";
import { formatTimestamp } from "../../contract/timestamp.ts";
import type { MetricResult, Scope } from "../../contract/result-record.ts";
import type { DeadLetterRecord } from "../../contract/dead-letter.ts";
import type { TopicSerde } from "./topic-serde.ts";
import { plainData } from "./wire-decoder.ts";
import { shapeForAvro } from "./avro-shape.ts";
import { factToAvro } from "./fact-record.ts";
import { factSchema, loadSchemas, type LoadedSchema, type SchemaCatalog } from "./schemas.ts";
import { InvariantError } from "../../errors.ts";

/**
 * Avro through the schema registry (Confluent wire format), for every public topic. Schemas are
 * registered once per process under RecordNameStrategy subjects; registering an unchanged schema
 * returns its existing id, and an incompatible one is refused by the registry (BACKWARD).
 * Timestamps travel as epoch milliseconds (timestamp-millis) and come back as the JSON form's
 * ISO-8601 strings, so a decoded result equals the engine's own output.
 */
export class AvroTopicSerde implements TopicSerde {
  private readonly registry: SchemaRegistry;
  private readonly schemas: SchemaCatalog;
  private readonly ids = new Map<string, Promise<number>>();

  constructor(registry: SchemaRegistry, schemas: SchemaCatalog = loadSchemas()) {
    this.registry = registry;
    this.schemas = schemas;
  }

  /**
   * Registers every schema now, so a registry problem surfaces at start-up, not mid-stream. One at
   * a time: Apicurio answers concurrent first registrations with "rule COMPATIBILITY already exists".
   */
  async registerAll(): Promise<void> {
    for (const schema of this.schemas.all) await this.idOf(schema);
  }

  /**
   * The fact as it was reported (its invalid measures put back, src/kafka/serde/fact-record.ts), so
   * the processors find and report them as a replay of the file does. Throws FactNotCarriableError
   * for a fact without an Avro form.
   */
  async encodeFact(fact: Fact): Promise<Buffer> {
    const schema = factSchema(this.schemas, fact.type);
    const record = factToAvro(asReported(fact) as unknown as Readonly<Record<string, unknown>>, schema.type);
    return this.registry.encode(await this.idOf(schema), record);
  }

  async encodeResult(result: MetricResult): Promise<Buffer> {
    const scope =
      result.scope.kind === "window"
        ? {
            "agentops.v1.WindowScope": {
              kind: "window",
              start: Date.parse(result.scope.start),
              end: Date.parse(result.scope.end),
            },
          }
        : {
            "agentops.v1.SnapshotScope": {
              kind: "snapshot",
              snapshot_id: result.scope.snapshot_id,
              cutoff: Date.parse(result.scope.cutoff),
            },
          };
    const record = { ...result, scope, as_of: result.as_of === null ? null : Date.parse(result.as_of) };
    return this.registry.encode(await this.idOf(this.schemas.outputs.metricResult), record);
  }

  async resultEncoding(): Promise<string> {
    return `avro:${String(await this.idOf(this.schemas.outputs.metricResult))}`;
  }

  async decodeResult(bytes: Buffer): Promise<MetricResult> {
    const record = plainData(await this.registry.decode(bytes)) as Omit<MetricResult, "scope" | "as_of"> & {
      scope: Record<string, Record<string, unknown>>;
      as_of: number | null;
    };
    const [branch] = Object.values(record.scope);
    if (branch === undefined) throw new InvariantError({ problem: "metric result without a scope" });
    const scope: Scope =
      branch["kind"] === "window"
        ? {
            kind: "window",
            start: formatTimestamp(Number(branch["start"])),
            end: formatTimestamp(Number(branch["end"])),
          }
        : {
            kind: "snapshot",
            snapshot_id: String(branch["snapshot_id"]),
            cutoff: formatTimestamp(Number(branch["cutoff"])),
          };
    return { ...record, scope, as_of: record.as_of === null ? null : formatTimestamp(record.as_of) };
  }

  async encodeAlert(alert: unknown): Promise<Buffer> {
    return this.encode(this.schemas.outputs.tripwireAlert, alert);
  }

  async decodeAlert(bytes: Buffer): Promise<unknown> {
    return plainData(await this.registry.decode(bytes));
  }

  async encodeDeadLetter(letter: DeadLetterRecord): Promise<Buffer> {
    const record = {
      reason: letter.reason,
      detail: letter.detail,
      field: letter.field === "" ? null : letter.field,
      source: letter.source,
      key: letter.key,
      value: letter.value,
      fact_id: letter.factId,
      record_rejected: letter.recordRejected ?? true,
      rejected_at: Date.now(),
    };
    return this.encode(this.schemas.outputs.deadLetter, record);
  }

  async decodeDeadLetter(bytes: Buffer): Promise<DeadLetterRecord> {
    const record = plainData(await this.registry.decode(bytes)) as {
      reason: DeadLetterRecord["reason"];
      detail: string;
      field: string | null;
      source: DeadLetterRecord["source"];
      key: Buffer | null;
      value: Buffer | null;
      fact_id: string | null;
      record_rejected: boolean;
    };
    return {
      reason: record.reason,
      field: record.field ?? "",
      detail: record.detail,
      source: record.source,
      factId: record.fact_id,
      key: record.key,
      value: record.value,
      recordRejected: record.record_rejected,
    };
  }

  private async encode(schema: LoadedSchema, value: unknown): Promise<Buffer> {
    return this.registry.encode(await this.idOf(schema), shapeForAvro(value, schema.type));
  }

  private idOf(schema: LoadedSchema): Promise<number> {
    let id = this.ids.get(schema.subject);
    if (id === undefined) {
      id = this.registry
        .register({ type: SchemaType.AVRO, schema: schema.text }, { subject: schema.subject })
        .then((registered) => registered.id);
      // A failed registration is not cached: the next record tries again.
      id.catch(() => this.ids.delete(schema.subject));
      this.ids.set(schema.subject, id);
    }
    return id;
  }
}
