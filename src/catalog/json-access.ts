/** Defensive readers for a document that may not have passed the schema: they never throw. */

export type JsonRecord = Readonly<Record<string, unknown>>;

export function asRecord(value: unknown): JsonRecord | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

export function asArray(value: unknown): readonly unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** An exact x.y.z version: no ranges, wildcards, prefixes or pre-release tags. */
export const EXACT_VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/** Characters that make a version a range or wildcard (SemVer inference the seed forbids). */
export const VERSION_RANGE = /[\^~<>=*|xX]|\s-\s|\|\|/;
