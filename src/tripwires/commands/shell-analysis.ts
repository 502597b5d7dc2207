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
import { judgeDelete } from "./delete-targets.ts";
import { expandFanOut, UNKNOWN_ITEM } from "./fan-out.ts";
import {
  analyseFilesystemCommand,
  analyseFind,
  analyseRedirects,
  findFilters,
  findRoots,
  isRecursiveRm,
  redirectsWriteFiles,
  rmTargetsFindings,
  type FindExec,
} from "./filesystem-commands.ts";
import { analyseGit, READ_ONLY_GIT } from "./git-commands.ts";
import { analyseInfraCommand } from "./infra-commands.ts";
import { resolvePath, type PathContext } from "./path-resolution.ts";
import { checkDeadline } from "./analysis-deadline.ts";
import { parseShell, type ShellWord, type SimpleCommand } from "./shell-parser.ts";
import { sqlCommandFindings } from "./sql/sql-commands.ts";

/**
 * Analyses one command line: parse with the bash grammar, walk every simple command it would run
 * (pipelines, lists, subshells, substitutions), unwrap wrappers (sudo, env, xargs, ...), recurse
 * into `bash -c '…'`/`eval`, track `cd` within the line, and ask each tool's analyser.
 */
export interface ShellAnalysisOptions {
  readonly protectedBranches: readonly string[];
}

const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "fish"]);
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
const READ_ONLY_COMMANDS = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "ag",
  "wc",
  "pwd",
  "echo",
  "printf",
  "which",
  "type",
  "stat",
  "file",
  "tree",
  "du",
  "df",
  "env",
  "printenv",
  "less",
  "more",
  "sort",
  "uniq",
  "cut",
  "tr",
  "awk",
  "jq",
  "yq",
  "diff",
  "cmp",
  "test",
  "[",
  "true",
  "false",
  "whoami",
  "id",
  "uname",
  "date",
  "hostname",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "cd",
  "ps",
  "sleep",
  "nproc",
  "free",
  "uptime",
  "man",
  "column",
  "nl",
  "tac",
  "rev",
  "od",
  "xxd",
  "hexdump",
  "strings",
  "base64",
  ":",
  "find",
  "sed",
  "bat",
  "fd",
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
    if (expansion.unknownAppended !== undefined)
      parts.push(analyseWords(expansion.unknownAppended, command, here, options, depth, true));
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

/** `bash -c 'script'`, `eval "script"`, `echo 'script' | sh`: a script given as data. */
function nestedScript(name: string, args: readonly ShellWord[], command: SimpleCommand): string | undefined {
  if (name === "eval") return args.every((arg) => !arg.dynamic) ? args.map((arg) => arg.text).join(" ") : undefined;
  if (!SHELLS.has(name)) return undefined;
  const commandFlag = args.findIndex(
    (arg) => !arg.dynamic && /^-[a-z]*c[a-z]*$/i.test(arg.text) && !arg.text.startsWith("--"),
  );
  if (commandFlag !== -1) {
    const script = args.slice(commandFlag + 1).find((arg) => !arg.text.startsWith("-") || arg.dynamic);
    // A script with an unknown fan-out item in it is still read: the item parses as an unknown variable.
    return script === undefined || (script.dynamic && !script.text.includes(UNKNOWN_ITEM)) ? undefined : script.text;
  }
  const scriptOnStdin = args.every((arg) => arg.text.startsWith("-"));
  if (scriptOnStdin && command.stdinText !== undefined) return command.stdinText;
  const producer = command.pipedFrom;
  const producerName = commandBaseName(producer?.words[0]);
  if (
    scriptOnStdin &&
    producer !== undefined &&
    (producerName === "echo" || producerName === "printf") &&
    producer.words.every((word) => !word.dynamic)
  ) {
    return producer.words
      .slice(1)
      .map((word) => word.text)
      .join(" ");
  }
  // `cat <<EOF | sh`: the here-document is the script.
  if (
    scriptOnStdin &&
    producer !== undefined &&
    producerName === "cat" &&
    producer.words.length === 1 &&
    producer.stdinText !== undefined
  )
    return producer.stdinText;
  return undefined;
}

