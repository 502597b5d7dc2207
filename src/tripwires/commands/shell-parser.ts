import { createRequire } from "node:module";
import { Language, Parser, type Node } from "web-tree-sitter";

/**
 * A real bash grammar (tree-sitter-bash, compiled to WASM) turned into a flat list of the simple
 * commands a command line would run, with each word resolved the way the shell would resolve it
 * where that can be known statically (quotes removed, escapes applied, `$HOME` and `$IFS` expanded,
 * `$(echo x)` folded), and marked `dynamic` where it cannot.
 *
 * Why tree-sitter and not sh-syntax: sh-syntax 0.7's JSON AST drops every node's concrete type
 * (a `Cmd` is only `{Pos, End}`), and it instantiates a fresh Go WASM runtime per call (~4 ms,
 * async). web-tree-sitter loads once (the top-level await below) and then parses synchronously in
 * ~0.1 ms, so the detectors stay synchronous and pure over the parsed result.
 */
const require = createRequire(import.meta.url);
await Parser.init();
const bashLanguage = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
const parser = new Parser();
parser.setLanguage(bashLanguage);

export interface ShellWord {
  /** The word after quote removal and the expansions we can resolve. */
  readonly text: string;
  /** True when part of the word is an expansion whose value cannot be known statically. */
  readonly dynamic: boolean;
}

export interface ShellRedirect {
  readonly operator: string;
  readonly target: ShellWord;
}

export interface SimpleCommand {
  /** argv as the shell would build it: field splitting of `$IFS` already applied. */
  readonly words: readonly ShellWord[];
  readonly redirects: readonly ShellRedirect[];
  /** Body of a here-document or here-string fed to this command, when static. */
  readonly stdinText: string | undefined;
  /** The command writing into this one's stdin when it sits in a pipeline. */
  readonly pipedFrom: SimpleCommand | undefined;
}

export interface ParsedShell {
  readonly commands: readonly SimpleCommand[];
  /** The grammar reported an error somewhere; commands are still extracted best-effort. */
  readonly hasSyntaxError: boolean;
}

const HOME_MARKER = "~";
/** Field separator produced by an unquoted `$IFS`; split out after the word is assembled. */
const FIELD_BREAK = "\u0000";

interface Resolved {
  text: string;
  dynamic: boolean;
}

export function parseShell(source: string): ParsedShell {
  const tree = parser.parse(source);
  if (tree === null) return { commands: [], hasSyntaxError: true };
  try {
    const commands: SimpleCommand[] = [];
    collectCommands(tree.rootNode, commands, undefined);
    return { commands, hasSyntaxError: tree.rootNode.hasError };
  } finally {
    tree.delete();
  }
}

function collectCommands(node: Node, into: SimpleCommand[], pipedFrom: SimpleCommand | undefined): SimpleCommand | undefined {
  switch (node.type) {
    case "command":
      return addCommand(node, [], undefined, into, pipedFrom);
    case "redirected_statement":
      return collectRedirected(node, into, pipedFrom);
    case "pipeline": {
      let previous: SimpleCommand | undefined = pipedFrom;
      for (const child of node.namedChildren) previous = collectCommands(child, into, previous);
      return previous;
    }
    default: {
      let last: SimpleCommand | undefined;
      for (const child of node.namedChildren) last = collectCommands(child, into, undefined) ?? last;
      return last;
    }
  }
}

function collectRedirected(node: Node, into: SimpleCommand[], pipedFrom: SimpleCommand | undefined): SimpleCommand | undefined {
  const body = node.childForFieldName("body");
  const redirects: ShellRedirect[] = [];
  let stdinText: string | undefined;
  for (const redirect of node.childrenForFieldName("redirect")) {
    if (redirect.type === "file_redirect") {
      const operator = redirect.children.find((child) => !child.isNamed)?.type ?? ">";
      const destination = redirect.childForFieldName("destination") ?? redirect.lastNamedChild;
      if (destination !== null) redirects.push({ operator, target: resolveWord(destination) });
    } else if (redirect.type === "heredoc_redirect") {
      const body = redirect.namedChildren.find((child) => child.type === "heredoc_body");
      stdinText = body?.text;
    } else if (redirect.type === "herestring_redirect") {
      const word = redirect.lastNamedChild;
      if (word !== null) stdinText = resolveWord(word).text;
    }
  }
  if (body !== null && body.type === "command") return addCommand(body, redirects, stdinText, into, pipedFrom);
  // A redirected compound statement (`{ ...; } > /dev/sda`): the redirect still happens.
  if (redirects.length > 0) into.push({ words: [{ text: ":", dynamic: false }], redirects, stdinText, pipedFrom });
  return body === null ? undefined : collectCommands(body, into, pipedFrom);
}

