import { z } from "zod";

/**
 * Event times travel as RFC 3339 strings with an explicit zone (the JSON form) or as Date (Avro
 * timestamp-millis, decoded; see `epochFieldsAsDates`). Both normalise to integer epoch
 * milliseconds. Contract revision 2 §1: the string must name a real calendar instant (no 02-30,
 * no 24:00, no second 60; `Date.parse` would roll those over into the next day or month and move
 * the fact across a window or a snapshot cutoff), and a JSON number is not a timestamp.
 */
const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|([+-])(\d{2}):(\d{2}))$/;

// Numbers are let through the union only to be refused with the right reason (INVALID_TIMESTAMP).
export const timestampSchema = z.union([z.string(), z.date(), z.number()]).transform((input, ctx) => {
  const millis = typeof input === "number" ? undefined : toEpochMillis(input);
  if (millis === undefined) {
    ctx.addIssue({ code: "custom", message: `"${String(input)}" is not a real calendar instant (RFC 3339 with Z or ±hh:mm; a number is not a timestamp)`, params: { reason: "INVALID_TIMESTAMP" } });
    return z.NEVER;
  }
  return millis;
});

/** The acceptance rule of `timestampSchema`, exported for the fast path (src/contract/fast-parse.ts). */
export function toEpochMillis(input: string | Date): number | undefined {
  if (input instanceof Date) return Number.isNaN(input.getTime()) ? undefined : input.getTime();
  const parts = RFC_3339.exec(input);
  if (parts === null) return undefined;
  const number = (index: number): number => Number(parts[index] ?? "0");
  const year = number(1);
  const month = number(2);
  const day = number(3);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (number(4) > 23 || number(5) > 59 || number(6) > 59) return undefined;
  if (number(10) > 23 || number(11) > 59) return undefined;
  const millis = Date.parse(input);
  return Number.isNaN(millis) ? undefined : millis;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Avro's timestamp-millis arrives as a number (avsc without logical types) and the engine topic's
 * normalised facts carry epoch milliseconds: both are timestamps by their schema, unlike a number
 * in the JSON form. This turns those fields into Dates, in place, before validation.
 */
export function epochFieldsAsDates(record: unknown): void {
  if (typeof record !== "object" || record === null) return;
  const fields = record as Record<string, unknown>;
  for (const key of ["event_time", "cutoff"]) {
    const value = fields[key];
    if (typeof value === "number" && Number.isSafeInteger(value)) fields[key] = new Date(value);
  }
}

/** The JSON form written by this project: RFC 3339, UTC, millisecond precision. */
export function formatTimestamp(millis: number): string {
  return new Date(millis).toISOString();
}
