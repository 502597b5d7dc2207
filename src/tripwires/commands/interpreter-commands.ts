import type { DestructiveFinding } from "./command-analysis.ts";
import { joinWords } from "./command-words.ts";
import { judgeDelete } from "./delete-targets.ts";
import type { RunScript } from "./indirect-execution.ts";
import type { PathContext } from "./path-resolution.ts";
import type { ShellWord, SimpleCommand } from "./parsed-shell.ts";

/**
 * Interpreter one-liners (`python -c`, `perl -e`, `node -e`, `ruby -e`, and a script piped or
 * here-doc'ed into `python3 -`). No per-language parser: a short list of delete and run calls is
 * found in the code, their string-literal arguments are judged with the same path rules as `rm`,
 * and a shell command they run is analysed as a command. An argument that is not a literal is
 * computed by the program (`shutil.rmtree(tmp)`), not an unset shell variable: it is not judged.
 */

type Language = "python" | "perl" | "ruby" | "node";

interface InterpreterSyntax {
  readonly language: Language;
  /** Options whose next argument is the code (`-c`, `-e`, clusters ending in it: `-le`). */
  readonly codeFlag: RegExp;
}

const INTERPRETERS: readonly [RegExp, InterpreterSyntax][] = [
  [/^(python[0-9.]*|pypy[0-9.]*)$/, { language: "python", codeFlag: /^-[a-zA-Z]*c$/ }],
  [/^perl[0-9.]*$/, { language: "perl", codeFlag: /^-[a-zA-Z]*[eE]$/ }],
  [/^ruby[0-9.]*$/, { language: "ruby", codeFlag: /^-[a-zA-Z]*e$/ }],
  [/^(node|nodejs|bun)$/, { language: "node", codeFlag: /^(-[a-z]*[ep]|--eval|--print)$/ }],
];

const MAX_CODE_LENGTH = 64 * 1024;
/** Calls examined per pattern and the text read after each: bounds for hostile input. */
const MAX_CALLS = 256;
/** Shell commands run by the code that are analysed (each is a nested parse). */
const MAX_SCRIPTS = 16;
const ARGUMENT_WINDOW = 4096;

/** A call of one of the names (regex sources), not part of a longer identifier. */
function calls(names: readonly string[]): RegExp {
  return new RegExp(`(?<![\\w$])(${names.join("|")})\\b`, "g");
}