function addCommand(node: Node, redirects: ShellRedirect[], stdinText: string | undefined, into: SimpleCommand[], pipedFrom: SimpleCommand | undefined): SimpleCommand {
  const words: ShellWord[] = [];
  let herestring: string | undefined;
  for (const child of node.namedChildren) {
    if (child.type === "command_name" || (child.isNamed && child.type !== "variable_assignment" && child.type !== "file_redirect" && child.type !== "herestring_redirect" && child.type !== "comment")) {
      const target = child.type === "command_name" ? child.firstNamedChild ?? child : child;
      words.push(...splitFields(resolveWord(target)));
    } else if (child.type === "herestring_redirect") {
      const word = child.lastNamedChild;
      if (word !== null) herestring = resolveWord(word).text;
    } else if (child.type === "file_redirect") {
      const destination = child.childForFieldName("destination") ?? child.lastNamedChild;
      const operator = child.children.find((part) => !part.isNamed)?.type ?? ">";
      if (destination !== null) redirects.push({ operator, target: resolveWord(destination) });
    }
    // Commands nested in arguments (`$(...)`, `<(...)`) run too.
    for (const nested of child.descendantsOfType(["command_substitution", "process_substitution"])) {
      for (const inner of nested.namedChildren) collectCommands(inner, into, undefined);
    }
  }
  const command: SimpleCommand = { words, redirects, stdinText: herestring ?? stdinText, pipedFrom };
  into.push(command);
  return command;
}

function splitFields(word: Resolved): ShellWord[] {
  if (!word.text.includes(FIELD_BREAK)) return [{ text: word.text, dynamic: word.dynamic }];
  return word.text
    .split(FIELD_BREAK)
    .filter((field) => field !== "")
    .map((text) => ({ text, dynamic: word.dynamic }));
}

function resolveWord(node: Node, quoted = false): Resolved {
  switch (node.type) {
    case "word":
    case "number":
      return { text: unescapeUnquoted(node.text), dynamic: false };
    case "raw_string":
      return { text: node.text.slice(1, -1), dynamic: false };
    case "ansi_c_string":
      return { text: unescapeAnsiC(node.text.slice(2, -1)), dynamic: false };
    case "string_content":
      return { text: unescapeDoubleQuoted(node.text), dynamic: false };
    case "string":
    case "translated_string":
      return joinParts(node.namedChildren, true);
    case "concatenation":
      return joinParts(node.namedChildren, quoted);
    case "simple_expansion":
    case "expansion":
      return resolveVariable(node, quoted);
    case "command_substitution":
      return foldCommandSubstitution(node, quoted);
    default:
      return { text: node.text, dynamic: true };
  }
}

function joinParts(parts: readonly Node[], quoted: boolean): Resolved {
  let text = "";
  let dynamic = false;
  for (const part of parts) {
    const resolved = resolveWord(part, quoted);
    text += resolved.text;
    dynamic ||= resolved.dynamic;
  }
  return { text, dynamic };
}

function resolveVariable(node: Node, quoted: boolean): Resolved {
  const name = node.namedChildren.find((child) => child.type === "variable_name")?.text;
  const isPlain = node.type === "simple_expansion" || node.namedChildCount === 1;
  if (isPlain && name === "HOME") return { text: HOME_MARKER, dynamic: false };
  // Unquoted $IFS is field splitting: `rm${IFS}-rf${IFS}/` is `rm -rf /`.
  if (isPlain && name === "IFS") return { text: quoted ? " " : FIELD_BREAK, dynamic: false };
  return { text: node.text, dynamic: true };
}

/** `$(echo rm)` and `$(printf rm)` have a static value; any other substitution does not. */
function foldCommandSubstitution(node: Node, quoted: boolean): Resolved {
  const inner: SimpleCommand[] = [];
  for (const child of node.namedChildren) collectCommands(child, inner, undefined);
  const only = inner.length === 1 ? inner[0] : undefined;
  const name = only?.words[0];
  if (only !== undefined && name !== undefined && !name.dynamic && (name.text === "echo" || name.text === "printf") && only.words.every((word) => !word.dynamic)) {
    const args = only.words.slice(1).filter((word) => !(name.text === "echo" && /^-[neE]+$/.test(word.text)));
    const value = args.map((word) => word.text).join(" ");
    return { text: quoted ? value : value.split(/\s+/).join(FIELD_BREAK), dynamic: false };
  }
  return { text: node.text, dynamic: true };
}

function unescapeUnquoted(text: string): string {
  return text.replace(/\\(.)/gs, "$1");
}

function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, "$1");
}

function unescapeAnsiC(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)/g, (_match, escape: string) => {
    if (escape.startsWith("x")) return String.fromCharCode(parseInt(escape.slice(1), 16));
    if (/^[0-7]+$/.test(escape)) return String.fromCharCode(parseInt(escape, 8));
    const named: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\u0007", b: "\b", e: "\u001b", f: "\f", v: "\v" };
    return named[escape] ?? escape;
  });
}
