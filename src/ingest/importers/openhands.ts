import { basename } from "node:path";
import { parseJsonFile, type FormatImporter } from "./importer.ts";
import { asCount, asRecord, asString, contentRunId, logTime, RunBuilder, textOf, type SandboxAction, type StepTime } from "./run-builder.ts";

/**
 * OpenHands event streams (a saved trajectory: a JSON array of events, as in
 * `tests/runtime/trajs/*.json`, or `{"history"|"events": [...]}`). An event is an action
 * (`action`: message, run, read, edit, write, run_ipython, browse, finish, think, …; `args`) or
 * an observation (`observation`, `content`, `extras`, and `cause` = the id of its action). The
 * function the model called and its usage are in `tool_call_metadata` (one model response can
 * hold several actions: one model_call per response id). Timestamps have no zone: they are read
 * as UTC and flagged DERIVED.
 */
const ARG_KEYS = ["command", "code", "path", "url", "content", "old_str", "new_str", "file_text", "insert_line", "view_range", "start", "end", "is_input", "outputs", "task_list"];
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
      observations.set(cause, { text: textOf(event["content"]), exitCode: typeof exitCode === "number" && exitCode >= 0 ? exitCode : undefined, error: event["observation"] === "error" });
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
        run.modelCall({ time, callKey: responseId, model: asString(response["model"]), inputTokens: asCount(usage?.["prompt_tokens"]), outputTokens: asCount(usage?.["completion_tokens"]) });
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
      const failed = observation === undefined ? undefined : observation.error || (observation.exitCode !== undefined && observation.exitCode !== 0);
      run.toolCall({ time, actor, tool, args: input, observation: observation?.text, failed, sandbox: sandboxAction(action, args, observation?.exitCode) });
    }
    return [run];
  },
};

function sandboxAction(action: string, args: Record<string, unknown>, exitCode: number | undefined): SandboxAction | undefined {
  const command = asString(args["command"]);
  const path = asString(args["path"]);
  if (action === "run" && command !== undefined) return { kind: "exec", command, exitCode };
  if ((action === "edit" || action === "write") && path !== undefined) return { kind: "file_write", path };
  if (action === "read" && path !== undefined) return { kind: "file_read", path };
  return undefined;
}
