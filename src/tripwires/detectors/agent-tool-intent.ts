import type { TripwireConfig } from "../config.ts";

/**
 * What an agent's tool call asks for, read from its tool name and canonical-JSON input: the
 * shell command line of a shell tool (tool names are configuration, `agentTools.shell`), or the
 * file a file tool touches. Agent-only logs (transcripts, trajectories) have nothing else.
 */
export interface AgentToolIntent {
  readonly command: string | undefined;
  readonly path: string | undefined;
  /** An edit tool (not in its read-only `view` form): the call changes files. */
  readonly editsFiles: boolean;
}

const NONE: AgentToolIntent = { command: undefined, path: undefined, editsFiles: false };

export function agentToolIntent(tool: string, input: string | undefined, config: TripwireConfig["agentTools"]): AgentToolIntent {
  const shell = config.shell.includes(tool);
  const edit = config.edit.includes(tool);
  if ((!shell && !edit) || input === undefined) return edit ? { ...NONE, editsFiles: true } : NONE;
  let args: unknown;
  try {
    args = JSON.parse(input);
  } catch {
    return { ...NONE, editsFiles: edit };
  }
  const record = typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  if (shell) return { command: shellCommandOf(record), path: undefined, editsFiles: false };
  const path = [record["file_path"], record["path"], record["notebook_path"]].find((value): value is string => typeof value === "string");
  return { command: undefined, path, editsFiles: record["command"] !== "view" };
}

/** The command text of a shell tool call's arguments: `command`/`cmd` as a string or an argv. */
export function shellCommandOf(args: unknown): string | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const record = args as Record<string, unknown>;
  const value = record["command"] ?? record["cmd"];
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.length > 0 && value.every((part) => typeof part === "string")) {
    const argv = value as string[];
    // `["bash", "-lc", "script"]` is how Codex runs a script: the script is the command.
    if (argv.length === 3 && /(^|\/)(ba|z|da)?sh$/.test(argv[0] ?? "") && /^-l?c$/.test(argv[1] ?? "")) return argv[2];
    return argv.map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`)).join(" ");
  }
  return undefined;
}

/**
 * Whether the command's exit status is that of a "no match" command (grep, test, diff, …): the
 * last command of the line, after the last top-level `;`, `&&`, `||`, `|` or newline (quoted text
 * is ignored when splitting), with leading `VAR=value` assignments and `!` skipped. Such a
 * command exits 1 for "nothing found" or "false", which is an answer, not a failure.
 */
export function endsWithNoMatchCommand(command: string, noMatchCommands: readonly string[]): boolean {
  const unquoted = command.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, "''");
  const segments = unquoted.split(/;|&&|\|\||\||\n/);
  let last = "";
  for (let index = segments.length - 1; index >= 0; index--) {
    const segment = (segments[index] ?? "").trim();
    if (segment !== "") {
      last = segment;
      break;
    }
  }
  const words = last.split(/\s+/).filter((word) => word !== "" && word !== "!" && !/^[A-Za-z_]\w*=/.test(word));
  const name = (words[0] ?? "").replace(/^.*\//, "");
  const withSub = `${name} ${words[1] ?? ""}`;
  return noMatchCommands.includes(name) || noMatchCommands.includes(withSub);
}
