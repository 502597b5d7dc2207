import { classifyPath, resolvePath, type PathContext } from "./path-resolution.ts";

/**
 * Decides whether writing one file (a redirect, a file_write event, Claude Code's Write or Edit)
 * replaces what the machine or an account runs on: a file under a system directory of programs
 * and configuration, or a home's shell start-up or SSH files. Writes inside the workspace never are.
 */
const SYSTEM_FILE_DIRECTORIES = /^\/(etc|boot|usr|bin|sbin|lib|lib32|lib64)\//;
const HOME = /^(~|\/root|\/home\/[^/]+|\/Users\/[^/]+)\//;
const START_UP = /^(\.ssh\/[^/]+|\.bashrc|\.bash_profile|\.bash_login|\.profile|\.zshrc|\.zprofile|\.zshenv|\.zlogin)$/;

export function judgeWrite(raw: string, context: PathContext): { readonly path: string } | undefined {
  const pathClass = classifyPath(raw, context);
  if (pathClass === "inside-workspace" || pathClass === "workspace-root" || pathClass === "scratch") return undefined;
  const path = resolvePath(raw, context) ?? raw;
  const home = context.home !== undefined && path.startsWith(`${context.home}/`) ? context.home : HOME.exec(path)?.[1];
  const inHome = home === undefined ? undefined : path.slice(home.length + 1);
  return SYSTEM_FILE_DIRECTORIES.test(path) || (inHome !== undefined && START_UP.test(inHome)) ? { path } : undefined;
}
