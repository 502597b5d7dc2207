import type { ShellWord } from "./parsed-shell.ts";
import { commandBaseName } from "./command-words.ts";

/**
 * Commands that run another command given in their arguments. Unwrapping them is what makes
 * `sudo -u root rm -rf /`, `env A=1 nohup time rm -rf /` and `xargs rm -rf` visible as `rm`.
 * For each wrapper: the short options that take a value (so their value is not mistaken for the
 * command), and how many positional operands precede the command.
 */
interface WrapperSyntax {
  readonly shortWithValue: string;
  readonly longWithValue: readonly string[];
  readonly operandsBeforeCommand: number;
  /** Arguments that mean "do not run anything" (`command -v rm`). */
  readonly inert?: readonly string[];
}

const WRAPPERS: Readonly<Record<string, WrapperSyntax>> = {
  sudo: {
    shortWithValue: "ugpChDrtUT",
    longWithValue: [
      "user",
      "group",
      "host",
      "prompt",
      "close-from",
      "chdir",
      "role",
      "type",
      "other-user",
      "command-timeout",
    ],
    operandsBeforeCommand: 0,
    inert: ["-l", "--list", "-v", "--validate", "-k", "-K", "-V", "--version", "-h", "--help"],
  },
  doas: { shortWithValue: "uC", longWithValue: [], operandsBeforeCommand: 0 },
  // -P is BSD env's search path (`env -P /usr/bin git …`); -S is handled below (its value is argv).
  env: { shortWithValue: "uCSP", longWithValue: ["unset", "chdir", "split-string"], operandsBeforeCommand: 0 },
  nohup: { shortWithValue: "", longWithValue: [], operandsBeforeCommand: 0 },
  time: { shortWithValue: "fo", longWithValue: ["format", "output"], operandsBeforeCommand: 0 },
  command: { shortWithValue: "", longWithValue: [], operandsBeforeCommand: 0, inert: ["-v", "-V"] },
  builtin: { shortWithValue: "", longWithValue: [], operandsBeforeCommand: 0 },
  exec: { shortWithValue: "a", longWithValue: [], operandsBeforeCommand: 0 },
  nice: { shortWithValue: "n", longWithValue: ["adjustment"], operandsBeforeCommand: 0 },
  ionice: { shortWithValue: "cnp", longWithValue: ["class", "classdata", "pid"], operandsBeforeCommand: 0 },
  timeout: { shortWithValue: "sk", longWithValue: ["signal", "kill-after"], operandsBeforeCommand: 1 },
  stdbuf: { shortWithValue: "ioe", longWithValue: ["input", "output", "error"], operandsBeforeCommand: 0 },
  chronic: { shortWithValue: "", longWithValue: [], operandsBeforeCommand: 0 },
  unbuffer: { shortWithValue: "", longWithValue: [], operandsBeforeCommand: 0 },
  flock: {
    shortWithValue: "wEc",
    longWithValue: ["timeout", "conflict-exit-code", "command"],
    operandsBeforeCommand: 1,
  },
  setsid: { shortWithValue: "", longWithValue: [], operandsBeforeCommand: 0 },
  caffeinate: { shortWithValue: "tw", longWithValue: [], operandsBeforeCommand: 0 },
  watch: { shortWithValue: "nd", longWithValue: ["interval", "differences"], operandsBeforeCommand: 0 },
  "container-exec": {
    shortWithValue: "euw",
    longWithValue: ["env", "env-file", "user", "workdir", "detach-keys"],
    operandsBeforeCommand: 1,
  },
  // `-e[eof]`, `-i[replace]`, `-l[lines]` take their value only inline, so they are not listed.
  xargs: {
    shortWithValue: "aEIJLnPsd",
    longWithValue: [
      "arg-file",
      "eof",
      "max-lines",
      "max-args",
      "max-procs",
      "max-chars",
      "delimiter",
      "process-slot-var",
    ],
    operandsBeforeCommand: 0,
    inert: ["--help", "--version"],
  },
  parallel: {
    shortWithValue: "jSadEICnNLP",
    longWithValue: [
      "jobs",
      "sshlogin",
      "sshloginfile",
      "slf",
      "arg-file",
      "delimiter",
      "eof",
      "colsep",
      "max-args",
      "max-lines",
      "max-replace-args",
      "joblog",
      "results",
      "res",
      "tmpdir",
      "workdir",
      "wd",
      "tagstring",
      "tag-string",
      "retries",
      "timeout",
      "delay",
      "memfree",
      "load",
      "halt",
      "env",
      "basefile",
      "bf",
      "return",
      "transferfile",
      "tf",
      "sshdelay",
      "termseq",
      "limit",
      "resume-failed-from",
      "sqlmaster",
      "sqlworker",
      "sqlandworker",
    ],
    operandsBeforeCommand: 0,
    inert: [
      "--dry-run",
      "--version",
      "--help",
      "--citation",
      "--number-of-cpus",
      "--number-of-cores",
      "--number-of-threads",
      "--max-line-length-allowed",
      "--minversion",
      "--record-env",
      "--embed",
    ],
  },
  // `busybox rm -rf /`, `toybox rm -rf /`: the multi-call binary runs its applet.
  busybox: {
    shortWithValue: "",
    longWithValue: [],
    operandsBeforeCommand: 0,
    inert: ["--list", "--list-full", "--install", "--help"],
  },
  toybox: { shortWithValue: "", longWithValue: [], operandsBeforeCommand: 0, inert: ["--long", "--help", "--version"] },
  // Project runners, keyed by runner and subcommand (see PROJECT_RUNNERS).
  "uv run": {
    shortWithValue: "wpfPC",
    longWithValue: [
      "with",
      "with-editable",
      "with-requirements",
      "python",
      "project",
      "directory",
      "env-file",
      "package",
      "extra",
      "group",
      "only-group",
      "no-group",
      "index",
      "default-index",
      "index-url",
      "extra-index-url",
      "find-links",
      "config-file",
      "cache-dir",
      "color",
      "python-preference",
      "upgrade-package",
      "reinstall-package",
      "resolution",
      "prerelease",
      "exclude-newer",
      "link-mode",
      "index-strategy",
      "keyring-provider",
      "config-setting",
    ],
    operandsBeforeCommand: 0,
  },
  "poetry run": { shortWithValue: "CP", longWithValue: ["directory", "project"], operandsBeforeCommand: 0 },
  "pipenv run": { shortWithValue: "", longWithValue: ["python"], operandsBeforeCommand: 0 },
  "pdm run": { shortWithValue: "pL", longWithValue: ["project", "lockfile", "venv"], operandsBeforeCommand: 0 },
  "hatch run": { shortWithValue: "", longWithValue: [], operandsBeforeCommand: 0 },
  "conda run": { shortWithValue: "np", longWithValue: ["name", "prefix", "cwd"], operandsBeforeCommand: 0 },
  "pixi run": { shortWithValue: "e", longWithValue: ["environment", "manifest-path"], operandsBeforeCommand: 0 },
};

