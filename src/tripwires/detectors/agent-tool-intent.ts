import { hash53 } from "../action-identity.ts";
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

export function agentToolIntent(
  tool: string,
  input: string | undefined,
  config: TripwireConfig["agentTools"],
): AgentToolIntent {
  const shell = config.shell.includes(tool);
  const edit = config.edit.includes(tool);
  if ((!shell && !edit) || input === undefined) return edit ? { ...NONE, editsFiles: true } : NONE;
  let args: unknown;
  try {
    args = JSON.parse(input);
  } catch {
    return { ...NONE, editsFiles: edit };
  }
  const record =
    typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  if (shell) return { command: shellCommandOf(record), path: undefined, editsFiles: false };
  const path = [record["file_path"], record["path"], record["notebook_path"]].find(
    (value): value is string => typeof value === "string",
  );
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
  const words = finalCommandWords(command);
  const name = words[0] ?? "";
  const withSub = `${name} ${words[1] ?? ""}`;
  return noMatchCommands.includes(name) || noMatchCommands.includes(withSub);
}

/**
 * The words of the line's last command, after the last top-level `;`, `&&`, `||`, `|` or newline
 * (quoted text is ignored when splitting and reads as `''`), with leading `VAR=value` assignments
 * and `!` skipped and the command name reduced to its basename.
 */
function finalCommandWords(command: string): string[] {
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
  if (words.length > 0) words[0] = (words[0] ?? "").replace(/^.*\//, "");
  return words;
}

/**
 * What a state-changing tool call operates on, for loop-failing-operation: the file of a file
 * tool (the empty target when the tool edits the open file, as SWE-agent's `edit` does), or a
 * shell command's program and first operand (`python reproduce.py`, `git apply`, `patch`). Two
 * calls with different inputs and the same target are attempts at the same operation.
 */
export function operationTarget(intent: AgentToolIntent): string | undefined {
  if (intent.command !== undefined) {
    const [program = "", ...rest] = finalCommandWords(intent.command);
    const operand = rest.find((word) => !word.startsWith("-") && !/^\d*[<>]/.test(word));
    return operand === undefined ? program : `${program} ${operand}`;
  }
  return intent.editsFiles ? (intent.path ?? "") : undefined;
}

/** The 53-bit identity of a tool call's operation (tool + operationTarget); 0 when it has none. */
export function operationIdentity(tool: string, intent: AgentToolIntent): number {
  const target = operationTarget(intent);
  return target === undefined ? 0 : hash53(`${tool}\u0000${target}`, 1);
}
