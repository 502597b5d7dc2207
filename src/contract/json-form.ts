import { formatTimestamp } from "./timestamp.ts";

/**
 * The JSON form people read (NDJSON files, `--json` output): times are RFC 3339 strings, as in
 * facts and results, never epoch numbers. Avro keeps timestamp-millis. This is the one place an
 * output record's epoch-millisecond `event_time` (a tripwire alert's) becomes text.
 */
export function jsonLine(record: unknown): string {
  if (typeof record !== "object" || record === null || !("event_time" in record)) return JSON.stringify(record);
  const eventTime = (record as { event_time: unknown }).event_time;
  return JSON.stringify(typeof eventTime === "number" ? { ...record, event_time: formatTimestamp(eventTime) } : record);
}
