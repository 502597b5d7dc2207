import type { DestructiveFinding } from "./command-analysis.ts";
import { joinWords, parseOptions } from "./command-words.ts";
import { judgeDelete } from "./delete-targets.ts";
import { isSystemPath, resolvePath, type PathContext } from "./path-resolution.ts";
import type { ShellRedirect, ShellWord } from "./parsed-shell.ts";
import { redirectWriteFindings } from "./system-writes.ts";

/** rm, shred, mkfs, dd, chmod/chown and writes into block devices (find is find-commands.ts). */

const BLOCK_DEVICE =
  /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|md\d|dm-\d|mapper\/|loop\d|root|sr\d)/;

export function analyseFilesystemCommand(
  name: string,
  args: readonly ShellWord[],
  words: readonly ShellWord[],
  context: PathContext,
): DestructiveFinding[] {
  const command = joinWords(words);
  switch (name) {
    case "rm":
      return analyseRm(args, command, context);
    case "unlink":
      // One file, as `rm FILE`; `--help` and `--version` remove nothing.
      return args.some((arg) => arg.text.startsWith("--")) ? [] : analyseRm(args, command, context);
    case "find":
      return []; // needs the exec'd commands analysed: see shell-analysis.ts
    case "shred":
      return [
        {
          ruleId: "fs-shred",
          command,
          path: args.find((arg) => !arg.text.startsWith("-"))?.text,
          detail: "shred destroys file contents beyond recovery",
        },
      ];
    case "mkswap":
    case "mke2fs":
    case "wipefs":
      return formatFindings(name, args, command, context);
    case "dd":
      return analyseDd(args, command, context);
    case "chmod":
    case "chown":
    case "chgrp":
      return analysePermissions(name, args, command, context);
    case "xargs":
      return []; // unwrapped by the caller, which knows what feeds stdin
    default:
      return name.startsWith("mkfs") ? formatFindings(name, args, command, context) : [];
  }
}

/**
 * Formatting erases a device; a filesystem made inside a regular file (`mkfs.ext4 disk.img`,
 * `mkswap /swapfile`) erases only that file. So an argument that is a device path (`/dev/…`),
 * or one we cannot resolve statically, is the target that alerts.
 */
function formatFindings(
  name: string,
  args: readonly ShellWord[],
  command: string,
  context: PathContext,
): DestructiveFinding[] {
  const resolved = (arg: ShellWord): string => (arg.dynamic ? arg.text : (resolvePath(arg.text, context) ?? arg.text));
  const devices = args.filter((arg) => arg.dynamic || (!arg.text.startsWith("-") && resolved(arg).startsWith("/dev/")));
  return devices.map((device) => ({
    ruleId: "disk-format",
    command,
    path: resolved(device),
    detail: `${name} formats or wipes a device`,
  }));
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

export function rmTargetsFindings(
  targets: readonly ShellWord[],
  recursive: boolean,
  command: string,
  context: PathContext,
): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  for (const target of targets) {
    const verdict = judgeDelete(target, recursive, false, context);
    if (verdict !== undefined)
      findings.push({
        ruleId: verdict.ruleId,
        command,
        path: verdict.path,
        detail: `${recursive ? "recursive " : ""}delete of ${verdict.path}`,
      });
  }
  return findings;
}

function analyseDd(args: readonly ShellWord[], command: string, context: PathContext): DestructiveFinding[] {
  const output = args.find((arg) => arg.text.startsWith("of="))?.text.slice(3);
  if (output === undefined) return [];
  const path = resolvePath(output, context) ?? output;
  return BLOCK_DEVICE.test(path)
    ? [{ ruleId: "disk-raw-write", command, path, detail: `dd writes raw blocks to ${path}` }]
    : [];
}

function analysePermissions(
  name: string,
  args: readonly ShellWord[],
  command: string,
  context: PathContext,
): DestructiveFinding[] {
  const options = parseOptions(args);
  if (!options.shortFlags.has("R") && !options.longFlags.has("recursive")) return [];
  const [first, ...targets] = options.positionals;
  if (first === undefined) return [];
  if (name === "chmod" && !isWorldWritableMode(first.text)) return [];
  return targets
    .filter((target) => !target.dynamic && isSystemPath(target.text, context))
    .map((target) => ({
      ruleId: "perm-recursive-system" as const,
      command,
      path: resolvePath(target.text, context) ?? target.text,
      detail: `recursive ${name} ${first.text} on ${target.text}`,
    }));
}

export function analyseRedirects(
  redirects: readonly ShellRedirect[],
  command: string,
  context: PathContext,
): DestructiveFinding[] {
  const findings: DestructiveFinding[] = [];
  for (const redirect of redirects) {
    if (!redirect.operator.includes(">") || redirect.target.dynamic) continue;
    const path = resolvePath(redirect.target.text, context) ?? redirect.target.text;
    if (BLOCK_DEVICE.test(path))
      findings.push({ ruleId: "disk-raw-write", command, path, detail: `redirect writes into block device ${path}` });
  }
  return [...findings, ...redirectWriteFindings(redirects, command, context)];
}

/** A redirect that writes a real file changes state (unlike `> /dev/null` or `2>&1`). */
export function redirectsWriteFiles(redirects: readonly ShellRedirect[]): boolean {
  return redirects.some(
    (redirect) =>
      redirect.operator.includes(">") &&
      !redirect.operator.includes("&") &&
      !/^\/dev\/(null|stdout|stderr|tty)$/.test(redirect.target.text) &&
      !/^\d$/.test(redirect.target.text),
  );
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
