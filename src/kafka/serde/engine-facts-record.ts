import { hash } from "node:crypto";
import { isAgentEvent, type MetricFact } from "../../contract/facts.ts";
import { intern } from "../../contract/fast-fields.ts";
import { parseNormalizedFact } from "../../contract/parse-fact.ts";
import { BinaryReader, BinaryWriter, InternalRecordError } from "../../codec/binary-form.ts";
import { FACT_LAYOUT_VERSION, readFact, writeFact } from "../../codec/fact-layout.ts";

/**
 * The engine's input topic doubles as its state changelog: accepted, normalised facts, one
 * record per distinct version. The key is fact_id plus a digest of the canonical content, so
 * compaction removes exact redeliveries but never one side of a conflict (two versions of one
 * fact_id have different keys and both survive, so a rebuild quarantines them again).
 *
 * The value is internal (written only by ingest, after validation), so it is not Avro through the
 * registry but the fixed binary layout of src/codec/fact-layout.ts, read without
 * validating again: a marker byte, the layout version, the source coordinates, the fact.
 */
export function engineFactKey(fact: MetricFact, canonical: string): string {
  // One-shot crypto.hash: the same digest as createHash(…).update(…).digest(), a third of the cost per record.
  return `${fact.fact_id}\u0000${hash("sha256", canonical, "hex").slice(0, 32)}`;
}

/** Where a fact was first read, so a conflict found later can point at the records involved. */
export interface SourceCoordinates {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/** First byte of an engine-facts record: neither the Confluent wire format's 0 nor JSON's `{`. */
export const ENGINE_FACT_MARKER = 0xef;
/** Before the binary layout, values were `{"fact":…,"source":…}` JSON; compacted topics still hold them. */
const LEGACY_JSON_MARKER = 0x7b;

const writer = new BinaryWriter();

export function encodeEngineFact(fact: MetricFact, source: SourceCoordinates): { key: string; value: Buffer } {
  writer.start();
  writer.byte(ENGINE_FACT_MARKER);
  writer.byte(FACT_LAYOUT_VERSION);
  writer.string(source.topic);
  writer.unsigned(source.partition);
  writer.string(source.offset);
  writeFact(writer, fact);
  return { key: engineFactKey(fact, JSON.stringify(fact)), value: writer.finish() };
}

export type EngineFactReading =
  | { readonly ok: true; readonly fact: MetricFact; readonly source: SourceCoordinates }
  | { readonly ok: false; readonly detail: string };

/** Reads a record of the engine-facts topic, or says why it cannot be read (never throws). */
export function readEngineFact(value: Buffer): EngineFactReading {
  if (value[0] === LEGACY_JSON_MARKER) return readLegacyJson(value);
  try {
    if (value[0] !== ENGINE_FACT_MARKER)
      throw new InternalRecordError(`not an engine-facts record (first byte ${String(value[0])})`);
    if (value[1] !== FACT_LAYOUT_VERSION)
      throw new InternalRecordError(
        `engine-facts layout version ${String(value[1])}; this build reads version ${FACT_LAYOUT_VERSION}`,
      );
    const reader = new BinaryReader(value, 2);
    const source = { topic: intern(reader.string()), partition: reader.unsigned(), offset: reader.string() };
    const fact = readFact(reader);
    reader.end();
    if (isAgentEvent(fact))
      throw new InternalRecordError(`a ${fact.type} record does not belong on the engine-facts topic`);
    return { ok: true, fact, source };
  } catch (error) {
    if (error instanceof InternalRecordError) return { ok: false, detail: error.message };
    throw error;
  }
}

/** The engine's read: the fact and its source, or undefined for a record that cannot be read. */
export function decodeEngineFact(value: Buffer): { fact: MetricFact; source: SourceCoordinates } | undefined {
  const reading = readEngineFact(value);
  return reading.ok ? { fact: reading.fact, source: reading.source } : undefined;
}

/** A record written as JSON by an earlier version: validated again, as it was then. */
function readLegacyJson(value: Buffer): EngineFactReading {
  let record: { fact?: unknown; source?: SourceCoordinates };
  try {
    record = JSON.parse(value.toString("utf8")) as { fact?: unknown; source?: SourceCoordinates };
  } catch (error) {
    return {
      ok: false,
      detail: `legacy JSON record does not parse: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const parsed = parseNormalizedFact(record.fact);
  if (!parsed.ok) return { ok: false, detail: `legacy JSON record no longer validates: ${parsed.rejection.detail}` };
  if (isAgentEvent(parsed.fact) || record.source === undefined)
    return { ok: false, detail: "legacy JSON record without a metric fact and its source" };
  return { ok: true, fact: parsed.fact, source: record.source };
}
