import { basename } from "node:path";
import { parseJsonLine, type FormatImporter, type Unmapped } from "./importer.ts";
import {
  asCount,
  asRecord,
  asString,
  contentRunId,
  logTime,
  RunBuilder,
  textOf,
  type SandboxAction,
  type StepTime,
} from "./run-builder.ts";
import { shellCommandOf } from "../../tripwires/detectors/agent-tool-intent.ts";

/**
 * OpenAI Codex CLI session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): one
 * `{timestamp, type, payload}` a line. `session_meta` names the session (the run) and its cwd;
 * `turn_context` the model; `response_item` payloads are messages, `function_call` /
 * `custom_tool_call` / `local_shell_call` (matched to their `*_output` by `call_id`) and
 * `reasoning`; `event_msg` of type `token_count` carries the last call's token usage. The older
 * form without the envelope (payload fields at the top level, a first line `{id, timestamp}`) is
 * read too.
 */
const SHELL_FUNCTIONS = new Set(["shell", "container.exec", "local_shell", "exec_command", "shell_command"]);
const RESPONSE_ITEM_TYPES = new Set([
  "message",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "reasoning",
]);

interface Line {
  readonly type: string;
  readonly payload: Record<string, unknown>;
  readonly time: StepTime | undefined;
}

export const codexImporter: FormatImporter = {
  format: "codex",
  filePattern: /\.jsonl$/,
  description: "OpenAI Codex CLI session rollouts (~/.codex/sessions/**/rollout-*.jsonl)",
  importFile(file, options, unmapped) {
    const lines: Line[] = [];
    for (const text of file.text.split("\n")) {
      if (text.trim() === "") continue;
      const record = asRecord(parseJsonLine(text, unmapped));
      if (record === undefined) continue;
      const payload = asRecord(record["payload"]);
      const type = asString(record["type"]);
      if (payload !== undefined && type !== undefined)
        lines.push({ type, payload, time: logTime(record["timestamp"] ?? payload["timestamp"]) });
      else if (type !== undefined && RESPONSE_ITEM_TYPES.has(type))
        lines.push({ type: "response_item", payload: record, time: logTime(record["timestamp"]) });
      else if (asString(record["id"]) !== undefined && lines.length === 0)
        lines.push({ type: "session_meta", payload: record, time: logTime(record["timestamp"]) });
      else unmapped.add(`line type "${type ?? "none"}"`);
    }
    const meta = lines.find((line) => line.type === "session_meta")?.payload;
    const runId = asString(meta?.["id"]) ?? contentRunId(basename(file.path, ".jsonl"), file.text);
    const run = new RunBuilder("codex", runId, options);
    const outputs = new Map<string, string>();
    for (const line of lines) {
      const callId = asString(line.payload["call_id"]);
      if (
        callId !== undefined &&
        (line.payload["type"] === "function_call_output" || line.payload["type"] === "custom_tool_call_output")
      )
        outputs.set(callId, outputText(line.payload["output"]));
    }
    let cwd = asString(meta?.["cwd"]);
    let model: string | undefined;
    let lastTime: StepTime = { millis: file.mtimeMs, direct: false };
    let tokenEvents = 0;
    for (const line of lines) {
      const time = line.time ?? { millis: lastTime.millis + 1, direct: false };
      lastTime = time;
      const payload = line.payload;
      if (line.type === "turn_context") {
        model = asString(payload["model"]) ?? model;
        cwd = asString(payload["cwd"]) ?? cwd;
        continue;
      }
      if (line.type === "session_meta") continue;
      if (line.type === "event_msg") {
        if (payload["type"] === "token_count") {
          const usage = asRecord(asRecord(payload["info"])?.["last_token_usage"]);
          if (usage === undefined) continue;
          run.modelCall({
            time,
            callKey: `token_count-${tokenEvents++}`,
            provider: "openai",
            model,
            inputTokens: asCount(usage["input_tokens"]),
            outputTokens: asCount(usage["output_tokens"]),
          });
        } else {
          unmapped.add(`event_msg "${String(payload["type"])}" (mirrors a response item)`);
        }
        continue;
      }
      if (line.type !== "response_item") {
        unmapped.add(`line type "${line.type}"`);
        continue;
      }
      addResponseItem(run, payload, { time, cwd, outputs }, unmapped);
    }
    return run.steps === 0 && run.facts.length === 0 ? [] : [run];
  },
};

