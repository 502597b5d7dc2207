import type { ShellWord } from "./parsed-shell.ts";

/** Whether a command changes state: commands that only read, and the read-only forms of a few others. */

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

export function isReadOnly(name: string, args: readonly ShellWord[]): boolean {
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

export function isListingBranch(subcommand: string, args: readonly ShellWord[]): boolean {
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
