import type { DestructiveFinding } from "./command-analysis.ts";
import { judgeDelete } from "./delete-targets.ts";
import type { ShellWord } from "./parsed-shell.ts";
import type { PathContext } from "./path-resolution.ts";

/** `find`: its roots, its expression, and whether (and how narrowly) it deletes what it finds. */

/** Tests that narrow what find selects; all take one value except `-empty`. */
const FIND_FILTERS = new Set([
  "-name",
  "-iname",
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-regex",
  "-iregex",
  "-newer",
  "-newermt",
  "-mtime",
  "-mmin",
  "-atime",
  "-amin",
  "-ctime",
  "-cmin",
  "-size",
  "-empty",
  "-user",
  "-group",
  "-perm",
  "-links",
  "-inum",
  "-samefile",
  "-lname",
  "-ilname",
]);

/** `find ROOTS... EXPRESSION`: roots are the leading arguments that are not expression tokens. */
export function findRoots(args: readonly ShellWord[]): ShellWord[] {
  const roots: ShellWord[] = [];
  for (const arg of args) {
    if (!arg.dynamic && (arg.text.startsWith("-") || arg.text === "(" || arg.text === "!")) break;
    roots.push(arg);
  }
  return roots.length === 0 ? [{ text: ".", dynamic: false }] : roots;
}

const EXEC_ACTIONS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
/** The value words of find's tests (patterns, sizes, times), told apart from actions by identity. */
const FILTER_VALUES = new WeakSet<ShellWord>();
const NAME_FILTERS = new Set(["-name", "-iname"]);
const PATH_FILTERS = new Set(["-path", "-ipath", "-wholename", "-iwholename"]);

/** One `-exec`/`-execdir`/`-ok`/`-okdir` action: the command it runs, per found entry (`{}`). */
export interface FindExec {
  readonly words: readonly ShellWord[];
}

/** A `find` expression: roots, the expression tokens outside exec blocks, and the exec blocks. */
export interface FindExpression {
  readonly roots: readonly ShellWord[];
  /** Tokens with each exec block replaced by one `-exec#N` token (so `-exec echo -delete` has no `-delete`). */
  readonly tokens: readonly ShellWord[];
  readonly execs: readonly FindExec[];
}

export function parseFindExpression(args: readonly ShellWord[]): FindExpression {
  const roots = findRoots(args);
  const rest = args.slice(
    args.findIndex((arg) => !arg.dynamic && (arg.text.startsWith("-") || arg.text === "(" || arg.text === "!")) === -1
      ? args.length
      : args.findIndex((arg) => !arg.dynamic && (arg.text.startsWith("-") || arg.text === "(" || arg.text === "!")),
  );
  const tokens: ShellWord[] = [];
  const execs: FindExec[] = [];
  for (let index = 0; index < rest.length; index++) {
    const token = rest[index];
    if (token === undefined) break;
    const value = rest[index + 1];
    if (FIND_FILTERS.has(token.text) && token.text !== "-empty" && value !== undefined) {
      // A test's value is a pattern, never an action: `-name -delete` deletes nothing.
      const pattern = { ...value };
      FILTER_VALUES.add(pattern);
      tokens.push(token, pattern);
      index++;
      continue;
    }
    if (!EXEC_ACTIONS.has(token.text)) {
      tokens.push(token);
      continue;
    }
    // The command runs up to `;`, or up to `+` right after `{}`.
    let end = index + 1;
    while (end < rest.length && rest[end]?.text !== ";" && !(rest[end]?.text === "+" && rest[end - 1]?.text === "{}"))
      end++;
    execs.push({ words: rest.slice(index + 1, end) });
    tokens.push({ text: `-exec#${execs.length - 1}`, dynamic: false });
    index = end;
  }
  return { roots, tokens, execs };
}

/** fnmatch as find applies it to -name/-path patterns (`*` also matches `/` for -path). */
function globMatches(pattern: string, text: string, ignoreCase: boolean): boolean {
  let source = "";
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern.charAt(index);
    if (char === "*") source += ".*";
    else if (char === "?") source += ".";
    else if (char === "[") {
      const close = pattern.indexOf("]", index + 2);
      if (close === -1) source += "\\[";
      else {
        source += `[${pattern
          .slice(index + 1, close)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\")}]`;
        index = close;
      }
    } else if (char === "\\" && index + 1 < pattern.length)
      source += pattern.charAt(++index).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    else source += char.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  try {
    return new RegExp(`^${source}$`, ignoreCase ? "is" : "s").test(text);
  } catch {
    return false;
  }
}

interface BranchVerdict {
  /** A filter before the action narrows what is deleted. */
  readonly restricted: boolean;
  /** A -name/-path filter selects `.git` directories or files inside them. */
  readonly selectsGitDir: boolean;
}