/** Calls that delete recursively, delete one entry, or run a shell command, by language. */
const RECURSIVE_DELETES = calls([
  "shutil\\.rmtree",
  "rmtree",
  "remove_tree",
  "FileUtils\\.(?:rm_rf|rm_r|remove_dir|remove_entry_secure|remove_entry)",
  "rm_rf",
  "rm_r",
]);
const NODE_DELETES = calls(["(?:fs\\.|fsp\\.|promises\\.)?(?:rmSync|rmdirSync)", "(?:fs|fsp|promises)\\.(?:rm|rmdir)"]);
const SINGLE_DELETES = calls([
  "os\\.(?:remove|unlink|rmdir)",
  "unlink",
  "unlinkSync",
  "File\\.(?:delete|unlink)",
  "FileUtils\\.(?:rm_f|rm|remove)",
]);
const PATH_DELETES = /(?<![\w$])(?:pathlib\.)?Path\(\s*(['"])((?:\\.|(?!\1).)*)\1\s*\)\s*\.\s*(unlink|rmdir)\s*\(/g;
const RUN_CALLS: Readonly<Record<Language, RegExp>> = {
  python: calls([
    "os\\.(?:system|popen)",
    "subprocess\\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)",
  ]),
  perl: calls(["system", "exec", "qx"]),
  ruby: calls(["system", "exec", "IO\\.popen", "Open3\\.\\w+", "%x"]),
  node: calls(["execSync", "exec", "execFileSync", "execFile", "spawnSync", "spawn"]),
};
/** Perl and Ruby backticks run a shell command; in JavaScript they are template strings. */
const BACKTICKS = /`([^`$]*)`/g;
const ENDLESS_LOOP = new RegExp(
  [
    "\\bwhile\\s*\\(?\\s*(?:True|1|true|!0)\\s*\\)?",
    "\\bfor\\s*\\(\\s*;\\s*;\\s*\\)",
    "\\bloop\\s*(?:\\{|do\\b)",
    "\\bwhile\\s+fork\\b",
    "\\buntil\\s+false\\b",
    "\\bitertools\\.count\\(",
  ].join("|"),
);
const FORK_CALL = /(?<![\w$])(?:os\.fork|os\.forkpty|Process\.fork|fork)\b/;
/** Expressions that name the home directory. */
const HOME_EXPRESSION = new RegExp(
  `^(?:${[
    "Path\\.home\\(\\)",
    "os\\.homedir\\(\\)",
    "Dir\\.home",
    "os\\.path\\.expanduser\\(\\s*['\"]~['\"]\\s*\\)",
    "os\\.environ\\[\\s*['\"]HOME['\"]\\s*\\]",
    "os\\.getenv\\(\\s*['\"]HOME['\"]\\s*\\)",
    "process\\.env\\.HOME",
    "ENV\\[\\s*['\"]HOME['\"]\\s*\\]",
    "\\$ENV\\{\\s*HOME\\s*\\}",
  ].join("|")})`,
);
/** Wrappers that turn a literal into a path without changing which path it is. */
const PATH_WRAPPER =
  /^(?:os\.path\.(?:expanduser|abspath|realpath)|pathlib\.Path|Path|File\.expand_path|path\.resolve)\s*\(\s*/;

export function interpreterFindings(
  name: string,
  args: readonly ShellWord[],
  command: SimpleCommand,
  here: PathContext,
  run: RunScript,
): DestructiveFinding[] {
  const syntax = INTERPRETERS.find(([pattern]) => pattern.test(name))?.[1];
  if (syntax === undefined) return [];
  const code = codeOf(syntax, args, command);
  if (code === undefined || code.length > MAX_CODE_LENGTH) return [];
  const label = joinWords(command.words);
  const findings: DestructiveFinding[] = [];
  const deleted = (literal: string | undefined, recursive: boolean, call: string): void => {
    if (literal === undefined) return;
    const verdict = judgeDelete({ text: literal, dynamic: false }, recursive, false, here);
    if (verdict !== undefined)
      findings.push({
        ruleId: verdict.ruleId,
        command: label,
        path: verdict.path,
        detail: `${name}: ${call}(${literal}) ${recursive ? "recursively " : ""}deletes ${verdict.path}`,
      });
  };
  for (const match of bounded(code, RECURSIVE_DELETES)) deleted(firstArgument(code, match), true, match[1] ?? "");
  for (const match of bounded(code, NODE_DELETES)) {
    const call = callText(code, (match.index ?? 0) + match[0].length);
    deleted(firstArgument(code, match), /recursive\s*:\s*true/.test(call), match[1] ?? "");
  }
  for (const match of bounded(code, SINGLE_DELETES)) deleted(firstArgument(code, match), false, match[1] ?? "");
  for (const match of bounded(code, PATH_DELETES)) deleted(match[2], match[3] === "rmdir", `Path.${match[3] ?? ""}`);
  const scripts: string[] = [];
  for (const match of bounded(code, RUN_CALLS[syntax.language])) {
    const script = commandArgument(code, match);
    if (script !== undefined) scripts.push(script);
  }
  if (syntax.language === "perl" || syntax.language === "ruby")
    for (const match of bounded(code, BACKTICKS)) scripts.push(match[1] ?? "");
  for (const script of scripts.slice(0, MAX_SCRIPTS)) {
    findings.push(
      ...run(script, here).findings.map((finding) => ({
        ...finding,
        command: label,
        detail: `${name} runs \`${script.slice(0, 80)}\`: ${finding.detail}`,
      })),
    );
  }
  if (ENDLESS_LOOP.test(code) && FORK_CALL.test(code)) {
    findings.push({
      ruleId: "resource-fork-bomb",
      command: label,
      path: undefined,
      detail: `${name} forks in an endless loop`,
    });
  }
  return findings;
}

function bounded(code: string, pattern: RegExp): RegExpMatchArray[] {
  const matches: RegExpMatchArray[] = [];
  for (const match of code.matchAll(pattern)) if (matches.push(match) >= MAX_CALLS) break;
  return matches;
}

