import type { Node } from "web-tree-sitter";
import type { ShellWord } from "./parsed-shell.ts";

/** The text of one word as the shell resolves it: quotes removed, escapes applied, `$HOME` and `$IFS` expanded. */

export const HOME_MARKER = "~";
/** Field separator produced by an unquoted `$IFS`; split out after the word is assembled. */
export const FIELD_BREAK = "\u0000";

export interface Resolved {
  text: string;
  dynamic: boolean;
}

export function splitFields(word: Resolved): ShellWord[] {
  if (!word.text.includes(FIELD_BREAK)) return [{ text: word.text, dynamic: word.dynamic }];
  return word.text
    .split(FIELD_BREAK)
    .filter((field) => field !== "")
    .map((text) => ({ text, dynamic: word.dynamic }));
}

export function resolveVariable(node: Node, quoted: boolean): Resolved {
  const name = node.namedChildren.find((child) => child.type === "variable_name")?.text;
  const isPlain = node.type === "simple_expansion" || node.namedChildCount === 1;
  if (isPlain && name === "HOME") return { text: HOME_MARKER, dynamic: false };
  // Unquoted $IFS is field splitting: `rm${IFS}-rf${IFS}/` is `rm -rf /`.
  if (isPlain && name === "IFS") return { text: quoted ? " " : FIELD_BREAK, dynamic: false };
  return { text: node.text, dynamic: true };
}

export function unescapeUnquoted(text: string): string {
  return text.replace(/\\(.)/gs, "$1");
}

export function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, "$1");
}

export function unescapeAnsiC(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)/g, (_match, escape: string) => {
    if (escape.startsWith("x")) return String.fromCharCode(parseInt(escape.slice(1), 16));
    if (/^[0-7]+$/.test(escape)) return String.fromCharCode(parseInt(escape, 8));
    const named: Record<string, string> = {
      n: "\n",
      t: "\t",
      r: "\r",
      a: "\u0007",
      b: "\b",
      e: "\u001b",
      f: "\f",
      v: "\v",
    };
    return named[escape] ?? escape;
  });
}