/** `… | xargs rm -rf`: what feeds xargs decides what gets deleted. */
function xargsRmFindings(
  args: readonly ShellWord[],
  words: readonly ShellWord[],
  producer: SimpleCommand | undefined,
  context: PathContext,
): DestructiveFinding[] {
  const recursive = isRecursiveRm(args);
  const label = joinWords(words);
  const findings = rmTargetsFindings(parseOptions(args).positionals, recursive, label, context);
  const producerName = commandBaseName(producer?.words[0]);
  const producerArgs = producer?.words.slice(1) ?? [];
  let judged: { target: ShellWord; filtered: boolean }[] | undefined;
  if (producerName === "find") {
    // Same judgement as `find … -delete`: find walks its roots recursively.
    return [
      ...findings,
      ...findRoots(producerArgs).flatMap((root) => {
        const filters = findFilters(producerArgs, root.text);
        const targets = [judgeDelete(root, true, filters.restricted, context)];
        if (filters.selectsGitDir && !root.dynamic)
          targets.push(
            judgeDelete({ text: `${root.text.replace(/\/+$/, "")}/.git`, dynamic: false }, true, false, context),
          );
        return targets.flatMap((verdict) =>
          verdict === undefined
            ? []
            : [
                {
                  ruleId: verdict.ruleId,
                  command: label,
                  path: verdict.path,
                  detail: `xargs deletes what find lists under ${verdict.path}`,
                },
              ],
        );
      }),
    ];
  } else if (producerName === "echo" || producerName === "printf") {
    judged = producerArgs
      .filter((arg) => !arg.text.startsWith("-"))
      .flatMap((arg) =>
        arg.text
          .split(/\\n|\s+/)
          .filter((text) => text !== "")
          .map((text) => ({ target: { text, dynamic: arg.dynamic }, filtered: false })),
      );
  } else if (producerName === "ls") {
    const listed = parseOptions(producerArgs).positionals;
    judged = (listed.length === 0 ? [{ text: ".", dynamic: false }] : listed).map((directory) => ({
      target: { text: `${directory.text}/*`, dynamic: directory.dynamic },
      filtered: false,
    }));
  }
  if (judged === undefined) {
    return recursive
      ? [
          ...findings,
          {
            ruleId: "fs-delete-dynamic-target",
            command: label,
            path: undefined,
            detail: "recursive delete of targets read from stdin",
          },
        ]
      : findings;
  }
  for (const { target, filtered } of judged) {
    const verdict = judgeDelete(target, recursive, filtered, context);
    if (verdict !== undefined)
      findings.push({
        ruleId: verdict.ruleId,
        command: label,
        path: verdict.path,
        detail: `xargs ${recursive ? "recursive " : ""}delete of ${verdict.path}`,
      });
  }
  return findings;
}

function isReadOnly(name: string, args: readonly ShellWord[]): boolean {
  if (!READ_ONLY_COMMANDS.has(name))
    return (
      ["kubectl", "terraform", "helm"].includes(name) &&
      ["get", "describe", "logs", "plan", "show", "validate", "list", "status"].includes(
        args.find((arg) => !arg.text.startsWith("-"))?.text ?? "",
      )
    );
  const texts = args.map((arg) => arg.text);
  if (name === "find")
    return !texts.some((text) =>
      ["-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls"].includes(text),
    );
  if (name === "sed") return !texts.some((text) => /^-[a-zA-Z]*i/.test(text) || text.startsWith("--in-place"));
  return true;
}

function isListingBranch(subcommand: string, args: readonly ShellWord[]): boolean {
  if (subcommand !== "branch" && subcommand !== "tag" && subcommand !== "stash") return false;
  const rest = args.slice(args.findIndex((arg) => arg.text === subcommand) + 1).map((arg) => arg.text);
  if (subcommand === "stash") return rest[0] === "list" || rest[0] === "show";
  return (
    rest.length === 0 ||
    rest.every((text) =>
      ["-a", "-r", "-l", "--list", "-v", "-vv", "--all", "--remotes", "--show-current"].includes(text),
    )
  );
}