/** The code an interpreter runs: the value of its code option(s), or stdin (`python3 - <<EOF`). */
function codeOf(syntax: InterpreterSyntax, args: readonly ShellWord[], command: SimpleCommand): string | undefined {
  const pieces: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === undefined || arg.dynamic) return pieces.length > 0 ? pieces.join("\n") : undefined;
    if (syntax.codeFlag.test(arg.text)) {
      const code = args[index + 1];
      if (code === undefined || code.dynamic) return undefined;
      pieces.push(code.text);
      index++;
      // python -c takes one program; perl and ruby accept several -e lines.
      if (syntax.language === "python" || syntax.language === "node") break;
    } else if (!arg.text.startsWith("-") && pieces.length === 0) {
      return undefined; // a script file: its contents are not here
    } else if (arg.text === "-") {
      break;
    }
  }
  if (pieces.length > 0) return pieces.join("\n");
  return command.stdinText;
}

/** Text of a call's argument list from just after the name, up to its closing parenthesis (or the statement's end). */
function callText(code: string, from: number): string {
  let depth = 0;
  for (let index = from; index < code.length && index < from + 2000; index++) {
    const char = code.charAt(index);
    if (char === "(") depth++;
    else if (char === ")" && --depth <= 0) return code.slice(from, index + 1);
    else if ((char === ";" || char === "\n") && depth === 0) return code.slice(from, index);
  }
  return code.slice(from, from + 2000);
}

/** The call's first argument when it is a string literal (or a path wrapper around one, or home). */
function firstArgument(code: string, match: RegExpMatchArray): string | undefined {
  const start = (match.index ?? 0) + match[0].length;
  let rest = code.slice(start, start + ARGUMENT_WINDOW).replace(/^\s*\(?\s*/, "");
  const home = HOME_EXPRESSION.exec(rest);
  if (home !== null) return endsArgument(rest.slice(home[0].length)) ? "~" : undefined;
  for (let unwrap = 0; unwrap < 2; unwrap++) {
    const wrapper = PATH_WRAPPER.exec(rest);
    if (wrapper === null) break;
    rest = rest.slice(wrapper[0].length);
  }
  const literal = stringLiteral(rest);
  if (literal === undefined) return undefined;
  return endsArgument(rest.slice(literal.length).replace(/^\s*\)/, "")) ? literal.value : undefined;
}

function endsArgument(after: string): boolean {
  return /^\s*(?:[),;]|$|\n|\b(?:if|unless|or|and)\b)/.test(after);
}

/** A quoted literal at the start of text: its source length and value (escapes of the quote resolved). */
function stringLiteral(text: string): { length: number; value: string } | undefined {
  const match = /^[rRbBuU]?(['"`])((?:\\.|(?!\1)[^\\])*)\1/.exec(text);
  if (match === null || (match[1] === "`" && (match[2] ?? "").includes("${"))) return undefined;
  return { length: match[0].length, value: (match[2] ?? "").replace(/\\(['"\\`])/g, "$1") };
}

/**
 * The shell command of a run call: one string literal is a command line (`system('rm -rf /')`);
 * several literals or lists of them are argv (`['rm', '-rf', '/']`, `spawnSync('rm', ['-rf', '/'])`,
 * perl's `system('rm', '-rf', '/')`), joined with blanks.
 */
function commandArgument(code: string, match: RegExpMatchArray): string | undefined {
  const start = (match.index ?? 0) + match[0].length;
  let text = code.slice(start, start + ARGUMENT_WINDOW);
  if (match[1] === "%x" || match[1] === "qx") {
    const close = ({ "(": ")", "{": "}", "[": "]", "|": "|", "/": "/" } as Record<string, string>)[text.charAt(0)];
    const end = close === undefined ? -1 : text.indexOf(close, 1);
    return end === -1 ? undefined : text.slice(1, end);
  }
  text = text.replace(/^\s*\(?\s*/, "");
  const items: string[] = [];
  let argv = false;
  for (let piece = 0; piece < 8; piece++) {
    const list = /^\[\s*((?:(['"])(?:\\.|(?!\2)[^\\])*\2\s*(?:,\s*)?)+)\]/.exec(text);
    if (list !== null) {
      argv = true;
      for (const item of (list[1] ?? "").matchAll(/(['"])((?:\\.|(?!\1)[^\\])*)\1/g)) items.push(item[2] ?? "");
      text = text.slice(list[0].length);
    } else {
      const literal = stringLiteral(text);
      if (literal === undefined) break;
      items.push(literal.value);
      text = text.slice(literal.length);
    }
    const comma = /^\s*,\s*/.exec(text);
    if (comma === null) break;
    text = text.slice(comma[0].length);
  }
  if (items.length === 0) return undefined;
  return items.length === 1 && !argv ? items[0] : items.map(shellQuote).join(" ");
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}
