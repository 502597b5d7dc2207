import { posix } from "node:path";

/**
 * Where a command runs, as far as the event tells. `home` is the run's home directory when known;
 * when it is not, `~` stays a symbolic home (`~`), which still classifies as "home" and as outside
 * the workspace.
 */
export interface PathContext {
  readonly cwd: string | undefined;
  readonly workspaceRoot: string | undefined;
  readonly home: string | undefined;
}

export type PathClass =
  | "root" // `/` itself
  | "home" // the home directory itself
  | "system" // a top-level system directory (/etc, /usr, ...) or something under it
  | "workspace-root" // the workspace root itself
  | "git-dir" // a `.git` directory or anything inside one
  | "inside-workspace"
  | "scratch" // /tmp, /var/tmp and below: throw-away by convention
  | "outside-workspace" // known to be outside the workspace (or under home)
  | "unknown"; // relative path with no cwd, or no workspace to compare with

const SYMBOLIC_HOME = "~";
const SYSTEM_DIRECTORIES = ["/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/opt", "/proc", "/sbin", "/srv", "/sys", "/usr", "/var", "/root", "/home", "/Users", "/System", "/Library", "/Applications", "/snap", "/mnt", "/media"];
const SCRATCH_DIRECTORIES = ["/tmp", "/var/tmp", "/dev/shm"];

/**
 * Resolves a path word to an absolute, normalised path (`..` collapsed), or to a `~`-rooted path
 * when home is unknown. Returns undefined for a relative path without a cwd.
 */
export function resolvePath(raw: string, context: PathContext): string | undefined {
  let path = raw;
  if (path === "~" || path.startsWith("~/")) path = (context.home ?? SYMBOLIC_HOME) + path.slice(1);
  if (path.startsWith(SYMBOLIC_HOME)) return normaliseSymbolic(path);
  if (!path.startsWith("/")) {
    const base = context.cwd === undefined ? undefined : resolvePath(context.cwd, { ...context, cwd: undefined });
    if (base === undefined) return undefined;
    if (base.startsWith(SYMBOLIC_HOME)) return normaliseSymbolic(`${base}/${path}`);
    path = `${base}/${path}`;
  }
  const normalised = posix.normalize(path);
  return normalised.length > 1 && normalised.endsWith("/") ? normalised.slice(0, -1) : normalised;
}

function normaliseSymbolic(path: string): string {
  // Normalise as if home were a directory one level below a sentinel, so `~/..` stays above home.
  const normalised = posix.normalize(`/__home__${path.slice(1)}`);
  if (normalised === "/__home__" || normalised === "/__home__/") return SYMBOLIC_HOME;
  if (normalised.startsWith("/__home__/")) return SYMBOLIC_HOME + normalised.slice("/__home__".length).replace(/\/$/, "");
  return normalised.replace(/\/$/, "") || "/";
}

function isUnder(path: string, directory: string): boolean {
  return path === directory || path.startsWith(directory === "/" ? "/" : `${directory}/`);
}

export function classifyPath(raw: string, context: PathContext): PathClass {
  const path = resolvePath(raw, context);
  if (path === undefined) return "unknown";
  const home = context.home ?? SYMBOLIC_HOME;
  const workspace = context.workspaceRoot === undefined ? undefined : resolvePath(context.workspaceRoot, { ...context, cwd: undefined });
  if (path === "/") return "root";
  if (/(^|\/)\.git(\/|$)/.test(path)) return "git-dir";
  if (workspace !== undefined && path === workspace) return "workspace-root";
  if (workspace !== undefined && isUnder(path, workspace)) return "inside-workspace";
  if (path === home || path === SYMBOLIC_HOME) return "home";
  if (SCRATCH_DIRECTORIES.some((directory) => isUnder(path, directory))) return "scratch";
  // Without a workspace, a path under home may well be the project itself: we cannot say.
  if (path.startsWith(SYMBOLIC_HOME) || isUnder(path, home)) return workspace === undefined ? "unknown" : "outside-workspace";
  if (SYSTEM_DIRECTORIES.some((directory) => isUnder(path, directory))) return "system";
  return workspace === undefined ? "unknown" : "outside-workspace";
}
/** Top-level directories where a world-writable or ownership change breaks the machine. */
export function isSystemPath(raw: string, context: PathContext): boolean {
  const cls = classifyPath(raw, context);
  return cls === "root" || cls === "system" || cls === "home";
}
