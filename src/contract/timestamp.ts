import { z } from "zod";

/**
 * Event times travel as RFC 3339 strings with an explicit zone (the JSON form) or as Date (Avro
 * timestamp-millis, decoded; see `epochFieldsAsDates`). Both normalise to integer epoch
 * milliseconds. Contract revision 2 §1: the string must name a real calendar instant (no 02-30,
 * no 24:00, no second 60; `Date.parse` would roll those over into the next day or month and move
 * the fact across a window or a snapshot cutoff), and a JSON number is not a timestamp.
 * Revision 3 change 12: the instant must lie in TIMESTAMP_RANGE, so that every window bound,
 * cutoff and as_of the engine writes is a four-digit-year RFC 3339 string its own parser reads.
 */
const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * The instants a timestamp may name, after its offset is applied: 0001-01-01T00:00:00Z to
 * 9999-12-30T23:59:59.999Z. The last day of year 9999 is left out so that a one-day window's end
 * stays within it.
 */
export const TIMESTAMP_RANGE = {
  min: Date.parse("0001-01-01T00:00:00Z"),
  max: Date.parse("9999-12-30T23:59:59.999Z"),
} as const;

function inRange(millis: number): number | undefined {
  return millis >= TIMESTAMP_RANGE.min && millis <= TIMESTAMP_RANGE.max ? millis : undefined;
}

// Numbers are let through the union only to be refused with the right reason (INVALID_TIMESTAMP).
export const timestampSchema = z.union([z.string(), z.date(), z.number()]).transform((input, ctx) => {
  const millis = typeof input === "number" ? undefined : toEpochMillis(input);
  if (millis === undefined) {
    ctx.addIssue({
      code: "custom",
      message:
        `"${String(input)}" is not a real calendar instant in 0001-01-01T00:00:00Z..9999-12-30T23:59:59.999Z (RFC ` +
        `3339 with Z or ±hh:mm; a number is not a timestamp)`,
      params: { reason: "INVALID_TIMESTAMP" },
    });
    return z.NEVER;
  }
  return millis;
});

/** The acceptance rule of `timestampSchema`, exported for the fast path (src/contract/fast-parse.ts). */
export function toEpochMillis(input: string | Date): number | undefined {
  if (input instanceof Date) return Number.isNaN(input.getTime()) ? undefined : inRange(input.getTime());
  // Every time of every line passes here: the fields are read at their fixed positions once the
  // shape matched, without capture groups or a Date per check.
  if (!RFC_3339.test(input)) return undefined;
  const year = digitsAt(input, 0, 4);
  const month = digitsAt(input, 5, 2);
  const day = digitsAt(input, 8, 2);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  const seconds = input.charCodeAt(16) === COLON ? digitsAt(input, 17, 2) : 0;
  if (digitsAt(input, 11, 2) > 23 || digitsAt(input, 14, 2) > 59 || seconds > 59) return undefined;
  const end = input.length;
  if (input.charCodeAt(end - 1) !== UPPER_Z && (digitsAt(input, end - 5, 2) > 23 || digitsAt(input, end - 2, 2) > 59))
    return undefined;
  const millis = Date.parse(input);
  return Number.isNaN(millis) ? undefined : inRange(millis);
}

const COLON = 0x3a;
const UPPER_Z = 0x5a;
const ZERO = 0x30;

/** The decimal number written by `count` digits at `start` (the pattern has checked they are digits). */
function digitsAt(text: string, start: number, count: number): number {
  let value = 0;
  for (let index = start; index < start + count; index++) value = value * 10 + (text.charCodeAt(index) - ZERO);
  return value;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Proleptic Gregorian, as Date.parse reads years 0000–9999. */
function daysInMonth(year: number, month: number): number {
  if (month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) return 29;
  return DAYS_IN_MONTH[month - 1] ?? 0;
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
