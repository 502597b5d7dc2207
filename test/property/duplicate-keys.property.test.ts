import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { firstDuplicateKey } from "../../src/contract/duplicate-keys.ts";

/**
 * The duplicate-key check on random JSON text whose answer is known by construction: nested
 * objects and arrays, keys that are equal only once decoded (`"a"` and `"\u0061"`), `__proto__`,
 * string values that look like keys (`"x\":"`), escaped quotes and backslashes, random whitespace.
 * The answer is the first key, in text order, that repeats a key of its own object.
 */

interface Written {
  readonly text: string;
  /** The first repeated key (decoded) in text order, if any. */
  readonly duplicate: string | undefined;
}

/** Key spellings: [as written between the quotes, decoded]. */
const keySpellings: readonly (readonly [string, string])[] = [
  ["a", "a"],
  ["\\u0061", "a"],
  ["b", "b"],
  ["__proto__", "__proto__"],
  ['q\\"', 'q"'],
  ["back\\\\", "back\\"],
  ["é", "é"],
  ["\\u00e9", "é"],
];
const stringValues = ['"x"', '"y\\":"', '"a\\\\"', '"\\"b\\":1"', '"{\\"a\\":1,\\"a\\":2}"', '""'];
const space = fc.constantFrom("", " ", "\n", " \t ");

type Tree =
  | { readonly kind: "leaf"; readonly text: string }
  | { readonly kind: "array"; readonly items: readonly Tree[] }
  | { readonly kind: "object"; readonly entries: readonly (readonly [number, Tree])[] };

const { tree } = fc.letrec<{ tree: Tree }>((self) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc
      .oneof(fc.constantFrom(...stringValues), fc.constantFrom("1", "-2.5e3", "true", "null"))
      .map((text): Tree => ({ kind: "leaf", text })),
    fc.array(self("tree"), { maxLength: 3 }).map((items): Tree => ({ kind: "array", items })),
    fc
      .array(fc.tuple(fc.nat({ max: keySpellings.length - 1 }), self("tree")), { maxLength: 4 })
      .map((entries): Tree => ({ kind: "object", entries })),
  ),
}));

function write(node: Tree, gaps: () => string): Written {
  if (node.kind === "leaf") return { text: node.text, duplicate: undefined };
  let duplicate: string | undefined;
  const parts: string[] = [];
  if (node.kind === "array") {
    for (const item of node.items) {
      const written = write(item, gaps);
      duplicate ??= written.duplicate;
      parts.push(written.text);
    }
    return { text: `[${gaps()}${parts.join(`${gaps()},${gaps()}`)}${gaps()}]`, duplicate };
  }
  const seen = new Set<string>();
  for (const [spelling, value] of node.entries) {
    const [raw, decoded] = keySpellings[spelling] as readonly [string, string];
    // The key comes before its value in the text, so a repeat here is found before one inside.
    if (seen.has(decoded)) duplicate ??= decoded;
    seen.add(decoded);
    const written = write(value, gaps);
    duplicate ??= written.duplicate;
    parts.push(`"${raw}"${gaps()}:${gaps()}${written.text}`);
  }
  return { text: `{${gaps()}${parts.join(`${gaps()},${gaps()}`)}${gaps()}}`, duplicate };
}

describe("firstDuplicateKey (property)", () => {
  it("answers the first key repeated within one object, decoded, on any JSON text", () => {
    let withDuplicate = 0;
    fc.assert(
      fc.property(tree, fc.array(space, { minLength: 1, maxLength: 8 }), (root, spaces) => {
        let turn = 0;
        const written = write(root, () => spaces[turn++ % spaces.length] as string);
        const parsed: unknown = JSON.parse(written.text);
        if (written.duplicate !== undefined) withDuplicate++;
        expect(firstDuplicateKey(written.text, parsed)).toBe(written.duplicate);
      }),
      { numRuns: 3_000 },
    );
    expect(withDuplicate).toBeGreaterThan(100);
  });
});
