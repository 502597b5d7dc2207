import type { CommandAnalysis, DestructiveFinding } from "./command-analysis.ts";
import { unwrapCommand } from "./command-wrappers.ts";
import { commandBaseName, joinWords } from "./command-words.ts";
import type { PathContext } from "./path-resolution.ts";
import type { ShellWord, SimpleCommand } from "./parsed-shell.ts";

/**
 * Code that runs without being written in the line: a script fetched from the network and piped
 * or substituted into a shell, a command sent over ssh, a shell started from a variable, code
 * decoded at run time. What can be read (an ssh command, a static base64 payload) is judged as a
 * command; what cannot is an alert of its own.
 */

/** Analyses a script as a command line in the given context (the shell analyser, one level deeper). */
export type RunScript = (script: string, context: PathContext) => CommandAnalysis;

const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "fish"]);
const SCRIPT_INTERPRETER = /^(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|php[0-9.]*)$/;
const FETCHERS = new Set(["curl", "wget", "fetch", "xh", "http", "https", "aria2c", "lwp-request"]);
/** Commands a fetched script may pass through on its way to the shell, unchanged in what it means. */
const PASS_THROUGH = new Set([
  "tee",
  "cat",
  "gunzip",
  "zcat",
  "gzip",
  "bunzip2",
  "bzcat",
  "xz",
  "unxz",
  "xzcat",
  "tr",
  "sed",
  "head",
  "tail",
  "dos2unix",
  "iconv",
  "base64",
]);
const DECODERS = new Set(["base64", "base32", "xxd", "openssl", "uudecode", "rev"]);
/** `$(curl …)`, `` `wget …` ``, `<(curl …)` inside a word: its value comes from the network. */
export const FETCH_SUBSTITUTION = /(?:\$\(|`|<\()\s*(?:sudo\s+)?(?:[\w./-]*\/)?(?:curl|wget|fetch|xh|https?|aria2c)\s/;
const DECODE_SUBSTITUTION = new RegExp(
  [
    "(?:\\$\\(|`|<\\()[^)`]*\\b(?:base64|base32)\\s+(?:-[a-zA-Z]*[dD]\\b|--decode)",
    "\\bxxd\\s+-r",
    "\\bopenssl\\s+(?:enc|base64)\\b[^)`]*-d\\b",
  ].join("|"),
);
/** A script operand naming the process's own stdin: `bash /dev/stdin`, `source /dev/stdin`. */
export function isStdinPath(text: string | undefined): boolean {
  return text === "/dev/stdin" || text === "/dev/fd/0" || text === "/proc/self/fd/0";
}

/** The whole word is one variable (`$X`, `${X}`, `$1`, `$@`): its value is the script. */
const WHOLE_VARIABLE = /^\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*|\{?[0-9@*]\}?)$/;
const SSH_OPTIONS_WITH_VALUE = "BbcDEeFIiJLlmOoPpQRSWw";
/** The remote side of ssh: nothing is known about its directories. */
const REMOTE_CONTEXT: PathContext = { cwd: undefined, workspaceRoot: undefined, home: undefined };

export function indirectExecutionFindings(
  name: string,
  args: readonly ShellWord[],
  command: SimpleCommand,
  here: PathContext,
  run: RunScript,
): DestructiveFinding[] {
  const label = joinWords(command.words);
  if (name === "ssh") return sshFindings(args, command, label, run);
  const runsCode =
    SHELLS.has(name) || SCRIPT_INTERPRETER.test(name) || name === "eval" || name === "source" || name === ".";
  if (!runsCode) return [];
  const sudo = commandBaseName(command.words[0]) === "sudo" ? " as root" : "";
  const fetched = args.find((arg) => arg.dynamic && FETCH_SUBSTITUTION.test(arg.text));
  if (fetched !== undefined) return [remote(label, `${name}${sudo} runs code fetched by ${fetched.text.slice(0, 80)}`)];
  const fromStdin = readsScriptFromStdin(name, args);
  // `bash <<< "$(curl …)"`, a here-document holding `$(wget -O- …)`: the download is the script.
  if (fromStdin && command.stdinText !== undefined && FETCH_SUBSTITUTION.test(command.stdinText))
    return [remote(label, `${name}${sudo} runs code fetched into its here-document or here-string`)];
  const source = fromStdin ? scriptSource(command.pipedFrom) : undefined;
  if (source?.kind === "network") return [remote(label, `${name}${sudo} runs a script piped from ${source.fetcher}`)];
  if (source?.kind === "decoded") {
    if (source.script === undefined) {
      return [dynamicCommand(label, `${name} runs code decoded at run time by ${source.decoder}`)];
    }
    const decoded = run(source.script, here).findings;
    return decoded.map((finding) => ({ ...finding, command: label, detail: `decoded script: ${finding.detail}` }));
  }
  const script = scriptArgument(name, args);
  if (script !== undefined && (WHOLE_VARIABLE.test(script.text) || DECODE_SUBSTITUTION.test(script.text))) {
    return [dynamicCommand(label, `${name} runs the script held in ${script.text.slice(0, 80)}`)];
  }
  return [];
}

function remote(command: string, detail: string): DestructiveFinding {
  return { ruleId: "exec-remote-script", command, path: undefined, detail };
}

export function dynamicCommand(command: string, detail: string): DestructiveFinding {
  return { ruleId: "exec-dynamic-command", command, path: undefined, detail };
}

