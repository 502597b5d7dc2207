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
  | "home" // the home directory itself (the run's, or any user's: /home/<u>, /Users/<u>, /root)
  | "home-config" // a home directory's own login, shell and key files (~/.ssh, ~/.bashrc, ~/.config, ...)
  | "system" // a top-level system directory (/etc, /usr, ...) or something under it
  | "workspace-root" // the workspace root itself
  | "git-dir" // a `.git` directory or anything inside one
  | "inside-workspace"
  | "scratch" // /tmp, /var/tmp and below: throw-away by convention
  | "outside-workspace" // known to be outside the workspace (or under home)
  | "unknown"; // relative path with no cwd, or no workspace to compare with

const SYMBOLIC_HOME = "~";
const SYSTEM_DIRECTORIES = [
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/lib",
  "/lib32",
  "/lib64",
  "/opt",
  "/proc",
  "/sbin",
  "/srv",
  "/sys",
  "/usr",
  "/var",
  "/root",
  "/home",
  "/Users",
  "/System",
  "/Library",
  "/Applications",
  "/snap",
  "/mnt",
  "/media",
];
const SCRATCH_DIRECTORIES = ["/tmp", "/var/tmp", "/dev/shm"];
/** Home directories known by their place, whoever the run's user is. */
const HOME_DIRECTORY = /^(?:\/home\/[^/]+|\/Users\/[^/]+|\/root|\/var\/root)(?=\/|$)/;
/**
 * Entries of a home directory that hold the user's keys, login and shell start-up and tool
 * configuration: losing or rewriting one breaks logins or hands over the account. Caches
 * (`~/.cache`, `~/.pylint.d`) and projects under home are not among them.
 */
const HOME_CONFIG_ENTRIES = new Set([
  ...[".ssh", ".gnupg", ".password-store", ".gitconfig", ".config", ".local", ".inputrc"],
  ...[".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".kshrc", ".cshrc", ".tcshrc"],
  ...[".zshrc", ".zprofile", ".zshenv", ".zlogin"],
  ...[".aws", ".kube", ".docker", ".netrc", ".git-credentials", ".pgpass"],
]);
/** Below these entries every file is the user's secret material, not only the entry itself. */
const HOME_SECRET_DIRECTORIES = new Set([".ssh", ".gnupg", ".password-store"]);

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
  if (normalised.startsWith("/__home__/"))
    return SYMBOLIC_HOME + normalised.slice("/__home__".length).replace(/\/$/, "");
  return normalised.replace(/\/$/, "") || "/";
}

function isUnder(path: string, directory: string): boolean {
  return path === directory || path.startsWith(directory === "/" ? "/" : `${directory}/`);
}

export function classifyPath(raw: string, context: PathContext): PathClass {
  const path = resolvePath(raw, context);
  if (path === undefined) return "unknown";
  const workspace =
    context.workspaceRoot === undefined
      ? undefined
      : resolvePath(context.workspaceRoot, { ...context, cwd: undefined });
  if (path === "/") return "root";
  if (/(^|\/)\.git(\/|$)/.test(path)) return "git-dir";
  if (workspace !== undefined && path === workspace) return "workspace-root";
  if (workspace !== undefined && isUnder(path, workspace)) return "inside-workspace";
  const inHome = homeEntry(path, context);
  if (inHome !== undefined) {
    if (inHome.rest === "") return "home";
    const [entry = "", ...below] = inHome.rest.split("/");
    const configEntry = HOME_CONFIG_ENTRIES.has(entry) && (below.length === 0 || HOME_SECRET_DIRECTORIES.has(entry));
    if (configEntry) return "home-config";
    // Without a workspace, a path under home may well be the project itself: we cannot say.
    return workspace === undefined ? "unknown" : "outside-workspace";
  }
  if (SCRATCH_DIRECTORIES.some((directory) => isUnder(path, directory))) return "scratch";
  if (SYSTEM_DIRECTORIES.some((directory) => isUnder(path, directory))) return "system";
  return workspace === undefined ? "unknown" : "outside-workspace";
}
/**
 * The home directory a resolved path lies in (the run's home, symbolic `~`, or any user's home by
 * its place) and the path below it (`""` for the home itself).
 */
export function homeEntry(
  path: string,
  context: PathContext,
): { readonly home: string; readonly rest: string } | undefined {
  const homes = [context.home ?? SYMBOLIC_HOME, SYMBOLIC_HOME, HOME_DIRECTORY.exec(path)?.[0]];
  for (const home of homes) {
    if (home === undefined || !isUnder(path, home)) continue;
    return { home, rest: path.slice(home.length).replace(/^\//, "") };
  }
  return undefined;
}

/** Top-level directories where a world-writable or ownership change breaks the machine. */
export function isSystemPath(raw: string, context: PathContext): boolean {
  const cls = classifyPath(raw, context);
  return cls === "root" || cls === "system" || cls === "home" || cls === "home-config";
}
