import canonicalize from "canonicalize";

/**
 * RFC 8785 (JCS) canonical JSON: the byte form used for fact identity (a redelivery is a no-op
 * only when its canonical form is identical), result keys and digests.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("value has no canonical JSON form");
  return text;
}
