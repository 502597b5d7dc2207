/**
 * What is parsed at all. Beyond these the grammar's time grows too fast (pipes: quadratic; nested
 * substitutions) or the tree walk too deep, so the line is reported unparsed instead of parsed.
 */
export const SHELL_BOUNDS = { maxBytes: 16 * 1024, maxNesting: 64, maxPipes: 128 } as const;

/**
 * One pass over the characters: byte length, the deepest bracket nesting and the count of pipes.
 * Single-quoted text and escaped characters are skipped; brackets inside double quotes or
 * here-documents are counted, which can only make an odd line unparsed, never a deep one parsed.
 */
export function exceededBound(source: string): string | undefined {
  const bytes = Buffer.byteLength(source, "utf8");
  if (bytes > SHELL_BOUNDS.maxBytes)
    return `the command is ${bytes} bytes, over the ${SHELL_BOUNDS.maxBytes}-byte bound`;
  let depth = 0;
  let deepest = 0;
  let pipes = 0;
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    if (char === "\\") {
      i++;
    } else if (char === "'") {
      const end = source.indexOf("'", i + 1);
      i = end === -1 ? source.length : end;
    } else if (char === "(" || char === "{" || char === "[" || char === "`") {
      deepest = Math.max(deepest, ++depth);
    } else if (char === ")" || char === "}" || char === "]") {
      depth = Math.max(0, depth - 1);
    } else if (char === "|" && source[i + 1] !== "|" && source[i - 1] !== "|") {
      pipes++;
    }
  }
  if (deepest > SHELL_BOUNDS.maxNesting)
    return `the command nests ${deepest} brackets deep, over the bound of ${SHELL_BOUNDS.maxNesting}`;
  if (pipes > SHELL_BOUNDS.maxPipes)
    return `the command has ${pipes} pipes, over the bound of ${SHELL_BOUNDS.maxPipes}`;
  return undefined;
}
