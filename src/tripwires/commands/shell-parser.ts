import { createRequire } from "node:module";
import { Language, Parser, type Node } from "web-tree-sitter";
import { checkDeadline, currentDeadline } from "./analysis-deadline.ts";
import type { ParsedShell, ShellRedirect, ShellWord, SimpleCommand } from "./parsed-shell.ts";
import { exceededBound } from "./shell-bounds.ts";
import {
  FIELD_BREAK,
  resolveVariable,
  splitFields,
  unescapeAnsiC,
  unescapeDoubleQuoted,
  unescapeUnquoted,
  type Resolved,
} from "./shell-word-text.ts";

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

export function parseShell(source: string): ParsedShell {
  const outOfBounds = exceededBound(source);
  if (outOfBounds !== undefined) return { commands: [], unparsed: outOfBounds };
  const at = currentDeadline();
  const tree =
    at === undefined
      ? parser.parse(source)
      : parser.parse(source, null, { progressCallback: () => performance.now() > at });
  if (tree === null) {
    // A cancelled parse resumes on the next call unless the parser is reset.
    parser.reset();
    checkDeadline();
    return { commands: [], unparsed: "the shell grammar returned no tree" };
  }
  try {
    const commands: SimpleCommand[] = [];
    collectCommands(tree.rootNode, commands, undefined);
    return { commands, unparsed: tree.rootNode.hasError ? "the shell grammar reports a syntax error" : undefined };
  } finally {
    substitutionCommands.clear();
    tree.delete();
  }
}