/** `sh`, `bash -s -- args`, `sh -`, `python3 -`, `bash /dev/stdin`: the script is stdin. */
function readsScriptFromStdin(name: string, args: readonly ShellWord[]): boolean {
  if (name === "eval") return false;
  if (name === "source" || name === ".") return isStdinPath(args[0]?.text);
  for (const arg of args) {
    if (arg.dynamic) return false;
    if (arg.text === "-" || arg.text === "--" || isStdinPath(arg.text)) return true;
    if (/^-[a-zA-Z]*[ceEr]$/.test(arg.text) || arg.text === "--eval") return false; // code given inline
    if (SHELLS.has(name) && /^-[a-zA-Z]*s[a-zA-Z]*$/.test(arg.text)) return true;
    if (!arg.text.startsWith("-")) return false; // a script file
  }
  return true;
}

type ScriptSource =
  { kind: "network"; fetcher: string } | { kind: "decoded"; decoder: string; script: string | undefined };

/** Walks back the pipeline feeding a shell through pass-through filters to where the script comes from. */
function scriptSource(producer: SimpleCommand | undefined): ScriptSource | undefined {
  let current = producer;
  let decoder: { name: string; command: SimpleCommand } | undefined;
  for (let step = 0; step < 8 && current !== undefined; step++) {
    const words = unwrapCommand(current.words).words;
    const name = commandBaseName(words[0]);
    if (name === undefined) return undefined;
    const args = words.slice(1);
    if (FETCHERS.has(name) && writesToStdout(name, args))
      return { kind: "network", fetcher: joinWords(words).slice(0, 120) };
    if (decoder === undefined && DECODERS.has(name) && decodes(name, args)) decoder = { name, command: current };
    else if (!PASS_THROUGH.has(name)) break;
    current = current.pipedFrom;
  }
  if (decoder === undefined) return undefined;
  return { kind: "decoded", decoder: decoder.name, script: staticBase64Script(decoder.name, decoder.command) };
}

/** `wget URL` saves to a file; only `-O -` / `-qO-` / `--output-document=-` writes the script to the pipe. */
function writesToStdout(name: string, args: readonly ShellWord[]): boolean {
  if (name !== "wget") return true;
  return args.some(
    (arg, index) =>
      /^-[a-zA-Z]*O-$/.test(arg.text) ||
      arg.text === "--output-document=-" ||
      ((/^-[a-zA-Z]*O$/.test(arg.text) || arg.text === "--output-document") && args[index + 1]?.text === "-"),
  );
}

function decodes(name: string, args: readonly ShellWord[]): boolean {
  const texts = args.map((arg) => arg.text);
  if (name === "base64" || name === "base32")
    return texts.some((text) => /^-[a-zA-Z]*[dD]$/.test(text) || text === "--decode");
  if (name === "xxd") return texts.some((text) => /^-[a-zA-Z]*r/.test(text));
  if (name === "openssl") return texts.includes("-d") || texts.includes("-base64") || texts[0] === "base64";
  return true;
}

/** `echo cm0gLXJmIC8= | base64 -d | sh`, `base64 -d <<< '…' | sh`: a payload written in the line can be read. */
function staticBase64Script(decoder: string, command: SimpleCommand): string | undefined {
  if (decoder !== "base64") return undefined;
  const words = unwrapCommand(command.words).words;
  if (words.slice(1).some((arg) => !arg.text.startsWith("-"))) return undefined; // reads a file
  let payload = command.stdinText;
  const producer = command.pipedFrom;
  const producerName = commandBaseName(producer?.words[0]);
  if (
    payload === undefined &&
    producer !== undefined &&
    (producerName === "echo" || producerName === "printf") &&
    producer.words.every((word) => !word.dynamic)
  ) {
    payload = producer.words
      .slice(1)
      .filter((word) => !/^-[neE]+$/.test(word.text))
      .map((word) => word.text)
      .join("");
  }
  if (payload === undefined || !/^[A-Za-z0-9+/=\s]+$/.test(payload)) return undefined;
  const decoded = Buffer.from(payload.replace(/\s+/g, ""), "base64").toString("utf8");
  return decoded.includes("\uFFFD") ? undefined : decoded;
}

/** The script operand of `sh -c SCRIPT`, `eval WORDS`, `source FILE`. */
function scriptArgument(name: string, args: readonly ShellWord[]): ShellWord | undefined {
  if (name === "eval") return args.length === 1 ? args[0] : undefined;
  if (!SHELLS.has(name)) return undefined;
  const flag = args.findIndex((arg) => !arg.dynamic && /^-[a-z]*c[a-z]*$/i.test(arg.text));
  return flag === -1 ? undefined : args.slice(flag + 1).find((arg) => arg.dynamic || !arg.text.startsWith("-"));
}

/**
 * `ssh [options] host command…`: the words after the host are joined with blanks and run by the
 * remote shell, or the here-document is when no command is given. Judged as a command with
 * nothing known about the remote directories.
 */
function sshFindings(
  args: readonly ShellWord[],
  command: SimpleCommand,
  label: string,
  run: RunScript,
): DestructiveFinding[] {
  let host: string | undefined;
  let index = 0;
  for (; index < args.length; index++) {
    const text = args[index]?.text ?? "";
    if (text === "--") continue;
    if (text.startsWith("-") && text.length > 1) {
      const valueFlag = [...text.slice(1)].findIndex((flag) => SSH_OPTIONS_WITH_VALUE.includes(flag));
      if (valueFlag !== -1 && valueFlag + 2 === text.length) index++;
      continue;
    }
    if (host !== undefined) break;
    host = text;
  }
  const remoteWords = args.slice(index);
  const script = remoteWords.length > 0 ? remoteWords.map((word) => word.text).join(" ") : command.stdinText;
  if (host === undefined || script === undefined) return [];
  return run(script, REMOTE_CONTEXT).findings.map((finding) => ({
    ...finding,
    command: label,
    detail: `over ssh to ${host}: ${finding.detail}`,
  }));
}
