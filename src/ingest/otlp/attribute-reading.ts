import type { AttributeValue, Attributes } from "./otlp-records.ts";

/**
 * Typed reads of OTLP attributes. Hosts differ in how they type a value (Claude Code exports
 * most numbers as strings), so a number may arrive as an int, a double or a decimal string; a
 * value of any other shape reads as absent. Nothing is coerced beyond that.
 */
export interface AttributeScope {
  readonly record: Attributes;
  readonly resource: Attributes;
}

function lookup(scope: AttributeScope, keys: readonly string[]): AttributeValue | undefined {
  for (const key of keys) {
    const value = scope.record.get(key) ?? scope.resource.get(key);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** The first non-empty string among `keys`. */
export function readString(scope: AttributeScope, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = scope.record.get(key) ?? scope.resource.get(key);
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}

/** The first whole number ≥ 0 among `keys` (an int, or a decimal string of digits). */
export function readCount(scope: AttributeScope, keys: readonly string[]): number | undefined {
  for (const key of keys) {
    const value = scope.record.get(key) ?? scope.resource.get(key);
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
    if (typeof value === "string" && /^\d{1,15}$/.test(value)) return Number(value);
  }
  return undefined;
}

/** A finite number ≥ 0: an int, a double or a decimal string. */
export function readNonNegative(scope: AttributeScope, keys: readonly string[]): number | undefined {
  for (const key of keys) {
    const value = scope.record.get(key) ?? scope.resource.get(key);
    const number =
      typeof value === "number"
        ? value
        : typeof value === "string" && /^\d+(\.\d+)?$/.test(value)
          ? Number(value)
          : undefined;
    if (number !== undefined && Number.isFinite(number) && number >= 0) return number;
  }
  return undefined;
}

/** The value under `key` equals `expected` (same JSON value). */
export function attributeEquals(scope: AttributeScope, key: string, expected: AttributeValue): boolean {
  const value = lookup(scope, [key]);
  return value !== undefined && JSON.stringify(value) === JSON.stringify(expected);
}

/** An RFC 3339 instant from Unix nanoseconds, to the millisecond (the contract's resolution). */
export function instantFromNanos(nanos: bigint): string | undefined {
  const ms = Number(nanos / 1_000_000n);
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
