/**
 * The reader's half of a fact's Avro form (the writer's is src/kafka/serde/fact-record.ts): a
 * field whose reported value the schema cannot hold travels as JSON text in `raw_values`, and is
 * put back here before the record is validated, so an Avro record reads as the line it came from.
 */
export const RAW_VALUES_FIELD = "raw_values";

/** Nesting allowed in one carried value, on write and on read: deeper JSON is refused before it is parsed. */
export const MAX_RAW_DEPTH = 32;

export type Restored =
  { readonly ok: true; readonly record: unknown } | { readonly ok: false; readonly detail: string };

/**
 * A decoded fact record (avsc's plain data) as reported: each `raw_values` entry put back in its
 * field. Not ok when an entry is not JSON, or nests deeper than MAX_RAW_DEPTH.
 */
export function restoreRawValues(record: unknown): Restored {
  if (typeof record !== "object" || record === null || !(RAW_VALUES_FIELD in record)) return { ok: true, record };
  const { [RAW_VALUES_FIELD]: raw, ...rest } = record as Record<string, unknown>;
  if (typeof raw !== "object" || raw === null) return { ok: true, record: rest };
  for (const [name, text] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof text !== "string" || depthOf(text) > MAX_RAW_DEPTH) {
      return { ok: false, detail: `${RAW_VALUES_FIELD}.${name} is not JSON of at most ${MAX_RAW_DEPTH} levels` };
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { ok: false, detail: `${RAW_VALUES_FIELD}.${name} is not JSON: ${reason}` };
    }
    // defineProperty: a field named __proto__ becomes an own key (then an unknown field), never the prototype.
    Object.defineProperty(rest, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return { ok: true, record: rest };
}

/** Deepest nesting of brackets outside strings in a JSON text (not checking it is JSON). */
export function depthOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (code === 0x5d || code === 0x7d) depth--;
  }
  return deepest;
}
