import { basename } from "node:path";
import { parseJsonFile, type FormatImporter } from "./importer.ts";
import { asRecord, asString, contentRunId, derivedTime, RunBuilder, type SandboxAction } from "./run-builder.ts";

/**
 * SWE-agent trajectories (`*.traj`, JSON): `trajectory` is the list of steps, each with
 * `thought`, `action` (the command line the agent issued: a SWE-agent tool such as `open`,
 * `edit`, `str_replace_editor`, `submit`, or a shell command), `observation` and `state` (JSON
 * text with `open_file` and `working_dir`). There is no per-step time and no exit code:
 * - event_time = the file's modification time + the step index in ms, provenance DERIVED;
 * - status = error only when the observation starts with a SWE-agent tool's error form
 *   (ERROR_OBSERVATIONS below, data); otherwise absent (unknown), never guessed to be ok.
 * Token usage exists only as run totals (`info.model_stats`): no model_call is made from it.
 */
const TOOLS = new Set([
  "open",
  "goto",
  "scroll_up",
  "scroll_down",
  "create",
  "edit",
  "insert",
  "append",
  "search_dir",
  "search_file",
  "find_file",
  "submit",
  "str_replace_editor",
  "filemap",
  "view_image",
  "exit_forfeit",
  "skip",
]);
const FILE_WRITE_TOOLS = new Set(["create", "edit", "insert", "append"]);
const FILE_READ_TOOLS = new Set(["open", "goto"]);

/** Observations that SWE-agent's tools print when the action failed. */
export const SWE_AGENT_ERROR_OBSERVATIONS: readonly RegExp[] = [
  /^Your proposed edit has introduced new syntax error/m,
  /^Usage: /,
  /^(?:bash: )?[\w./-]+: command not found/m,
  /^Error: /,
  /^Traceback \(most recent call last\):/m,
];

export const sweAgentImporter: FormatImporter = {
  format: "swe-agent",
  filePattern: /\.traj$/,
  description: "SWE-agent trajectories (*.traj)",
  importFile(file, options, unmapped) {
    const parsed = parseJsonFile(file.text, unmapped);
    if (parsed === undefined) return [];
    const steps = asRecord(parsed)?.["trajectory"];
    if (!Array.isArray(steps) || steps.length === 0) {
      unmapped.add("file without trajectory steps");
      return [];
    }
    const run = new RunBuilder("swe-agent", contentRunId(basename(file.path, ".traj"), file.text), options);
    steps.forEach((value: unknown, index) => {
      const step = asRecord(value);
      const time = derivedTime(file.mtimeMs, index);
      const action = asString(step?.["action"])?.trim() ?? "";
      if (step === undefined || action === "") {
        const thought = asString(step?.["thought"]) ?? asString(step?.["response"]) ?? "";
        if (thought.trim() === "") unmapped.add("step without action or thought");
        else run.message({ time, actor: "assistant", text: thought });
        return;
      }
      const state = parseState(step["state"]);
      const firstWord = /^\S+/.exec(action)?.[0] ?? "";
      const tool = TOOLS.has(firstWord) ? firstWord : "bash";
      const observation = asString(step["observation"]);
      const failed =
        observation !== undefined && SWE_AGENT_ERROR_OBSERVATIONS.some((pattern) => pattern.test(observation))
          ? true
          : undefined;
      run.toolCall({
        time,
        actor: "assistant",
        tool,
        args: { command: action },
        observation,
        failed,
        sandbox: sandboxAction(tool, action, state),
      });
    });
    if (asRecord(asRecord(parsed)?.["info"])?.["model_stats"] !== undefined)
      unmapped.add("token usage only as run totals (info.model_stats), no model_call");
    return [run];
  },
};

function parseState(state: unknown): { openFile: string | undefined; workingDir: string | undefined } {
  let record = asRecord(state);
  if (typeof state === "string") {
    try {
      record = asRecord(JSON.parse(state));
    } catch {
      record = undefined;
    }
  }
  const openFile = asString(record?.["open_file"]);
  return { openFile: openFile === "n/a" ? undefined : openFile, workingDir: asString(record?.["working_dir"]) };
}

function sandboxAction(
  tool: string,
  action: string,
  state: { openFile: string | undefined; workingDir: string | undefined },
): SandboxAction | undefined {
  if (tool === "bash") return { kind: "exec", command: action, cwd: state.workingDir };
  const argument = /^\S+\s+(\S+)/.exec(action)?.[1];
  if (tool === "str_replace_editor") {
    const [, subcommand, path] = /^str_replace_editor\s+(\S+)\s+(\S+)/.exec(action) ?? [];
    if (path === undefined) return undefined;
    return { kind: subcommand === "view" ? "file_read" : "file_write", path, cwd: state.workingDir };
  }
  if (FILE_WRITE_TOOLS.has(tool)) {
    const path = tool === "create" ? argument : state.openFile;
    return path === undefined ? undefined : { kind: "file_write", path, cwd: state.workingDir };
  }
  if (FILE_READ_TOOLS.has(tool)) {
    const path = tool === "open" ? argument?.replace(/^"|"$/g, "") : state.openFile;
    return path === undefined ? undefined : { kind: "file_read", path, cwd: state.workingDir };
  }
  return undefined;
}
