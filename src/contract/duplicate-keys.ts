/**
 * JSON.parse keeps the last of two equal keys in one object and says nothing, so `{"amount_minor":
 * 5, "amount_minor": 500}` would be read as 500. Which one the sender meant is unknowable, so the
 * record is rejected (DUPLICATE_FIELD). Given text that JSON.parse has already accepted (so it is
 * well-formed) and what it parsed to, this answers the first key repeated within one object,
 * decoded, or undefined.
 *
 * Every line is checked, so the common case must be cheap: JSON.parse keeps one key per distinct
 * name, so the text has a repeated key exactly when it holds more key tokens than the parsed
 * value has keys. Counting the tokens needs no container stack and no key strings (string to
 * string by indexOf); only a line that fails the count is scanned to name the key.
 */
export function firstDuplicateKey(text: string, parsed: unknown): string | undefined {
  return keyTokens(text) === keysOf(parsed) ? undefined : scanForDuplicateKey(text);
}

/** Object keys in JSON text: string tokens followed (after whitespace) by a colon. */
function keyTokens(text: string): number {
  let count = 0;
  let start = text.indexOf('"');
  while (start !== -1) {
    let end = text.indexOf('"', start + 1);
    while (end !== -1 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
    if (end === -1) break;
    let next = end + 1;
    while (isWhitespace(text.charCodeAt(next))) next += 1;
    if (text.charCodeAt(next) === COLON) count += 1;
    start = text.indexOf('"', next);
  }
  return count;
}

/** A quote preceded by an odd number of backslashes is part of the string. */
function isEscaped(text: string, quote: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
  return backslashes % 2 === 1;
}

/** Keys of every object in a parsed JSON value. */
function keysOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) count += keysOf(item);
    return count;
  }
  for (const key in value) count += 1 + keysOf((value as Record<string, unknown>)[key]);
  return count;
}

/** The first key repeated within one object: one pass, a list of keys per open object. */
function scanForDuplicateKey(text: string): string | undefined {
  // One entry per open container: the keys seen so far for an object, undefined for an array.
  const open: (string[] | undefined)[] = [];
  const length = text.length;
  let index = 0;
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      let end = index + 1;
      let escaped = false;
      for (;;) {
        const inner = text.charCodeAt(end);
        if (inner === BACKSLASH) {
          escaped = true;
          end += 2;
        } else if (inner === QUOTE) break;
        else end += 1;
      }
      let next = end + 1;
      while (isWhitespace(text.charCodeAt(next))) next += 1;
      const keys = open[open.length - 1];
      if (keys !== undefined && text.charCodeAt(next) === COLON) {
        const key = escaped ? (JSON.parse(text.slice(index, end + 1)) as string) : text.slice(index + 1, end);
        if (keys.includes(key)) return key;
        keys.push(key);
      }
      index = end + 1;
      continue;
    }
    if (code === OPEN_BRACE) open.push([]);
    else if (code === OPEN_BRACKET) open.push(undefined);
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) open.pop();
    index += 1;
  }
  return undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}
