import { basename, dirname } from "node:path";
import { parseJsonFile, type FormatImporter, type LogFile, type Unmapped } from "./importer.ts";
import {
  asCount,
  asRecord,
  asString,
  contentRunId,
  logTime,
  RunBuilder,
  textOf,
  type ImportOptions,
  type SandboxAction,
  type StepTime,
} from "./run-builder.ts";

/**
 * OpenHands event streams (a saved trajectory: a JSON array of events, as in
 * `tests/runtime/trajs/*.json`, or `{"history"|"events": [...]}`). An event is an action
 * (`action`: message, run, read, edit, write, run_ipython, browse, finish, think, …; `args`) or
 * an observation (`observation`, `content`, `extras`, and `cause` = the id of its action). The
 * function the model called and its usage are in `tool_call_metadata` (one model response can
 * hold several actions: one model_call per response id). Timestamps have no zone: they are read
 * as UTC and flagged DERIVED.
 *
 * Also an LLM completion log (what SWE-bench submissions of OpenHands keep per instance in
 * `trajs/<instance>/*.json`): `{messages, response, fncall_messages, fncall_response, timestamp}`,
 * the last model call of a run with the whole conversation it was sent. The conversation is read
 * as OpenAI chat messages: every assistant `tool_calls` entry is a tool call, answered by the
 * `tool` message with its `tool_call_id`; the exit code is the one OpenHands appends to a command's
 * output (`[The command completed with exit code N.]`), and an editor answer starting `ERROR:` is
 * a failure. The log has no time per message: times are derived (file time + index, DERIVED).
 */
const ARG_KEYS = [
  "command",
  "code",
  "path",
  "url",
  "content",
  "old_str",
  "new_str",
  "file_text",
  "insert_line",
  "view_range",
  "start",
  "end",
  "is_input",
  "outputs",
  "task_list",
];
const NOT_STEPS = new Set(["change_agent_state", "system", "recall", "condensation", "null"]);

interface Observation {
  readonly text: string;
  readonly exitCode: number | undefined;
  readonly error: boolean;
}

export const openHandsImporter: FormatImporter = {
  format: "openhands",
  filePattern: /\.json$/,
  description: "OpenHands event streams (saved trajectories, e.g. tests/runtime/trajs/*.json)",
  importFile(file, options, unmapped) {
    const parsed = parseJsonFile(file.text, unmapped);
    if (parsed === undefined) return [];
    const root = asRecord(parsed);
    const events = Array.isArray(parsed) ? (parsed as unknown[]) : (root?.["history"] ?? root?.["events"]);
    if (!Array.isArray(events) && root !== undefined && completionMessages(root) !== undefined)
      return [importCompletionLog(file, root, options, unmapped)];
    if (!Array.isArray(events)) {
      unmapped.add("file without an event list");
      return [];
    }
    const observations = new Map<number, Observation>();
    for (const value of events) {
      const event = asRecord(value);
      const cause = event?.["cause"];
      if (event === undefined || typeof cause !== "number" || event["observation"] === undefined) continue;
      const extras = asRecord(event["extras"]);
      const exitCode = asRecord(extras?.["metadata"])?.["exit_code"] ?? extras?.["exit_code"];
      observations.set(cause, {
        text: textOf(event["content"]),
        exitCode: typeof exitCode === "number" && exitCode >= 0 ? exitCode : undefined,
        error: event["observation"] === "error",
      });
    }
    const run = new RunBuilder("openhands", contentRunId(basename(file.path, ".json"), file.text), options);
    const responses = new Set<string>();
    let last: StepTime = { millis: file.mtimeMs, direct: false };
    for (const value of events) {
      const event = asRecord(value);
      if (event === undefined) continue;
      if (event["observation"] !== undefined) continue; // read with its action
      const action = asString(event["action"]);
      if (action === undefined) {
        unmapped.add("event that is neither action nor observation");
        continue;
      }
      const time = logTime(event["timestamp"]) ?? { millis: last.millis + 1, direct: false };
      last = time;
      if (NOT_STEPS.has(action)) {
        unmapped.add(`action "${action}" (not a step)`);
        continue;
      }
      const metadata = asRecord(event["tool_call_metadata"]);
      const response = asRecord(metadata?.["model_response"]);
      const responseId = asString(response?.["id"]);
      if (response !== undefined && responseId !== undefined && !responses.has(responseId)) {
        responses.add(responseId);
        const usage = asRecord(response["usage"]);
        run.modelCall({
          time,
          callKey: responseId,
          model: asString(response["model"]),
          inputTokens: asCount(usage?.["prompt_tokens"]),
          outputTokens: asCount(usage?.["completion_tokens"]),
        });
      }
      const args = asRecord(event["args"]) ?? {};
      const actor = asString(event["source"]) === "user" ? "user" : "assistant";
      if (action === "message") {
        run.message({ time, actor, text: asString(args["content"]) ?? asString(event["message"]) ?? "" });
        continue;
      }
      const tool = asString(metadata?.["function_name"]) ?? action;
      const input: Record<string, unknown> = {};
      for (const key of ARG_KEYS) if (args[key] !== undefined && args[key] !== null) input[key] = args[key];
      const id = event["id"];
      const observation = typeof id === "number" ? observations.get(id) : undefined;
      const failed =
        observation === undefined
          ? undefined
          : observation.error || (observation.exitCode !== undefined && observation.exitCode !== 0);
      run.toolCall({
        time,
        actor,
        tool,
        args: input,
        observation: observation?.text,
        failed,
        sandbox: sandboxAction(action, args, observation?.exitCode),
      });
    }
    return [run];
  },
};

