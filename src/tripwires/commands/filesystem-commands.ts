import type { DestructiveFinding } from "./command-analysis.ts";
import { joinWords, parseOptions } from "./command-words.ts";
import { judgeDelete } from "./delete-targets.ts";
import { isSystemPath, resolvePath, type PathContext } from "./path-resolution.ts";
import type { ShellRedirect, ShellWord } from "./shell-parser.ts";

/** rm, find -delete, shred, mkfs, dd, chmod/chown and writes into block devices. */

const BLOCK_DEVICE = /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|md\d|dm-\d|mapper\/|loop\d|root|sr\d)/;
const FIND_FILTERS = new Set(["-name", "-iname", "-path", "-ipath", "-wholename", "-regex", "-iregex", "-newer", "-mtime", "-mmin", "-atime", "-ctime", "-size", "-empty", "-user", "-group", "-perm", "-links", "-inum", "-samefile"]);

export function analyseFilesystemCommand(name: string, args: readonly ShellWord[], words: readonly ShellWord[], context: PathContext): DestructiveFinding[] {
  const command = joinWords(words);
  switch (name) {
    case "rm":
      return analyseRm(args, command, context);
    case "find":
      return analyseFind(args, command, context);
    case "shred":
      return [{ ruleId: "fs-shred", command, path: args.find((arg) => !arg.text.startsWith("-"))?.text, detail: "shred destroys file contents beyond recovery" }];
    case "mkswap":
    case "mke2fs":
    case "wipefs":
      return [{ ruleId: "disk-format", command, path: args.at(-1)?.text, detail: `${name} formats or wipes a device` }];
    case "dd":
      return analyseDd(args, command, context);
    case "chmod":
    case "chown":
    case "chgrp":
      return analysePermissions(name, args, command, context);
    case "xargs":
      return []; // unwrapped by the caller, which knows what feeds stdin
    default:
      if (name.startsWith("mkfs")) return [{ ruleId: "disk-format", command, path: args.at(-1)?.text, detail: `${name} creates a filesystem, erasing the device` }];
      return [];
  }
}

export function isRecursiveRm(args: readonly ShellWord[]): boolean {
  const options = parseOptions(args);
  return options.shortFlags.has("r") || options.shortFlags.has("R") || options.longFlags.has("recursive");
}

function analyseRm(args: readonly ShellWord[], command: string, context: PathContext): DestructiveFinding[] {
  const options = parseOptions(args);
  const recursive = isRecursiveRm(args);
  return rmTargetsFindings(options.positionals, recursive, command, context);
}

export function rmTargetsFindings(targets: readonly ShellWord[], recursive: boolean, command: string, context: PathContext): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  for (const target of targets) {
    const verdict = judgeDelete(target, recursive, false, context);
    if (verdict !== undefined) findings.push({ ruleId: verdict.ruleId, command, path: verdict.path, detail: `${recursive ? "recursive " : ""}delete of ${verdict.path}` });
  }
  return findings;
}

/** `find ROOTS... EXPRESSION`: roots are the leading arguments that are not expression tokens. */
export function findRoots(args: readonly ShellWord[]): ShellWord[] {
  const roots: ShellWord[] = [];
  for (const arg of args) {
    if (!arg.dynamic && (arg.text.startsWith("-") || arg.text === "(" || arg.text === "!")) break;
    roots.push(arg);
  }
  return roots.length === 0 ? [{ text: ".", dynamic: false }] : roots;
}

function analyseFind(args: readonly ShellWord[], command: string, context: PathContext): DestructiveFinding[] {
  const texts = args.map((arg) => arg.text);
  const execIndex = texts.findIndex((text) => text === "-exec" || text === "-execdir" || text === "-ok" || text === "-okdir");
  const execRm = execIndex !== -1 && (texts[execIndex + 1] ?? "").replace(/^.*\//, "") === "rm";
  if (!texts.includes("-delete") && !execRm) return [];
  const filtered = texts.some((text) => FIND_FILTERS.has(text));
  const findings: DestructiveFinding[] = [];
  for (const root of findRoots(args)) {
    const verdict = judgeDelete(root, true, filtered, context);
    if (verdict !== undefined) findings.push({ ruleId: verdict.ruleId, command, path: verdict.path, detail: `find deletes under ${verdict.path}` });
  }
  return findings;
}

function analyseDd(args: readonly ShellWord[], command: string, context: PathContext): DestructiveFinding[] {
  const output = args.find((arg) => arg.text.startsWith("of="))?.text.slice(3);
  if (output === undefined) return [];
  const path = resolvePath(output, context) ?? output;
  return BLOCK_DEVICE.test(path) ? [{ ruleId: "disk-raw-write", command, path, detail: `dd writes raw blocks to ${path}` }] : [];
}

function analysePermissions(name: string, args: readonly ShellWord[], command: string, context: PathContext): DestructiveFinding[] {
  const options = parseOptions(args);
  if (!options.shortFlags.has("R") && !options.longFlags.has("recursive")) return [];
  const [first, ...targets] = options.positionals;
  if (first === undefined) return [];
  if (name === "chmod" && !isWorldWritableMode(first.text)) return [];
  return targets
    .filter((target) => !target.dynamic && isSystemPath(target.text, context))
    .map((target) => ({ ruleId: "perm-recursive-system" as const, command, path: resolvePath(target.text, context) ?? target.text, detail: `recursive ${name} ${first.text} on ${target.text}` }));
}

export function analyseRedirects(redirects: readonly ShellRedirect[], command: string, context: PathContext): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  for (const redirect of redirects) {
    if (!redirect.operator.includes(">") || redirect.target.dynamic) continue;
    const path = resolvePath(redirect.target.text, context) ?? redirect.target.text;
    if (BLOCK_DEVICE.test(path)) findings.push({ ruleId: "disk-raw-write", command, path, detail: `redirect writes into block device ${path}` });
  }
  return findings;
}

/** A redirect that writes a real file changes state (unlike `> /dev/null` or `2>&1`). */
export function redirectsWriteFiles(redirects: readonly ShellRedirect[]): boolean {
  return redirects.some((redirect) => redirect.operator.includes(">") && !redirect.operator.includes("&") && !/^\/dev\/(null|stdout|stderr|tty)$/.test(redirect.target.text) && !/^\d$/.test(redirect.target.text));
}

/** Octal mode whose "other" digit has the write bit, or a symbolic clause granting w to o/a/all. */
export function isWorldWritableMode(mode: string): boolean {
  if (/^[0-7]{3,4}$/.test(mode)) return (Number(mode.at(-1)) & 2) === 2;
  return mode.split(",").some((clause) => {
    const match = /^([ugoa]*)[+=]([rwxXst]*)$/.exec(clause);
    if (match === null) return false;
    const who = match[1] ?? "";
    return (match[2] ?? "").includes("w") && (who === "" || who.includes("o") || who.includes("a"));
  });
}
