import { posix } from "node:path";
import type { DestructiveRuleId } from "../rules/rule-definition.ts";
import { classifyPath, resolvePath, type PathClass, type PathContext } from "./path-resolution.ts";
import type { ShellWord } from "./parsed-shell.ts";

/**
 * Decides which rule (if any) deleting one target violates. Shared by `rm`, `find -delete`,
 * `xargs rm` and `file_delete` events so that "what is a dangerous delete" lives in one place.
 */
export interface DeleteVerdict {
  readonly ruleId: DestructiveRuleId;
  readonly path: string;
}

const GLOB = /[*?[]/;
/** A component that matches every entry of its directory: the directory's contents go. */
const MATCHES_EVERYTHING = new Set(["*", ".*", "*.*", "{*,.*}", ".[!.]*"]);

export function judgeDelete(
  target: ShellWord,
  recursive: boolean,
  filtered: boolean,
  context: PathContext,
): DeleteVerdict | undefined {
  if (target.dynamic) return judgeDynamicDelete(target.text, recursive, context);
  const { pathClass, path } = classifyTarget(target.text, context);
  return verdictFor(pathClass, path, recursive, filtered);
}

/** A path that is already known (file_delete events): the same rules, non-recursive by default. */
export function judgeDeletedPath(path: string, recursive: boolean, context: PathContext): DeleteVerdict | undefined {
  return verdictFor(classifyPath(path, context), resolvePath(path, context) ?? path, recursive, false);
}

function classifyTarget(text: string, context: PathContext): { pathClass: PathClass; path: string } {
  const components = text.split("/");
  const globAt = components.findIndex((component) => GLOB.test(component));
  if (globAt === -1) return { pathClass: classifyPath(text, context), path: resolvePath(text, context) ?? text };
  const directory = components.slice(0, globAt).join("/") || (text.startsWith("/") ? "/" : ".");
  const isLast = globAt === components.length - 1 || (globAt === components.length - 2 && components.at(-1) === "");
  // `dir/*` empties dir (judge as dir); `dir/*.log` or `dir/*/x` removes entries inside it.
  const judged =
    isLast && MATCHES_EVERYTHING.has(components[globAt] ?? "")
      ? directory
      : `${directory}/${components[globAt] ?? "entry"}`;
  return { pathClass: classifyPath(judged, context), path: resolvePath(judged, context) ?? judged };
}

function verdictFor(
  pathClass: PathClass,
  path: string,
  recursive: boolean,
  filtered: boolean,
): DeleteVerdict | undefined {
  if (/\.lock$/.test(path) && !recursive) return undefined; // stale lock files are removed by hand routinely
  switch (pathClass) {
    case "root":
    case "home":
      return recursive ? { ruleId: "fs-delete-critical-path", path } : undefined;
    case "system":
    case "home-config":
      return { ruleId: "fs-delete-critical-path", path };
    case "workspace-root":
      return recursive && !filtered ? { ruleId: "fs-delete-workspace-root", path } : undefined;
    case "git-dir":
      return recursive ? { ruleId: "fs-delete-git-dir", path } : undefined;
    case "outside-workspace":
      return { ruleId: "fs-delete-outside-workspace", path };
    case "inside-workspace":
    case "scratch":
    case "unknown":
      return undefined;
  }
}

/**
 * Variables that name the session's temporary directory by convention. Below them is scratch, as
 * below /tmp. Their value is not known (on macOS $TMPDIR is /var/folders/…/T), so `..` that climbs
 * out of them leads somewhere unknown.
 */
const SCRATCH_VARIABLE =
  /^\$(?:\{(TMPDIR|TMP|TEMP|RUNNER_TEMP)(?:(:?[-=?+])([^}]*))?\}|(TMPDIR|TMP|TEMP|RUNNER_TEMP)(?![A-Za-z0-9_]))/;
/** Any parameter expansion or command substitution left in a dynamic word. */
const EXPANSION = /\$(\{[^}]*\}|\([^)]*\)|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])|`[^`]*`/g;
/** What `rm -rf` of these deletes is the directory itself or everything in it. */
const ROOT_WHEN_EMPTY = new Set(["/", "/*", "/.*", "/*.*", "/{*,.*}"]);

function judgeDynamicDelete(text: string, recursive: boolean, context: PathContext): DeleteVerdict | undefined {
  if (!recursive) return undefined;
  const scratch = SCRATCH_VARIABLE.exec(text);
  if (scratch !== null) return judgeScratchVariableDelete(text, scratch);
  // `node_modules/$pkg`, `./build/${x}`: a static directory prefix inside the workspace bounds the damage.
  const expansionAt = text.search(/[$`]/);
  const staticPrefix = text.slice(0, expansionAt === -1 ? text.length : expansionAt);
  const directory = staticPrefix.slice(0, staticPrefix.lastIndexOf("/") + 1);
  if (directory !== "" && directory !== "/" && !/^\.?\/?$/.test(directory)) {
    const pathClass = classifyPath(`${directory}entry`, context);
    if (pathClass === "inside-workspace" || pathClass === "scratch") return undefined;
    const bounded = verdictFor(pathClass, resolvePath(`${directory}entry`, context) ?? directory, recursive, false);
    if (bounded !== undefined) return bounded;
  }
  return { ruleId: "fs-delete-dynamic-target", path: text };
}

/**
 * `rm -rf "$TMPDIR/x"` is scratch and quiet. It warns (dynamic target) when the path climbs out
 * of the variable (`$TMPDIR/../etc`), or when an unset variable would leave `/` or `/*`
 * (`"$TMPDIR/"`, `"$TMPDIR"/*`), unless `${TMPDIR:?}`, `${TMPDIR:-/tmp}` rule the empty value out.
 * Other unknown variables inside the rest count as one path component.
 */
function judgeScratchVariableDelete(text: string, scratch: RegExpExecArray): DeleteVerdict | undefined {
  const rest = text.slice(scratch[0].length);
  const operator = scratch[2];
  const guardedAgainstEmpty =
    operator === ":?" || operator === "?" || ((operator === ":-" || operator === ":=") && (scratch[3] ?? "") !== "");
  const warning: DeleteVerdict = { ruleId: "fs-delete-dynamic-target", path: text };
  if (!guardedAgainstEmpty && ROOT_WHEN_EMPTY.has(posix.normalize(rest.replace(EXPANSION, "") || "."))) return warning;
  const inside = posix.normalize(`/scratch/${rest.replace(EXPANSION, "component")}`);
  return inside === "/scratch" || inside.startsWith("/scratch/") ? undefined : warning;
}