function sandboxAction(
  action: string,
  args: Record<string, unknown>,
  exitCode: number | undefined,
): SandboxAction | undefined {
  const command = asString(args["command"]);
  const path = asString(args["path"]);
  if (action === "run" && command !== undefined) return { kind: "exec", command, exitCode };
  if ((action === "edit" || action === "write") && path !== undefined) return { kind: "file_write", path };
  if (action === "read" && path !== undefined) return { kind: "file_read", path };
  return undefined;
}

/** The conversation of an LLM completion log: its function-calling form when the log has one. */
function completionMessages(root: Record<string, unknown>): unknown[] | undefined {
  const messages = Array.isArray(root["fncall_messages"]) ? root["fncall_messages"] : root["messages"];
  return Array.isArray(messages) && (root["fncall_response"] !== undefined || root["response"] !== undefined)
    ? (messages as unknown[])
    : undefined;
}

/** OpenHands' own exit-code footer on a command's output (two wordings across versions). */
const EXIT_CODE_FOOTER = /\[(?:The command completed|Command finished) with exit code (-?\d+)\.?\]/g;

function importCompletionLog(
  file: LogFile,
  root: Record<string, unknown>,
  options: ImportOptions,
  unmapped: Unmapped,
): RunBuilder {
  // The file is named after the model and a time; the instance is its folder.
  const run = new RunBuilder("openhands", contentRunId(basename(dirname(file.path)), file.text), options);
  const messages = completionMessages(root) ?? [];
  const response = asRecord(root["fncall_response"]) ?? asRecord(root["response"]);
  const finalMessage = asRecord(asRecord((response?.["choices"] as unknown[] | undefined)?.[0])?.["message"]);
  const conversation = finalMessage === undefined ? messages : [...messages, finalMessage];
  const answers = new Map<string, string>();
  for (const value of conversation) {
    const message = asRecord(value);
    const id = asString(message?.["tool_call_id"]);
    if (message?.["role"] === "tool" && id !== undefined) answers.set(id, textOf(message["content"]));
  }
  let index = 0;
  const nextTime = (): StepTime => ({ millis: file.mtimeMs + index++, direct: false });
  let taskSeen = false;
  for (const value of conversation) {
    const message = asRecord(value);
    const role = asString(message?.["role"]);
    if (message === undefined || role === "tool") continue; // a tool answer is read with its call
    if (role === "system") {
      unmapped.add("system prompt (not a step)");
      continue;
    }
    const text = textOf(message["content"]);
    const calls = Array.isArray(message["tool_calls"]) ? (message["tool_calls"] as unknown[]) : [];
    if (role !== "assistant") {
      run.message({ time: nextTime(), actor: taskSeen ? "environment" : "user", text });
      taskSeen = true;
      continue;
    }
    if (calls.length === 0) run.message({ time: nextTime(), actor: "assistant", text });
    for (const value of calls) {
      const call = asRecord(value);
      const fn = asRecord(call?.["function"]);
      const tool = asString(fn?.["name"]) ?? "unknown";
      let args: Record<string, unknown> = {};
      try {
        args = asRecord(JSON.parse(asString(fn?.["arguments"]) ?? "{}")) ?? {};
      } catch {
        unmapped.add("tool call arguments that are not JSON");
      }
      const id = asString(call?.["id"]);
      const answer = id === undefined ? undefined : answers.get(id);
      const exitCode = answer === undefined ? undefined : lastExitCode(answer);
      const failed =
        answer === undefined ? undefined : exitCode !== undefined ? exitCode !== 0 : answer.startsWith("ERROR:");
      run.toolCall({
        time: nextTime(),
        actor: "assistant",
        tool,
        args,
        observation: answer,
        failed,
        sandbox: completionSandboxAction(tool, args, exitCode),
      });
    }
  }
  const usage = asRecord(response?.["usage"]);
  const created = response?.["created"];
  if (response !== undefined) {
    const time: StepTime = typeof created === "number" ? { millis: created * 1000, direct: true } : nextTime();
    run.modelCall({
      time,
      callKey: asString(response["id"]) ?? "response",
      model: asString(response["model"]),
      inputTokens: asCount(usage?.["prompt_tokens"]),
      outputTokens: asCount(usage?.["completion_tokens"]),
    });
  }
  return run;
}

function lastExitCode(output: string): number | undefined {
  let code: number | undefined;
  for (const match of output.matchAll(EXIT_CODE_FOOTER)) code = Number(match[1]);
  return code === undefined || code < 0 ? undefined : code;
}

/** The sandbox action of a function call (execute_bash, str_replace_editor, and their older names). */
function completionSandboxAction(
  tool: string,
  args: Record<string, unknown>,
  exitCode: number | undefined,
): SandboxAction | undefined {
  const command = asString(args["command"]);
  const path = asString(args["path"]);
  if ((tool === "execute_bash" || tool === "bash") && command !== undefined) return { kind: "exec", command, exitCode };
  if (tool !== "str_replace_editor" || path === undefined) return undefined;
  if (command === "view") return { kind: "file_read", path };
  return command === "create" || command === "str_replace" || command === "insert" || command === "undo_edit"
    ? { kind: "file_write", path }
    : undefined;
}
