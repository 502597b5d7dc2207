import {
  EMPTY_ANALYSIS,
  mergeAnalyses,
  unparsedBecause,
  type CommandAnalysis,
  type DestructiveFinding,
} from "./command-analysis.ts";
import { commandFamilyFindings, lineFamilyAnalysis } from "./command-families.ts";
import { unwrapCommand } from "./command-wrappers.ts";
import { commandBaseName, joinWords, parseOptions } from "./command-words.ts";
import { credentialReadsOf, egressTargetsOf } from "./data-flow-commands.ts";
import { expandFanOut } from "./fan-out.ts";
import { analyseFilesystemCommand, analyseRedirects, redirectsWriteFiles } from "./filesystem-commands.ts";
import { analyseFind, type FindExec } from "./find-commands.ts";
import { analyseGit, READ_ONLY_GIT } from "./git-commands.ts";
import { analyseInfraCommand } from "./infra-commands.ts";
import { nestedScript } from "./nested-scripts.ts";
import type { ShellWord, SimpleCommand } from "./parsed-shell.ts";
import { resolvePath, type PathContext } from "./path-resolution.ts";
import { checkDeadline } from "./analysis-deadline.ts";
import { isListingBranch, isReadOnly } from "./read-only-commands.ts";
import { parseShell } from "./shell-parser.ts";
import { sqlCommandFindings } from "./sql/sql-commands.ts";
import { xargsRmFindings } from "./xargs-deletes.ts";

/**
 * Analyses one command line: parse with the bash grammar, walk every simple command it would run
 * (pipelines, lists, subshells, substitutions), unwrap wrappers (sudo, env, xargs, ...), recurse
 * into `bash -c '…'`/`eval`, track `cd` within the line, and ask each tool's analyser.
 */
export interface ShellAnalysisOptions {
  readonly protectedBranches: readonly string[];
}

const MAX_NESTING = 4;
const RESERVED_WORDS = new Set([
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "case",
  "esac",
  "for",
  "select",
  "while",
  "until",
  "do",
  "done",
  "function",
  "{",
  "}",
  "!",
  "[[",
  "]]",
]);

const TOO_NESTED = `scripts nest more than ${MAX_NESTING} levels deep (bash -c, eval, find -exec)`;

export function analyseShellCommand(
  source: string,
  context: PathContext,
  options: ShellAnalysisOptions,
  depth = 0,
): CommandAnalysis {
  if (depth > MAX_NESTING) return { ...EMPTY_ANALYSIS, changesState: true, ...unparsedBecause(TOO_NESTED) };
  const parsed = parseShell(source);
  let cwd = context.cwd;
  const parts: CommandAnalysis[] = [];
  for (const command of parsed.commands) {
    checkDeadline();
    const here: PathContext = { ...context, cwd };
    parts.push(analyseSimpleCommand(command, here, options, depth));
    // `cd / && rm -rf *`, `builtin cd /`: later commands in the line run in the new directory.
    const unwrapped = unwrapCommand(command.words).words;
    if (commandBaseName(unwrapped[0]) === "cd") {
      const target = parseOptions(unwrapped.slice(1)).positionals[0];
      if (target !== undefined && !target.dynamic) cwd = resolvePath(target.text, here) ?? cwd;
    }
  }
  const runNested = (script: string, at: PathContext): CommandAnalysis =>
    analyseShellCommand(script, at, options, depth + 1);
  parts.push(lineFamilyAnalysis(source, parsed, context, runNested));
  const merged = mergeAnalyses(parts);
  return parsed.unparsed === undefined
    ? merged
    : {
        ...merged,
        changesState: merged.changesState || parsed.commands.length === 0,
        ...unparsedBecause(parsed.unparsed),
      };
}

function analyseSimpleCommand(
  command: SimpleCommand,
  context: PathContext,
  options: ShellAnalysisOptions,
  depth: number,
): CommandAnalysis {
  const unwrapped = unwrapCommand(command.words);
  if (unwrapped.tooDeep === true)
    return {
      ...EMPTY_ANALYSIS,
      changesState: true,
      ...unparsedBecause("wrapper commands (sudo, env, ...) nest too deep to unwrap"),
    };
  const here: PathContext =
    unwrapped.chdir === undefined ? context : { ...context, cwd: resolvePath(unwrapped.chdir, context) ?? context.cwd };
  const label = joinWords(command.words);
  const redirectFindings = analyseRedirects(command.redirects, label, here);
  const writesFiles = redirectsWriteFiles(command.redirects);
  if (unwrapped.fanOut !== undefined && unwrapped.words.length > 0) {
    // xargs / parallel: analyse the commands the runner builds from its items.
    const expansion = expandFanOut(unwrapped.words, unwrapped.fanOut, command.pipedFrom);
    const parts = expansion.invocations.map((words) =>
      analyseWords(
        words,
        { words, redirects: [], stdinText: undefined, pipedFrom: undefined },
        here,
        options,
        depth + 1,
        false,
      ),
    );
    if (expansion.unknownAppended !== undefined) {
      // With `xargs -a FILE` the items come from the file: what the pipe carries is not among them.
      const fed = unwrapped.fanOut.itemsFromFile ? { ...command, pipedFrom: undefined } : command;
      parts.push(analyseWords(expansion.unknownAppended, fed, here, options, depth, true));
    }
    for (const script of expansion.scripts) parts.push(analyseShellCommand(script, here, options, depth + 1));
    const merged = mergeAnalyses(parts);
    return {
      ...merged,
      findings: [...redirectFindings, ...merged.findings],
      changesState: merged.changesState || writesFiles,
    };
  }
  const analysis = analyseWords(unwrapped.words, command, here, options, depth, unwrapped.argumentsFromStdin);
  return {
    ...analysis,
    findings: [...redirectFindings, ...analysis.findings],
    changesState: analysis.changesState || writesFiles,
  };
}