function addResponseItem(
  run: RunBuilder,
  item: Record<string, unknown>,
  context: { time: StepTime; cwd: string | undefined; outputs: Map<string, string> },
  unmapped: Unmapped,
): void {
  const { time } = context;
  switch (item["type"]) {
    case "message": {
      const text = textOf(item["content"]);
      if (text.trim() !== "") run.message({ time, actor: asString(item["role"]) ?? "assistant", text });
      return;
    }
    case "function_call":
    case "custom_tool_call": {
      const tool = asString(item["name"]) ?? "unknown";
      const rawArgs = item["arguments"] ?? item["input"];
      const args = parseArguments(rawArgs);
      addCall(run, tool, args, asString(item["call_id"]), context);
      return;
    }
    case "local_shell_call": {
      const action = asRecord(item["action"]);
      const args = { command: action?.["command"], workdir: action?.["working_directory"] };
      addCall(run, "local_shell", args, asString(item["call_id"]), context);
      return;
    }
    case "function_call_output":
    case "custom_tool_call_output":
      return; // read with its call
    case "reasoning":
      unmapped.add("reasoning item (not a step)");
      return;
    default:
      unmapped.add(`response item "${String(item["type"])}"`);
  }
}

function addCall(
  run: RunBuilder,
  tool: string,
  args: unknown,
  callId: string | undefined,
  context: { time: StepTime; cwd: string | undefined; outputs: Map<string, string> },
): void {
  const output = callId === undefined ? undefined : context.outputs.get(callId);
  const exitCode = output === undefined ? undefined : exitCodeOf(output);
  const record = asRecord(args);
  const workdir = asString(record?.["workdir"]) ?? context.cwd;
  let sandbox: SandboxAction | undefined;
  if (SHELL_FUNCTIONS.has(tool)) {
    const command = shellCommandOf(args);
    if (command !== undefined) sandbox = { kind: "exec", command, cwd: workdir, exitCode };
  } else if (tool === "apply_patch") {
    const patch = typeof args === "string" ? args : (asString(record?.["input"]) ?? asString(record?.["patch"]) ?? "");
    const path = /^\*\*\* (?:Update|Add|Delete) File: (.+)$/m.exec(patch)?.[1];
    if (path !== undefined) sandbox = { kind: "file_write", path: path.trim(), cwd: workdir };
  }
  const failed =
    exitCode !== undefined
      ? exitCode !== 0
      : output === undefined
        ? undefined
        : /^(error|apply_patch verification failed)/i.test(output.trim())
          ? true
          : undefined;
  run.toolCall({
    time: context.time,
    actor: "assistant",
    tool,
    args: typeof args === "string" ? { input: args } : args,
    observation: output === undefined ? undefined : stripOutputHeader(output),
    failed,
    sandbox,
  });
}

function parseArguments(raw: unknown): unknown {
  if (typeof raw !== "string") return raw ?? {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw; // a freeform tool's input (apply_patch) is text, not JSON
  }
}

/** The output of a call: a string, or `{output, metadata}` as JSON text in older rollouts. */
function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  return textOf(asRecord(output)?.["content"] ?? output);
}

/** Exit code from `{"metadata":{"exit_code":N}}`, "Exit code: N" or "Process exited with code N". */
export function exitCodeOf(output: string): number | undefined {
  try {
    const parsed = asRecord(JSON.parse(output));
    const code = asRecord(parsed?.["metadata"])?.["exit_code"];
    if (typeof code === "number") return code;
  } catch {
    // not JSON: the plain-text form
  }
  const match = /^(?:Exit code:|Process exited with code) (-?\d+)/m.exec(output);
  return match === null ? undefined : Number(match[1]);
}

/** The part of the output the command printed, without the wall-time header Codex adds. */
function stripOutputHeader(output: string): string {
  try {
    const parsed = asRecord(JSON.parse(output));
    const text = asString(parsed?.["output"]);
    if (text !== undefined) return text;
  } catch {
    // plain text
  }
  const index = output.indexOf("\nOutput:\n");
  return index === -1 ? output : output.slice(index + "\nOutput:\n".length);
}
