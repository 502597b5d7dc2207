import { EMPTY_ANALYSIS, type CommandAnalysis, type DestructiveFinding } from "./command-analysis.ts";
import { unwrapCommand } from "./command-wrappers.ts";
import { commandBaseName, joinWords } from "./command-words.ts";
import { dynamicCommand, indirectExecutionFindings, type RunScript } from "./indirect-execution.ts";
import { interpreterFindings } from "./interpreter-commands.ts";
import type { PathContext } from "./path-resolution.ts";
import type { ParsedShell, ShellWord, SimpleCommand } from "./parsed-shell.ts";
import { fileWriteFindings } from "./system-writes.ts";

/**
 * The command families the shell analyser asks about every command (indirect execution,
 * interpreter one-liners, writes into system files) and every line (fork bombs, command words
 * that are variables). Registered in shell-analysis.ts by one call each.
 */
export function commandFamilyFindings(
  name: string,
  args: readonly ShellWord[],
  command: SimpleCommand,
  here: PathContext,
  run: RunScript,
): DestructiveFinding[] {
  return [
    ...indirectExecutionFindings(name, args, command, here, run),
    ...interpreterFindings(name, args, command, here, run),
    ...fileWriteFindings(name, args, command.words, here),
  ];
}

/** `NAME=value` with a static value: `x=rm`, `x='rm -rf'`, `x="rm"`. */
const STATIC_ASSIGNMENT =
  /(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=(?:'([^']*)'|"([^"$`\\]*)"|([^\s;&|$`'"()<>\\]*))(?=[\s;&|)]|$)/g;
/** Function definitions examined per line: a bound for hostile input, far above any real line. */
const MAX_FUNCTIONS = 64;
const VARIABLE_WORD = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/;
/** `name() { … }` or `function name { … }` with a body without nested braces. */
// The name starts after a delimiter, so each word is scanned once (no quadratic backtracking on a long word).
const FUNCTION_DEFINITION =
  /(?:\bfunction\s+([^\s(){}|&;<>]+)\s*(?:\(\s*\))?|(?<![^\s;&|(){}])([^\s(){}|&;<>'"]+)\s*\(\s*\))\s*\{([^{}]*)\}/g;

export function lineFamilyAnalysis(
  source: string,
  parsed: ParsedShell,
  context: PathContext,
  run: RunScript,
): CommandAnalysis {
  const findings = [...forkBombFindings(source, parsed), ...variableCommandFindings(source, parsed, context, run)];
  return findings.length === 0 ? EMPTY_ANALYSIS : { ...EMPTY_ANALYSIS, findings };
}

/**
 * A function that starts itself in the background (`:(){ :|:& };:`, any name), called outside
 * its definition. The call is checked on the parsed commands, so the same text written as data
 * (`echo ':(){ :|:& };:'`) is no call.
 */
function forkBombFindings(source: string, parsed: ParsedShell): DestructiveFinding[] {
  if (!source.includes("&")) return [];
  const callsByName = new Map<string, number>();
  for (const command of parsed.commands) {
    const word = command.words[0];
    if (word !== undefined && !word.dynamic) callsByName.set(word.text, (callsByName.get(word.text) ?? 0) + 1);
  }
  let examined = 0;
  for (const match of source.matchAll(FUNCTION_DEFINITION)) {
    if (++examined > MAX_FUNCTIONS) break;
    const name = match[1] ?? match[2] ?? "";
    const body = match[3] ?? "";
    if (!/(^|[^&])&($|[^&])/.test(body)) continue;
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const callsInBody = [...body.matchAll(new RegExp(`(?:^|[\\s|&;])${escaped}(?=[\\s|&;]|$)`, "g"))].length;
    if (callsInBody > 0 && (callsByName.get(name) ?? 0) > callsInBody) {
      return [
        {
          ruleId: "resource-fork-bomb",
          command: match[0],
          path: undefined,
          detail: `function ${name} starts copies of itself in the background`,
        },
      ];
    }
  }
  return [];
}

/**
 * A command word that is a variable: set statically earlier in the line (`x=rm; $x -rf /`), it is
 * judged as the command it names; otherwise, or for any other substitution, what runs is unknown.
 */
function variableCommandFindings(
  source: string,
  parsed: ParsedShell,
  context: PathContext,
  run: RunScript,
): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  let assignments: Map<string, string> | undefined;
  for (const command of parsed.commands) {
    const words = unwrapCommand(command.words).words;
    const first = words[0];
    // Only an expansion in command position; other unresolved words are the grammar recovering from an error.
    if (first === undefined || commandBaseName(first) !== undefined || !/^[$`]/.test(first.text)) continue;
    const label = joinWords(command.words);
    const variable = VARIABLE_WORD.exec(first.text);
    const name = variable?.[1] ?? variable?.[2];
    assignments ??= staticAssignments(source);
    const value = name === undefined ? undefined : assignments.get(name);
    if (value === undefined) {
      findings.push(dynamicCommand(label, `the command word ${first.text.slice(0, 80)} is not known before it runs`));
      continue;
    }
    const script = [value, ...words.slice(1).map((word) => (word.dynamic ? word.text : quote(word.text)))].join(" ");
    findings.push(
      ...run(script, context).findings.map((finding) => ({
        ...finding,
        command: label,
        detail: `${first.text} is ${value}: ${finding.detail}`,
      })),
    );
  }
  return findings;
}

function staticAssignments(source: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const match of source.matchAll(STATIC_ASSIGNMENT))
    values.set(match[1] ?? "", match[2] ?? match[3] ?? match[4] ?? "");
  return values;
}

function quote(word: string): string {
  return /^[\w@%+=:,./~-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}
