import type { DecodedFact } from "../../../kafka/serde/decode-fact.ts";
import type { EngineFact, SourceRecord } from "../../processor.ts";
import { readRecords } from "./record-source.ts";

export interface EmbeddedOptions {
  readonly input: string;
  readonly onBytes?: (bytesRead: number) => void;
}

/**
 * The facts source of an embedded run: pushes every decoded record, in order, then resolves. A
 * facts file (`fileSource`) or, for the audit, the facts topic read to its end.
 */
export type FactSource = (emit: (record: SourceRecord<DecodedFact>) => Promise<void>) => Promise<void>;

/**
 * An engine-facts source: pushes accepted, normalised facts with their engine-facts coordinates,
 * in order, then resolves. The audit feeds the compacted engine-facts topic (the whole history of
 * accepted fact versions) straight to the engine through it, after validating each record itself.
 */
export type EngineFactSource = (emit: (record: SourceRecord<EngineFact>) => Promise<void>) => Promise<void>;

/** Where an embedded run's records enter the topology: the facts topic (ingest) or the engine-facts topic (the engine). */
export type TopologySource =
  { readonly into: "ingest"; readonly read: FactSource } | { readonly into: "engine"; readonly read: EngineFactSource };

/** The records of a facts file (NDJSON or Avro), each with its line. */
export function fileSource(options: EmbeddedOptions): FactSource {
  return async (emit) => {
    for await (const record of readRecords(options.input, options.onBytes)) {
      const factId = record.parsed.ok ? record.parsed.fact.fact_id : null;
      await emit({
        position: { file: options.input, line: record.position },
        value: { ...record.parsed, factId },
        original: { text: record.raw ?? null },
      });
    }
  };
}
