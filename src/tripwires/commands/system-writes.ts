import type { DestructiveFinding } from "./command-analysis.ts";
import { joinWords, optionValue, parseOptions } from "./command-words.ts";
import { homeEntry, resolvePath, type PathContext } from "./path-resolution.ts";
import type { ShellRedirect, ShellWord } from "./parsed-shell.ts";

/**
 * Writes that overwrite the machine's own files: system directories, system logs, the keys that
 * grant a login, and the shell start-up files of a home. Shared by redirects and by the commands
 * that write a file named in their arguments (tee, cp, mv, install, ln, rsync, dd, sed -i, sponge,
 * truncate, find -fprint/-fls), so "which file must not be written" lives in one place.
 */

/** System directories; /usr/local is where locally built software is installed by convention. */
const SYSTEM_FILES =
  /^\/(?:etc|boot|bin|sbin|lib|lib32|lib64|libx32|System|private\/etc|usr(?!\/local(?:\/|$)))(?:\/|$)/;
const SYSTEM_LOGS = /^\/var\/log\/./;
const LOGIN_KEYS = new Set([".ssh/authorized_keys", ".ssh/authorized_keys2"]);
const SHELL_PROFILES = new Set([
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zprofile",
  ".zshenv",
  ".zlogin",
  ".cshrc",
  ".tcshrc",
  ".kshrc",
]);
const FIND_OUTPUT_ACTIONS = new Set(["-fprint", "-fprint0", "-fprintf", "-fls"]);

/**
 * What writing one file would hit, or undefined. `truncates`: the write replaces the contents.
 * Also judges file_write events and agents' file-writing tools (Write, Edit).
 */
export function judgeWrite(
  raw: string,
  truncates: boolean,
  context: PathContext,
): { ruleId: DestructiveFinding["ruleId"]; path: string; what: string } | undefined {
  const path = resolvePath(raw, context);
  if (path === undefined) return undefined;
  if (SYSTEM_FILES.test(path)) return { ruleId: "fs-write-system-file", path, what: "system file" };
  if (truncates && SYSTEM_LOGS.test(path)) return { ruleId: "fs-write-system-file", path, what: "system log" };
  const inHome = homeEntry(path, context);
  if (inHome !== undefined && LOGIN_KEYS.has(inHome.rest))
    return { ruleId: "fs-write-system-file", path, what: "login key list" };
  if (inHome !== undefined && SHELL_PROFILES.has(inHome.rest))
    return { ruleId: "fs-write-shell-profile", path, what: "shell start-up file" };
  return undefined;
}

function finding(
  target: ShellWord,
  truncates: boolean,
  writer: string,
  command: string,
  context: PathContext,
): DestructiveFinding[] {
  if (target.dynamic) return [];
  const verdict = judgeWrite(target.text, truncates, context);
  return verdict === undefined
    ? []
    : [
        {
          ruleId: verdict.ruleId,
          command,
          path: verdict.path,
          detail: `${writer} writes ${verdict.what} ${verdict.path}`,
        },
      ];
}

/** `> file`, `>> file`, `&> file`, `>| file` (not `2>&1`, not `< file`). */
export function redirectWriteFindings(
  redirects: readonly ShellRedirect[],
  command: string,
  context: PathContext,
): DestructiveFinding[] {
  return redirects.flatMap((redirect) => {
    if (!redirect.operator.includes(">") || /^\d+$|^-$/.test(redirect.target.text)) return [];
    return finding(
      redirect.target,
      !redirect.operator.includes(">>"),
      `redirect ${redirect.operator}`,
      command,
      context,
    );
  });
}

export function fileWriteFindings(
  name: string,
  args: readonly ShellWord[],
  words: readonly ShellWord[],
  context: PathContext,
): DestructiveFinding[] {
  const command = joinWords(words);
  const write = (target: ShellWord, truncates: boolean): DestructiveFinding[] =>
    finding(target, truncates, name, command, context);
  switch (name) {
    case "tee": {
      const options = parseOptions(args, "", ["output-error"]);
      const appends = options.shortFlags.has("a") || options.longFlags.has("append");
      return options.positionals.flatMap((target) => write(target, !appends));
    }
    case "cp":
    case "install":
    case "ln":
    case "mv": {
      const options = parseOptions(args, name === "install" ? "gmotS" : "tS", [
        "target-directory",
        "suffix",
        "backup",
        "owner",
        "group",
        "mode",
        "context",
      ]);
      const directory = optionValue(args, "t", "target-directory");
      const destinations =
        directory !== undefined ? [{ text: directory, dynamic: false }] : options.positionals.slice(-1);
      // mv also takes its sources away from where they were.
      const sources =
        name === "mv" ? (directory !== undefined ? options.positionals : options.positionals.slice(0, -1)) : [];
      return options.positionals.length < (directory !== undefined ? 1 : 2)
        ? []
        : [...destinations, ...sources].flatMap((target) => write(target, true));
    }
    case "rsync": {
      // The last operand is the destination; `host:path` and `rsync://` are another machine's.
      const operands = parseOptions(args, "efT", [
        "rsh",
        "rsync-path",
        "exclude",
        "include",
        "filter",
        "temp-dir",
      ]).positionals;
      const destination = operands.at(-1);
      return operands.length < 2 || destination === undefined || /^[^/]*:/.test(destination.text)
        ? []
        : write(destination, true);
    }
    case "dd": {
      const output = args.find((arg) => arg.text.startsWith("of="));
      const notrunc = args.some((arg) => /^conv=.*notrunc/.test(arg.text));
      return output === undefined ? [] : write({ text: output.text.slice(3), dynamic: output.dynamic }, !notrunc);
    }
    case "truncate":
      return parseOptions(args, "sr", ["size", "reference"]).positionals.flatMap((target) => write(target, true));
    case "sponge":
      return parseOptions(args).positionals.flatMap((target) => write(target, !args.some((arg) => arg.text === "-a")));
    case "sed": {
      const inPlace = args.some((arg) => /^-[a-zA-Z]*i/.test(arg.text) || arg.text.startsWith("--in-place"));
      if (!inPlace) return [];
      const options = parseOptions(args, "ef", ["expression", "file"]);
      const scriptGiven =
        options.shortFlags.has("e") ||
        options.shortFlags.has("f") ||
        options.longFlags.has("expression") ||
        options.longFlags.has("file");
      return (scriptGiven ? options.positionals : options.positionals.slice(1)).flatMap((target) =>
        write(target, true),
      );
    }
    case "find":
      return args.flatMap((arg, index) => {
        const target = args[index + 1];
        return FIND_OUTPUT_ACTIONS.has(arg.text) && target !== undefined ? write(target, true) : [];
      });
    default:
      return [];
  }
}