/**
 * Project runners whose `run` subcommand runs the command after it in the project's environment
 * (`uv run rm -rf /`, `poetry -C app run pytest`): the global options each takes a value with, so
 * that the subcommand is found behind them.
 */
const PROJECT_RUNNERS: Readonly<Record<string, { readonly syntax: string; readonly globalWithValue: string[] }>> = {
  uv: { syntax: "uv run", globalWithValue: ["--directory", "--project", "--cache-dir", "--config-file", "--color"] },
  poetry: { syntax: "poetry run", globalWithValue: ["-C", "--directory", "-P", "--project"] },
  pipenv: { syntax: "pipenv run", globalWithValue: ["--python"] },
  pdm: { syntax: "pdm run", globalWithValue: ["-p", "--project", "-c", "--config"] },
  hatch: { syntax: "hatch run", globalWithValue: ["-e", "--env", "-p", "--project", "--data-dir", "--cache-dir"] },
  conda: { syntax: "conda run", globalWithValue: [] },
  mamba: { syntax: "conda run", globalWithValue: [] },
  micromamba: { syntax: "conda run", globalWithValue: ["-r", "--root-prefix"] },
  pixi: { syntax: "pixi run", globalWithValue: ["--manifest-path"] },
};

/** Where a project runner's `run` subcommand stands, or -1 when the line runs another subcommand. */
function runSubcommandIndex(words: readonly ShellWord[], globalWithValue: readonly string[]): number {
  for (let index = 1; index < words.length; index++) {
    const text = words[index]?.text ?? "";
    if (globalWithValue.includes(text)) index++;
    else if (!text.startsWith("-")) return text === "run" ? index : -1;
  }
  return -1;
}

