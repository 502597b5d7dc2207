import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/*
 * What both forms of the hook share without loading the analyser: the settings that decide an
 * answer, and the file by which a warm server (`--listen`) lets the command form find it. This
 * module imports nothing heavy, so that a forwarded call costs little more than a Node start.
 */

/**
 * Tools whose input carries a shell command line (`command` or `cmd`), as `*`-globs over tool
 * names: Claude Code's Bash and the usual names of MCP shell tools (`mcp__<server>__<tool>`).
 * `--shell-tools` replaces the list.
 */
export const DEFAULT_SHELL_TOOLS: readonly string[] = [
  "Bash",
  "mcp__*__bash",
  "mcp__*__shell",
  "mcp__*__sh",
  "mcp__*__run",
  "mcp__*__exec",
  "mcp__*__execute",
  "mcp__*__terminal",
  "mcp__*__*_command",
  "mcp__*__*_shell",
  "mcp__*__*_bash",
];

/** What an undecided verdict becomes (`--on-undecided`). */
export type UndecidedPolicy = "ask" | "deny" | "allow";

/** What a call that would repeat a failing operation is answered (`--loop-guard`); off by default. */
export type LoopGuardMode = "off" | "ask" | "deny";

/**
 * Failures of one operation after which the loop guard stops the next attempt (`--loop-guard-after`):
 * the run monitor's `loop.failingOperationRepeats` default, written here so that the command form
 * does not load the tripwire configuration (a unit test keeps the two equal).
 */
export const DEFAULT_LOOP_GUARD_AFTER = 4;
/** At least 2 (as the run monitor's rule), at most the loop detector's default window of 64 calls. */
export const LOOP_GUARD_AFTER_RANGE = { min: 2, max: 64 } as const;

/** The flags that decide a call's answer; a command form forwards only to a server with the same. */
export interface HookSettings {
  readonly deadlineMs: number;
  readonly onUndecided: UndecidedPolicy;
  readonly loopGuard: LoopGuardMode;
  readonly loopGuardAfter: number;
  readonly shellTools: readonly string[];
  readonly maxBodyBytes: number;
}

/** A running warm server as its discovery file describes it. */
export interface ServerEntry extends HookSettings {
  readonly url: string;
  readonly pid: number;
}

/** The hook's local state: the spool of facts, the decision log and the server file. */
export function defaultSpoolDir(env: NodeJS.ProcessEnv = process.env): string {
  return env["AGENTOPS_SPOOL_DIR"] ?? join(env["HOME"] ?? homedir(), ".agentops", "spool");
}

/** Larger than any entry a server writes; a bigger file is not read. */
const MAX_ENTRY_BYTES = 64 * 1024;

export function serverFilePath(spoolDir: string): string {
  return join(spoolDir, "hook-server.json");
}

export function writeServerFile(spoolDir: string, entry: ServerEntry): void {
  mkdirSync(spoolDir, { recursive: true });
  writeFileSync(serverFilePath(spoolDir), `${JSON.stringify(entry)}\n`, { mode: 0o600 });
}

/** Removes the file if it still names this server (a newer server may have replaced it). */
export function removeServerFile(spoolDir: string, url: string): void {
  if (readServerFile(spoolDir)?.url === url) rmSync(serverFilePath(spoolDir), { force: true });
}

/** The server entry of the spool, or undefined when there is none or it is not one a server wrote. */
export function readServerFile(spoolDir: string): ServerEntry | undefined {
  let value: unknown;
  try {
    const text = readFileSync(serverFilePath(spoolDir), "utf8");
    if (text.length > MAX_ENTRY_BYTES) return undefined;
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isServerEntry(value) ? value : undefined;
}

/** Calls are forwarded only to this machine: a server file naming another host is not followed. */
const LOOPBACK_SERVER_URL = /^http:\/\/(?:127(?:\.\d{1,3}){3}|localhost|\[::1\]):\d{1,5}\/$/;

function isServerEntry(value: unknown): value is ServerEntry {
  if (typeof value !== "object" || value === null) return false;
  const entry = value as Record<string, unknown>;
  const tools = entry["shellTools"];
  return (
    typeof entry["url"] === "string" &&
    LOOPBACK_SERVER_URL.test(entry["url"]) &&
    Number.isInteger(entry["pid"]) &&
    Number.isInteger(entry["deadlineMs"]) &&
    Number.isInteger(entry["maxBodyBytes"]) &&
    (entry["onUndecided"] === "ask" || entry["onUndecided"] === "deny" || entry["onUndecided"] === "allow") &&
    (entry["loopGuard"] === "off" || entry["loopGuard"] === "ask" || entry["loopGuard"] === "deny") &&
    Number.isInteger(entry["loopGuardAfter"]) &&
    Array.isArray(tools) &&
    tools.every((tool) => typeof tool === "string")
  );
}

/** Whether a server answers as these flags would. */
export function sameSettings(a: HookSettings, b: HookSettings): boolean {
  return (
    a.deadlineMs === b.deadlineMs &&
    a.onUndecided === b.onUndecided &&
    a.loopGuard === b.loopGuard &&
    a.loopGuardAfter === b.loopGuardAfter &&
    a.maxBodyBytes === b.maxBodyBytes &&
    a.shellTools.length === b.shellTools.length &&
    a.shellTools.every((tool, i) => tool === b.shellTools[i])
  );
}