/** One command's argv, wrappers already removed. `argumentsFromStdin`: more operands arrive from the pipe (`xargs`). */
function analyseWords(
  words: readonly ShellWord[],
  command: SimpleCommand,
  here: PathContext,
  options: ShellAnalysisOptions,
  depth: number,
  argumentsFromStdin: boolean,
): CommandAnalysis {
  const name = commandBaseName(words[0]);
  const args = words.slice(1);
  // An unresolvable command name (`$(curl x) -rf /`, `$CMD`): we cannot know what runs. Documented limit.
  if (name === undefined) return { ...EMPTY_ANALYSIS, changesState: words.length > 0 };
  if (depth > MAX_NESTING) return { ...EMPTY_ANALYSIS, changesState: true, ...unparsedBecause(TOO_NESTED) };
  // `sudo if true; then rm -rf /; fi` parses as commands named `then`, `fi`: whatever the shell makes of it, we cannot say.
  if (RESERVED_WORDS.has(name))
    return {
      ...EMPTY_ANALYSIS,
      changesState: true,
      ...unparsedBecause(`the shell word \`${name}\` stands where a command should be`),
    };

  const nested = nestedScript(name, args, command);
  if (nested !== undefined) return analyseShellCommand(nested, here, options, depth + 1);

  const runNested = (script: string, at: PathContext): CommandAnalysis =>
    analyseShellCommand(script, at, options, depth + 1);
  const findings = commandFamilyFindings(name, args, command, here, runNested);
  const egressTargets = egressTargetsOf(name, args);
  let changesState = !isReadOnly(name, args);
  if (name === "git") {
    const git = analyseGit(args, words, options.protectedBranches);
    findings.push(...git.findings);
    if (git.egressTarget !== undefined) egressTargets.push(git.egressTarget);
    changesState = !(
      git.subcommand !== undefined &&
      (READ_ONLY_GIT.has(git.subcommand) || isListingBranch(git.subcommand, args))
    );
  } else if (argumentsFromStdin && name === "rm") {
    findings.push(...xargsRmFindings(args, words, command.pipedFrom, here));
  } else if (name === "find") {
    findings.push(...findFindings(args, words, here, options, depth));
  } else {
    findings.push(...analyseFilesystemCommand(name, args, words, here));
    findings.push(...analyseInfraCommand(name, args, words));
    findings.push(...sqlCommandFindings(name, args, words, command));
  }
  return {
    findings,
    credentialReads: credentialReadsOf(name, args, here),
    egressTargets,
    changesState,
    unparsed: false,
  };
}

/**
 * `find` deletes with `-delete` or with an exec'd command that removes the entry it is given.
 * Exec'd commands are also analysed as commands (`-exec rm -rf / \;` is `rm -rf /`), except for
 * the dynamic-target warning: their only unknown input is the found entry, judged through the roots.
 */
function findFindings(
  args: readonly ShellWord[],
  words: readonly ShellWord[],
  here: PathContext,
  options: ShellAnalysisOptions,
  depth: number,
): DestructiveFinding[] {
  const execFindings: DestructiveFinding[] = [];
  const execDeletes = (exec: FindExec): boolean => {
    const inner = analyseWords(
      unwrapCommand(exec.words).words,
      { words: exec.words, redirects: [], stdinText: undefined, pipedFrom: undefined },
      here,
      options,
      depth + 1,
      false,
    );
    execFindings.push(...inner.findings.filter((finding) => finding.ruleId !== "fs-delete-dynamic-target"));
    return removesGivenEntry(exec.words, depth);
  };
  return [...analyseFind(args, joinWords(words), here, execDeletes), ...execFindings];
}

/** `rm … {}`, `sudo rm`, `busybox rm`, `sh -c 'rm -rf "$1"' _ {}`: the exec'd command removes the entry find passes it. */
function removesGivenEntry(words: readonly ShellWord[], depth: number): boolean {
  const unwrapped = unwrapCommand(words).words;
  const name = commandBaseName(unwrapped[0]);
  if (name === "rm" || name === "unlink" || name === "shred") return true;
  if (name === undefined || depth > MAX_NESTING) return false;
  const script = nestedScript(name, unwrapped.slice(1), {
    words: unwrapped,
    redirects: [],
    stdinText: undefined,
    pipedFrom: undefined,
  });
  if (script === undefined) return false;
  return parseShell(script).commands.some((inner) => {
    const innerWords = unwrapCommand(inner.words).words;
    return (
      commandBaseName(innerWords[0]) === "rm" &&
      innerWords.slice(1).some((word) => word.dynamic || word.text.includes("{}"))
    );
  });
}