/** How a fan-out runner (xargs, GNU parallel) builds the command it runs. */
export interface FanOut {
  readonly runner: "xargs" | "parallel";
  /** Placeholder replaced by each input item (`xargs -I {}`, parallel's `{}`); undefined: items are appended. */
  readonly replaceString: string | undefined;
  /** `xargs -a FILE` / `--arg-file`, `parallel -a`: the items come from a file, not from the pipe. */
  readonly itemsFromFile: boolean;
  /** BSD `xargs -J R`: R is replaced only where it is a whole argument, and items are split at blanks. */
  readonly replaceWholeArgument: boolean;
  /** `-0`/`--null` (NUL), `-d C`/`--delimiter C`: items end only there, blanks and newlines stay inside. */
  readonly delimiter: string | undefined;
}

export interface Unwrapped {
  /** The innermost command's argv (empty when the wrapper runs nothing). */
  readonly words: readonly ShellWord[];
  /** The command gets extra arguments from stdin (`xargs`) or from `:::` lists (`parallel`). */
  readonly argumentsFromStdin: boolean;
  /** The innermost fan-out runner, when there is one. */
  readonly fanOut: FanOut | undefined;
  /** Working directory set by a wrapper (`env -C dir`, `sudo -D dir`). */
  readonly chdir: string | undefined;
  /** Wrappers nest deeper than MAX_WRAPPERS: `words` still starts with one, the command is unknown. */
  readonly tooDeep?: boolean;
}

const MAX_WRAPPERS = 8;

