import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import avro from "avsc";
import { parseDecodedFact, parseFactJson, type ParseResult } from "../../../contract/parse-fact.ts";

/** One input record with where it came from, so a rejection can name its line or block position. */
export interface SourcedRecord {
  readonly position: number;
  readonly parsed: ParseResult;
  /** The raw text for NDJSON lines, kept only for rejected lines (the dead-letter output). */
  readonly raw: string | undefined;
}

export type InputFormat = "ndjson" | "avro";

export function inputFormatOf(path: string): InputFormat {
  return path.endsWith(".avro") ? "avro" : "ndjson";
}

/**
 * Reads NDJSON (one JSON object a line; blank lines skipped) or an Avro object container file
 * (records of the facts schemas, written with any writer schema the file declares). Streaming: the
 * file is never held in memory. `onBytes` reports progress in bytes read.
 */
export async function* readRecords(path: string, onBytes?: (bytesRead: number) => void): AsyncGenerator<SourcedRecord> {
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  if (onBytes !== undefined) stream.on("data", () => onBytes(stream.bytesRead));
  if (inputFormatOf(path) === "avro") {
    yield* readAvro(stream);
    return;
  }
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let position = 0;
  for await (const line of lines) {
    position += 1;
    if (line.trim() === "") continue;
    const parsed = parseFactJson(line);
    yield { position, parsed, raw: parsed.ok ? undefined : line };
  }
}

async function* readAvro(stream: NodeJS.ReadableStream): AsyncGenerator<SourcedRecord> {
  const decoder = stream.pipe(
    new avro.streams.BlockDecoder({
      parseHook: (schema: avro.Schema) => avro.Type.forSchema(schema, { wrapUnions: false }),
    }),
  );
  let position = 0;
  for await (const record of decoder as AsyncIterable<unknown>) {
    position += 1;
    const parsed = parseDecodedFact(record);
    yield { position, parsed, raw: parsed.ok ? undefined : safeJson(record) };
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_, inner: unknown) =>
      typeof inner === "bigint" ? inner.toString() : Buffer.isBuffer(inner) ? inner.toString("base64") : inner,
    );
  } catch {
    return String(value);
  }
}
