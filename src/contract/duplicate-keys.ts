/**
 * JSON.parse keeps the last of two equal keys in one object and says nothing, so `{"amount_minor":
 * 5, "amount_minor": 500}` would be read as 500. Which one the sender meant is unknowable, so the
 * record is rejected (DUPLICATE_FIELD). This scans text that JSON.parse has already accepted (so it
 * is well-formed) and answers the first key repeated within one object, decoded, or undefined.
 * One pass over the characters, no allocation for objects without escaped keys beyond a small list.
 */
export function firstDuplicateKey(text: string): string | undefined {
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
