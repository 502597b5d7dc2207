/**
 * A record's identity is its canonical JSON (RFC 8785), which exists only for I-JSON (RFC 7493
 * §2.1): a string or key holding a lone UTF-16 surrogate has none, and UTF-8 (Avro, the topics)
 * cannot carry it. Such a record is rejected as a whole, whichever field holds the surrogate.
 */

/** Deeper values are not walked here; the schema refuses what it cannot read at any depth. */
const MAX_WALK_DEPTH = 64;

/** In unicode mode a well-formed surrogate pair is one code point, so only a lone surrogate matches. */
const LONE_SURROGATE = /\p{Cs}/u;

/** The path of the first string or key that is not well-formed Unicode, or undefined. */
export function illFormedTextPath(value: unknown): string | undefined {
  const pending: { value: unknown; path: string; depth: number }[] = [{ value, path: "", depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: current, path, depth } = next;
    if (typeof current === "string") {
      if (LONE_SURROGATE.test(current)) return path;
      continue;
    }
    if (typeof current !== "object" || current === null || current instanceof Date || depth >= MAX_WALK_DEPTH) continue;
    if (Array.isArray(current)) {
      current.forEach((item, index) => pending.push({ value: item, path: `${path}.${index}`, depth: depth + 1 }));
      continue;
    }
    for (const [key, inner] of Object.entries(current)) {
      const at = path === "" ? key : `${path}.${key}`;
      if (LONE_SURROGATE.test(key)) return at;
      pending.push({ value: inner, path: at, depth: depth + 1 });
    }
  }
  return undefined;
}
