import { isCredentialPath } from "./credential-paths.ts";
import { isUrlRemote } from "./git-commands.ts";
import { resolvePath, type PathContext } from "./path-resolution.ts";
import type { ShellWord } from "./parsed-shell.ts";

/**
 * Which commands read credential files and which send data off the machine: the two halves of
 * the credential-exfiltration sequence rule.
 */

/** Commands whose file arguments are read (and, for copy/archive tools, duplicated). */
const READERS = new Set([
  "cat",
  "less",
  "more",
  "head",
  "tail",
  "cp",
  "scp",
  "rsync",
  "base64",
  "xxd",
  "od",
  "hexdump",
  "strings",
  "grep",
  "egrep",
  "rg",
  "source",
  ".",
  "tar",
  "zip",
  "gpg",
  "openssl",
  "awk",
  "sed",
  "jq",
  "bat",
  "tac",
  "nl",
  "vi",
  "vim",
  "nano",
  "view",
  "sort",
  "uniq",
  "diff",
  "tee",
  "python",
  "python3",
  "node",
]);
const NETWORK_CLIENTS = new Set([
  "curl",
  "wget",
  "nc",
  "ncat",
  "netcat",
  "socat",
  "ssh",
  "scp",
  "sftp",
  "rsync",
  "ftp",
  "telnet",
  "http",
  "https",
  "xh",
]);
const LOCAL_HOST = /^(([a-z]+:\/\/)?(\[?::1\]?|localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0))([:/]|$)/i;

export function credentialReadsOf(name: string, args: readonly ShellWord[], context: PathContext): string[] {
  const reads: string[] = [];
  for (const [index, arg] of args.entries()) {
    if (arg.dynamic) continue;
    const previous = args[index - 1]?.text;
    // `curl -T file` / `--upload-file file` uploads the file.
    if (
      (name === "curl" || name === "wget") &&
      (previous === "-T" || previous === "--upload-file" || previous === "--post-file" || previous === "--body-file")
    ) {
      const uploaded = resolvePath(arg.text, context) ?? arg.text;
      if (isCredentialPath(uploaded)) reads.push(uploaded);
      continue;
    }
    // `curl -d @file`, `-F k=@file`, `--data-binary @file` read the file to upload it.
    const atFile = /(?:^|=)@([^;]+)/.exec(arg.text)?.[1];
    const candidate =
      atFile ?? (READERS.has(name) && !arg.text.startsWith("-") ? arg.text.replace(/^[^@\s]+@[^:]+:/, "") : undefined);
    if (candidate === undefined || candidate === "") continue;
    const path = resolvePath(candidate, context) ?? candidate;
    if (isCredentialPath(path)) reads.push(path);
  }
  return reads;
}

export function egressTargetsOf(name: string, args: readonly ShellWord[]): string[] {
  if (!NETWORK_CLIENTS.has(name)) return [];
  const hosts = args.filter((arg) => !arg.dynamic && !arg.text.startsWith("-")).map((arg) => arg.text);
  let target: string | undefined;
  if (name === "scp" || name === "rsync") target = hosts.find((host) => isUrlRemote(host) || /^[^/\s]+:/.test(host));
  else if (name === "ssh" || name === "sftp" || name === "telnet" || name === "ftp") target = hosts[0];
  else if (name === "nc" || name === "ncat" || name === "netcat") target = hosts[0];
  else
    target = hosts.find((host) => /^[a-z]+:\/\//i.test(host) || /^[\w.-]+\.[a-z]{2,}(\/|:|$)/i.test(host)) ?? hosts[0];
  if (target === undefined) return name === "scp" || name === "rsync" ? [] : [name];
  return isLocalTarget(target) ? [] : [target];
}

export function isLocalTarget(target: string): boolean {
  return LOCAL_HOST.test(target.replace(/^[^@/]+@/, ""));
}