/**
 * Reads the filters that guard a deleting action. find evaluates `-o` alternatives left to right,
 * so only the alternative holding the action matters (`-name .git -prune -o -name '*.pyc' -delete`
 * deletes *.pyc, not .git), and only the filters before the action in it. A filter narrows only
 * if it is not negated (`! -name x` deletes nearly everything) and its pattern does not match
 * everything (`-name '*'`).
 */
function branchVerdict(
  tokens: readonly ShellWord[],
  isAction: (token: ShellWord) => boolean,
  root: string,
): BranchVerdict | undefined {
  let branchStart = 0;
  let depth = 0;
  for (let index = 0; index < tokens.length; index++) {
    const text = tokens[index]?.text ?? "";
    if (text === "(") depth++;
    else if (text === ")") depth = Math.max(0, depth - 1);
    else if ((text === "-o" || text === "-or") && depth === 0) branchStart = index + 1;
    else if (tokens[index] !== undefined && isAction(tokens[index] as ShellWord))
      return readFilters(tokens.slice(branchStart, index), root);
  }
  return undefined;
}

function readFilters(tokens: readonly ShellWord[], root: string): BranchVerdict {
  let restricted = false;
  let selectsGitDir = false;
  const base = root.replace(/\/+$/, "") || "/";
  for (let index = 0; index < tokens.length; index++) {
    const text = tokens[index]?.text ?? "";
    const negated = tokens[index - 1]?.text === "!" || tokens[index - 1]?.text === "-not";
    if (!FIND_FILTERS.has(text)) continue;
    const pattern = text === "-empty" ? undefined : tokens[++index];
    if (!NAME_FILTERS.has(text) && !PATH_FILTERS.has(text)) {
      restricted ||= !negated;
      continue;
    }
    if (pattern === undefined || pattern.dynamic) continue; // an unknown pattern may match anything
    const ignoreCase = text.startsWith("-i");
    const matches = (candidate: string): boolean => globMatches(pattern.text, candidate, ignoreCase);
    const isPath = PATH_FILTERS.has(text);
    const everything = isPath
      ? matches(`${base}/entry`) && matches(`${base}/dir/entry.ext`)
      : matches("entry") && matches("entry.ext") && matches(".hidden");
    const gitDir = isPath ? [`${base}/.git`, `${base}/.git/config`, `${base}/sub/.git`].some(matches) : matches(".git");
    if (!negated && !everything) restricted = true;
    if (!negated && gitDir) selectsGitDir = true;
  }
  return { restricted, selectsGitDir };
}

/**
 * `find … -delete`, `-exec rm`: a recursive delete of its roots, narrowed by its filters. The
 * caller says which exec blocks delete the entries they are given (it unwraps `sudo`, `env`,
 * `busybox`, … and reads `sh -c` scripts).
 */
export function analyseFind(
  args: readonly ShellWord[],
  command: string,
  context: PathContext,
  execDeletes: (exec: FindExec) => boolean,
): DestructiveFinding[] {
  const expression = parseFindExpression(args);
  const deletingExecs = new Set(
    expression.execs.flatMap((exec, index) => (execDeletes(exec) ? [`-exec#${index}`] : [])),
  );
  const isAction = (token: ShellWord): boolean =>
    !token.dynamic && !FILTER_VALUES.has(token) && (token.text === "-delete" || deletingExecs.has(token.text));
  if (!expression.tokens.some(isAction)) return [];
  const findings: DestructiveFinding[] = [];
  for (const root of expression.roots) {
    const verdict = branchVerdict(expression.tokens, isAction, root.text);
    if (verdict === undefined) continue;
    const deleted = judgeDelete(root, true, verdict.restricted, context);
    if (deleted !== undefined)
      findings.push({
        ruleId: deleted.ruleId,
        command,
        path: deleted.path,
        detail: `find deletes under ${deleted.path}`,
      });
    if (verdict.selectsGitDir && !root.dynamic) {
      const gitDir = judgeDelete(
        { text: `${root.text.replace(/\/+$/, "")}/.git`, dynamic: false },
        true,
        false,
        context,
      );
      if (gitDir !== undefined && gitDir.ruleId !== deleted?.ruleId)
        findings.push({
          ruleId: gitDir.ruleId,
          command,
          path: gitDir.path,
          detail: `find selects and deletes .git under ${root.text}`,
        });
    }
  }
  return findings;
}

/** The filters of a whole find expression (for `find … | xargs rm`, which deletes what find prints). */
export function findFilters(args: readonly ShellWord[], root: string): BranchVerdict {
  return readFilters(parseFindExpression(args).tokens, root);
}