export function unwrapCommand(words: readonly ShellWord[]): Unwrapped {
  let current = words;
  let argumentsFromStdin = false;
  let fanOut: FanOut | undefined;
  let chdir: string | undefined;
  let depth = 0;
  for (; depth < MAX_WRAPPERS; depth++) {
    let name = commandBaseName(current[0]);
    // `docker exec [opts] CONTAINER cmd…`, `kubectl exec POD -- cmd…`: the command runs elsewhere, but runs.
    if ((name === "docker" || name === "podman") && current[1]?.text === "exec") {
      current = current.slice(1);
      name = "container-exec";
    } else if (name !== undefined && PROJECT_RUNNERS[name] !== undefined) {
      const runner = PROJECT_RUNNERS[name];
      const run = runSubcommandIndex(current, runner.globalWithValue);
      if (run === -1) break;
      current = current.slice(run);
      name = runner.syntax;
    } else if ((name === "kubectl" || name === "oc") && current[1]?.text === "exec") {
      const separator = current.findIndex((word) => word.text === "--");
      if (separator === -1) break;
      current = current.slice(separator + 1);
      continue;
    }
    const syntax = name === undefined ? undefined : WRAPPERS[name];
    if (name === undefined || syntax === undefined) break;
    let replaceString: string | undefined = name === "parallel" ? "{}" : undefined;
    let itemsFromFile = false;
    let replaceWholeArgument = false;
    let delimiter: string | undefined;
    let splitString: readonly ShellWord[] | undefined;
    let index = 1;
    let operands = 0;
    while (index < current.length) {
      const word = current[index];
      if (word === undefined) break;
      const text = word.text;
      if (syntax.inert?.includes(text)) return { words: [], argumentsFromStdin, fanOut, chdir };
      if (text === "--") {
        index++;
        break;
      }
      if (name === "env" && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(text) || text === "-")) {
        index++;
      } else if (text.startsWith("--") && !word.dynamic) {
        const optionName = text.slice(2).split("=", 1)[0] ?? "";
        const inlineValue = text.includes("=") ? text.slice(text.indexOf("=") + 1) : undefined;
        const takesValue = inlineValue === undefined && syntax.longWithValue.includes(optionName);
        const value = inlineValue ?? (takesValue ? current[index + 1]?.text : undefined);
        if (optionName === "chdir" && value !== undefined) chdir = value;
        if (name === "env" && optionName === "split-string" && value !== undefined) splitString = splitWords(value);
        if ((name === "xargs" || name === "parallel") && optionName === "replace") replaceString = inlineValue ?? "{}";
        if ((name === "xargs" || name === "parallel") && optionName === "arg-file") itemsFromFile = true;
        if ((name === "xargs" || name === "parallel") && optionName === "null") delimiter = "\0";
        if ((name === "xargs" || name === "parallel") && optionName === "delimiter" && value !== undefined)
          delimiter = unescapeDelimiter(value);
        index += takesValue ? 2 : 1;
      } else if (text.startsWith("-") && text.length > 1 && !word.dynamic) {
        const valueFlag = [...text.slice(1)].findIndex((flag) => syntax.shortWithValue.includes(flag));
        const flag = valueFlag === -1 ? undefined : text.charAt(valueFlag + 1);
        const valueInline = valueFlag !== -1 && valueFlag + 2 < text.length;
        const value =
          flag === undefined ? undefined : valueInline ? text.slice(valueFlag + 2) : current[index + 1]?.text;
        if (flag === "C" || flag === "D") chdir = value;
        const fanOutFlag = name === "xargs" || name === "parallel";
        if (fanOutFlag && (flag === "I" || (flag === "J" && name === "xargs"))) {
          replaceString = value;
          replaceWholeArgument = flag === "J";
        }
        if (fanOutFlag && flag === "a") itemsFromFile = true;
        if (fanOutFlag && text.slice(1, valueFlag === -1 ? undefined : valueFlag + 1).includes("0")) delimiter = "\0";
        if (fanOutFlag && flag === "d" && value !== undefined) delimiter = unescapeDelimiter(value);
        if (name === "env" && flag === "S" && value !== undefined) splitString = splitWords(value);
        // `xargs -i` / `-iR`: the replace string is optional and inline only.
        if (name === "xargs" && valueFlag === -1 && text.startsWith("-i"))
          replaceString = text.length > 2 ? text.slice(2) : "{}";
        index += valueFlag !== -1 && !valueInline ? 2 : 1;
      } else if (operands < syntax.operandsBeforeCommand) {
        operands++;
        index++;
      } else {
        break;
      }
    }
    // The -S string is read by env again: it may start with assignments (`env -S 'PATH=/bin git …'`).
    current =
      splitString === undefined
        ? current.slice(index)
        : [{ text: "env", dynamic: false }, ...splitString, ...current.slice(index)];
    if (name === "xargs" || name === "parallel") {
      argumentsFromStdin = true;
      fanOut = { runner: name, replaceString, itemsFromFile, replaceWholeArgument, delimiter };
    }
  }
  const innermost = commandBaseName(current[0]);
  const tooDeep =
    depth === MAX_WRAPPERS &&
    innermost !== undefined &&
    (WRAPPERS[innermost] !== undefined ||
      ((innermost === "docker" || innermost === "podman" || innermost === "kubectl" || innermost === "oc") &&
        current[1]?.text === "exec"));
  return { words: current, argumentsFromStdin, fanOut, chdir, ...(tooDeep ? { tooDeep } : {}) };
}

/** `-d '\n'`: xargs reads C escapes in the delimiter. */
function unescapeDelimiter(value: string): string {
  const escapes: Readonly<Record<string, string>> = { n: "\n", t: "\t", "0": "\0", r: "\r", "\\": "\\" };
  return value.length === 2 && value.startsWith("\\") ? (escapes[value.charAt(1)] ?? value.charAt(1)) : value.charAt(0);
}

/** `env -S 'rm -rf'`: the string is split at blanks into words (env's own quoting is not modelled). */
function splitWords(value: string): ShellWord[] {
  return value
    .split(/\s+/)
    .filter((text) => text !== "")
    .map((text) => ({ text, dynamic: false }));
}
