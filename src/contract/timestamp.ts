import { z } from "zod";

/**
 * Event times travel as ISO-8601 strings with an explicit zone (JSON form), as epoch
 * milliseconds (JSON numbers), or as Date (Avro timestamp-millis). All normalise to integer epoch
 * milliseconds, so the same instant written two ways is the same fact.
 */
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export const timestampSchema = z.union([z.string(), z.number(), z.date()]).transform((input, ctx) => {
  const millis = toEpochMillis(input);
  if (millis === undefined) {
    ctx.addIssue({ code: "custom", message: `"${String(input)}" is not a UTC timestamp (ISO-8601 with zone, or integer epoch milliseconds)`, params: { reason: "INVALID_TIMESTAMP" } });
    return z.NEVER;
  }
  return millis;
});

/** The acceptance rule of `timestampSchema`, exported for the fast path (src/contract/fast-parse.ts). */
export function toEpochMillis(input: string | number | Date): number | undefined {
  if (input instanceof Date) return Number.isNaN(input.getTime()) ? undefined : input.getTime();
  if (typeof input === "number") return Number.isSafeInteger(input) ? input : undefined;
  if (!ISO_WITH_ZONE.test(input)) return undefined;
  const millis = Date.parse(input);
  return Number.isNaN(millis) ? undefined : millis;
}

/** The JSON form written by this project: ISO-8601, UTC, millisecond precision. */
export function formatTimestamp(millis: number): string {
  return new Date(millis).toISOString();
}
