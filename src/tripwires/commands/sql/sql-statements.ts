/**
 * A small SQL lexer: enough to split a script into statements at top-level semicolons and to read
 * a statement's leading keywords, honouring quotes ('…' with '' escapes, "…", `…`), dollar quotes
 * ($$…$$, $tag$…$tag$) and comments (-- …, /* … *\/). It never looks inside any of those, so text
 * in a string or comment can neither end a statement nor look like a keyword.
 */

/** The statements of a script, trimmed, empty ones dropped. */
export function splitSqlStatements(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let index = 0;
  while (index < sql.length) {
    const skipped = skipQuotedOrComment(sql, index);
    if (skipped > index) {
      index = skipped;
      continue;
    }
    if (sql[index] === ";") {
      statements.push(sql.slice(start, index));
      start = index + 1;
    }
    index++;
  }
  statements.push(sql.slice(start));
  return statements.map((statement) => statement.trim()).filter((statement) => statement !== "");
}

/** The first `count` words of a statement, upper-cased, after leading whitespace and comments. */
export function leadingKeywords(statement: string, count: number): string[] {
  const words: string[] = [];
  let index = 0;
  while (index < statement.length && words.length < count) {
    const skipped = skipQuotedOrComment(statement, index);
    if (skipped > index) {
      // A quoted identifier or string ends the keywords: `DROP TABLE "x"` has two.
      if (!/^(--|\/\*)/.test(statement.slice(index, index + 2))) break;
      index = skipped;
      continue;
    }
    WORD.lastIndex = index;
    const word = WORD.exec(statement);
    if (word !== null) {
      words.push(word[0].toUpperCase());
      index += word[0].length;
    } else if (/\s/.test(statement[index] ?? "")) {
      index++;
    } else {
      break;
    }
  }
  return words;
}

// Sticky patterns match at lastIndex without slicing the text (a slice per `$` would be quadratic).
const WORD = /[A-Za-z_]+/y;
const DOLLAR_TAG = /\$[A-Za-z_]*\$/y;

/** Where the quoted text or comment starting at `index` ends (exclusive), or `index` if none starts there. */
function skipQuotedOrComment(sql: string, index: number): number {
  const char = sql[index];
  const next = sql[index + 1];
  if (char === "-" && next === "-") {
    const end = sql.indexOf("\n", index);
    return end === -1 ? sql.length : end + 1;
  }
  if (char === "/" && next === "*") {
    const end = sql.indexOf("*/", index + 2);
    return end === -1 ? sql.length : end + 2;
  }
  if (char === "'" || char === '"' || char === "`") {
    let cursor = index + 1;
    while (cursor < sql.length) {
      if (sql[cursor] === char) {
        if (sql[cursor + 1] === char)
          cursor += 2; // doubled quote: an escaped quote character
        else return cursor + 1;
      } else {
        cursor++;
      }
    }
    return sql.length;
  }
  if (char === "$") {
    DOLLAR_TAG.lastIndex = index;
    const tag = DOLLAR_TAG.exec(sql);
    if (tag === null) return index;
    const end = sql.indexOf(tag[0], index + tag[0].length);
    return end === -1 ? sql.length : end + tag[0].length;
  }
  return index;
}
