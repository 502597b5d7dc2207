/**
 * A compact, deterministic 53-bit identity for (tool, canonical input) and for observation
 * digests (cyrb53). Rings keep numbers, not the inputs themselves, so per-run memory does not grow
 * with argument size. A collision would merge two actions; at 2^53 that is negligible for alerting.
 */
export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

export function actionIdentity(tool: string, input: string | undefined): number {
  return hash53(`${tool}\u0000${input ?? ""}`);
}