function collectCommands(
  node: Node,
  into: SimpleCommand[],
  pipedFrom: SimpleCommand | undefined,
): SimpleCommand | undefined {
  checkDeadline();
  switch (node.type) {
    case "command":
      return addCommand(node, undefined, into, pipedFrom);
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

function collectRedirected(
  node: Node,
  into: SimpleCommand[],
  pipedFrom: SimpleCommand | undefined,
): SimpleCommand | undefined {
  const body = node.childForFieldName("body");
  const redirects = new RedirectReader(into);
  for (const redirect of node.childrenForFieldName("redirect")) redirects.read(redirect);
  for (const child of node.namedChildren)
    if (child.type === "herestring_redirect" && !redirects.seen(child)) redirects.read(child);
  let command: SimpleCommand | undefined;
  if (body !== null && body.type === "command") {
    command = addCommand(body, redirects, into, pipedFrom);
  } else {
    // A redirected compound statement (`{ ...; } > /dev/sda`): the redirect still happens. With
    // no body at all (`2>/dev/null 2>/dev/null rm -rf /` parses so), the words after the
    // redirect targets are the command.
    const words =
      body === null && redirects.extraWords.length > 0 ? redirects.extraWords : [{ text: ":", dynamic: false }];
    const standalone: SimpleCommand = {
      words,
      redirects: redirects.redirects,
      stdinText: redirects.stdinText,
      pipedFrom,
    };
    if (redirects.redirects.length > 0 || redirects.extraWords.length > 0) into.push(standalone);
    command = body === null ? standalone : collectCommands(body, into, pipedFrom);
  }
  return redirects.collectContinuations(command);
}

/**
 * Reads the redirects of one simple command. The grammar attaches every word that follows a
 * redirect target to the redirect (`rm -rf 2>/dev/null /` gives the redirect the destinations
 * `/dev/null` and `/`), and a here-document's start line can carry arguments, more redirects, a
 * pipeline or an `&&` list. Bash reads redirects anywhere among the words: only the first
 * destination is the target, the rest are the command's arguments.
 */
class RedirectReader {
  readonly redirects: ShellRedirect[] = [];
  readonly extraWords: ShellWord[] = [];
  stdinText: string | undefined;
  private readonly read_: Node[] = [];
  /** A pipeline or list written after a here-document's start (`cat <<EOF | sh`, `bash <<EOF && x`). */
  private readonly continuations: { node: Node; piped: boolean }[] = [];

  private readonly into: SimpleCommand[];

  constructor(into: SimpleCommand[]) {
    this.into = into;
  }

  seen(node: Node): boolean {
    return this.read_.some((other) => other.id === node.id);
  }

  read(redirect: Node): void {
    this.read_.push(redirect);
    if (redirect.type === "file_redirect") {
      const operator = redirect.children.find((child) => !child.isNamed)?.type ?? ">";
      const [target, ...rest] = redirect.childrenForFieldName("destination");
      if (target !== undefined) {
        this.redirects.push({ operator, target: resolveWord(target) });
        collectSubstitutions(target, this.into);
      }
      this.addWords(rest);
    } else if (redirect.type === "heredoc_redirect") {
      for (const child of redirect.namedChildren) {
        if (child.type === "heredoc_body") {
          this.stdinText = child.text;
          // An unquoted delimiter expands `$(…)` in the body: those commands run. `<<'EOF'`,
          // `<<"EOF"` and `<<\EOF` keep the body literal.
          const start = redirect.namedChildren.find((part) => part.type === "heredoc_start")?.text ?? "";
          if (!/['"\\]/.test(start)) collectSubstitutions(child, this.into);
        } else if (child.type === "file_redirect" || child.type === "herestring_redirect") {
          this.read(child);
        } else if (child.type === "pipeline") {
          this.continuations.push({ node: child, piped: true });
        }
      }
      this.addWords(redirect.childrenForFieldName("argument"));
      const right = redirect.childForFieldName("right");
      if (right !== null) this.continuations.push({ node: right, piped: false });
    } else if (redirect.type === "herestring_redirect") {
      const word = redirect.lastNamedChild;
      if (word !== null) {
        this.stdinText = resolveWord(word).text;
        collectSubstitutions(word, this.into);
      }
    }
  }

  private addWords(nodes: readonly Node[]): void {
    for (const node of nodes) {
      this.extraWords.push(...splitFields(resolveWord(node)));
      collectSubstitutions(node, this.into);
    }
  }

  /** Runs the here-document continuations; returns the last command (the pipeline's tail when piped). */
  collectContinuations(command: SimpleCommand | undefined): SimpleCommand | undefined {
    let last = command;
    for (const { node, piped } of this.continuations) {
      if (piped) {
        let previous = command;
        for (const child of node.namedChildren) previous = collectCommands(child, this.into, previous);
        last = previous;
      } else {
        last = collectCommands(node, this.into, undefined) ?? last;
      }
    }
    return last;
  }
}

function addCommand(
  node: Node,
  outer: RedirectReader | undefined,
  into: SimpleCommand[],
  pipedFrom: SimpleCommand | undefined,
): SimpleCommand {
  const words: ShellWord[] = [];
  const redirects = new RedirectReader(into);
  for (const child of node.namedChildren) {
    if (child.type === "file_redirect" || child.type === "herestring_redirect") {
      redirects.read(child);
      continue;
    }
    if (child.type === "variable_assignment" || child.type === "comment") {
      collectSubstitutions(child, into);
      continue;
    }
    const target = child.type === "command_name" ? (child.firstNamedChild ?? child) : child;
    words.push(...splitFields(resolveWord(target)));
    // Commands nested in arguments (`$(...)`, `<(...)`) run too.
    collectSubstitutions(child, into);
  }
  words.push(...redirects.extraWords);
  const allRedirects = [...redirects.redirects];
  if (outer !== undefined) {
    words.push(...outer.extraWords);
    allRedirects.push(...outer.redirects);
  }
  const command: SimpleCommand = {
    words,
    redirects: allRedirects,
    stdinText: redirects.stdinText ?? outer?.stdinText,
    pipedFrom,
  };
  into.push(command);
  return command;
}

/**
 * The commands of each substitution node of the tree being walked, collected once: a word's value
 * and the commands it runs both read them, and reading them twice per level is exponential in
 * the nesting (`echo $(echo $(…))`). Cleared after each parse.
 */
const substitutionCommands = new Map<number, readonly SimpleCommand[]>();

function commandsOfSubstitution(node: Node): readonly SimpleCommand[] {
  const known = substitutionCommands.get(node.id);
  if (known !== undefined) return known;
  const commands: SimpleCommand[] = [];
  for (const inner of node.namedChildren) collectCommands(inner, commands, undefined);
  substitutionCommands.set(node.id, commands);
  return commands;
}

/** Collects the commands of the outermost `$(…)`, backtick and `<(…)` substitutions inside a node. */
function collectSubstitutions(node: Node, into: SimpleCommand[]): void {
  if (node.type === "command_substitution" || node.type === "process_substitution") {
    // Inner substitutions are reached by collecting their outer one.
    into.push(...commandsOfSubstitution(node));
    return;
  }
  for (const child of node.namedChildren) collectSubstitutions(child, into);
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

/** `$(echo rm)` and `$(printf rm)` have a static value; any other substitution does not. */
function foldCommandSubstitution(node: Node, quoted: boolean): Resolved {
  const inner = commandsOfSubstitution(node);
  const only = inner.length === 1 ? inner[0] : undefined;
  const name = only?.words[0];
  if (
    only !== undefined &&
    name !== undefined &&
    !name.dynamic &&
    (name.text === "echo" || name.text === "printf") &&
    only.words.every((word) => !word.dynamic)
  ) {
    const args = only.words.slice(1).filter((word) => !(name.text === "echo" && /^-[neE]+$/.test(word.text)));
    const value = args.map((word) => word.text).join(" ");
    return { text: quoted ? value : value.split(/\s+/).join(FIELD_BREAK), dynamic: false };
  }
  return { text: node.text, dynamic: true };
}
