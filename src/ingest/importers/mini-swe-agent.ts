import { basename } from "node:path";
import { parseJsonFile, type FormatImporter } from "./importer.ts";
import { asCount, asRecord, asString, contentRunId, RunBuilder, textOf, type StepTime } from "./run-builder.ts";
import { shellCommandOf } from "../../tripwires/detectors/agent-tool-intent.ts";

/**
 * mini-swe-agent trajectories (`*.traj.json`): `{info, messages, trajectory_format}` (or, in
 * older test data, the bare list of messages). Messages are OpenAI chat messages: the model
 * answers with exactly one bash block (```bash / ```mswea_bash_command) or, with tool-calling
 * models (format 1.1), `tool_calls`; the environment answers with a user (or `tool`) message
 * `<returncode>N</returncode><output>…</output>`. A model answer without exactly one action is
 * a format error: it becomes a message step, and so does the harness's format-error reply
 * (actor "environment").
 *
 * event_time: the message's own time when the log has it (`extra.timestamp`, or the provider
 * response's `created`), direct; otherwise the previous step's time + 1 ms (the first: the
 * file's modification time), DERIVED.
 */
/**
 * The harness's own action patterns (its `action_regex`: ```bash (v1), ```mswea_bash_command,
 * and the XML forms): a block in another language (```python) is prose, not an action.
 */
const ACTION_BLOCKS: readonly RegExp[] = [
  /```(?:bash|mswea_bash_command)\s*\n([\s\S]*?)\n```/g,
  /<mswea_bash_command>([\s\S]*?)<\/mswea_bash_command>/g,
  /<bash_code>([\s\S]*?)<\/bash_code>/g,
];

export const miniSweAgentImporter: FormatImporter = {
  format: "mini-swe-agent",
  filePattern: /\.traj\.json$/,
  description: "mini-swe-agent trajectories (*.traj.json, swebench results)",
  importFile(file, options, unmapped) {
    const parsed = parseJsonFile(file.text, unmapped);
    if (parsed === undefined) return [];
    const root = asRecord(parsed);
    const messages = Array.isArray(parsed) ? (parsed as unknown[]) : root?.["messages"];
    if (!Array.isArray(messages)) {
      unmapped.add("file without messages");
      return [];
    }
    const stem = asString(root?.["instance_id"]) ?? basename(file.path).replace(/\.traj\.json$/, "");
    const run = new RunBuilder("mini-swe-agent", contentRunId(stem, file.text), options);
    let last: StepTime = { millis: file.mtimeMs, direct: false };
    const timeOf = (message: Record<string, unknown>): StepTime => {
      const extra = asRecord(message["extra"]);
      const seconds = extra?.["timestamp"] ?? asRecord(extra?.["response"])?.["created"];
      last =
        typeof seconds === "number" && Number.isFinite(seconds)
          ? { millis: Math.round(seconds * 1000), direct: true }
          : { millis: last.millis + 1, direct: false };
      return last;
    };
    let taskSeen = false; // the first user message is the task; later ones are the harness's replies
    for (let index = 0; index < messages.length; index++) {
      const message = asRecord(messages[index]);
      if (message === undefined) {
        unmapped.add("message that is not an object");
        continue;
      }
      const role = asString(message["role"]);
      const text = textOf(message["content"]);
      const time = timeOf(message);
      if (role === "system") {
        unmapped.add("system prompt (not a step)");
        continue;
      }
      if (role !== "assistant") {
        // Replies consumed by an action are read with it; the rest are messages.
        run.message({ time, actor: taskSeen ? "environment" : "user", text });
        taskSeen = true;
        continue;
      }
      const response = asRecord(asRecord(message["extra"])?.["response"]);
      const usage = asRecord(response?.["usage"]);
      if (response !== undefined) {
        run.modelCall({
          time,
          callKey: asString(response["id"]) ?? `message-${index}`,
          model: asString(response["model"]),
          inputTokens: asCount(usage?.["prompt_tokens"]),
          outputTokens: asCount(usage?.["completion_tokens"]),
        });
      }
      const commands = actionsOf(message, text);
      if (commands.length !== 1) {
        run.message({ time, actor: "assistant", text });
        continue;
      }
      const command = commands[0] ?? "";
      const reply = asRecord(messages[index + 1]);
      const replyText = reply === undefined || reply["role"] === "assistant" ? undefined : textOf(reply["content"]);
      const exitCode = replyText === undefined ? undefined : returnCodeOf(reply, replyText);
      run.toolCall({
        time,
        actor: "assistant",
        tool: "bash",
        args: { command },
        observation: replyText === undefined ? undefined : outputOf(replyText),
        failed: exitCode === undefined ? undefined : exitCode !== 0,
        sandbox: { kind: "exec", command, exitCode },
      });
      if (replyText !== undefined) {
        timeOf(reply ?? {});
        index++;
      }
    }
    return [run];
  },
};

function actionsOf(message: Record<string, unknown>, text: string): string[] {
  if (Array.isArray(message["tool_calls"])) {
    return (message["tool_calls"] as unknown[]).map((call) => {
      const fn = asRecord(asRecord(call)?.["function"]);
      const raw = asString(fn?.["arguments"]) ?? "";
      try {
        return shellCommandOf(JSON.parse(raw)) ?? raw;
      } catch {
        return raw;
      }
    });
  }
  for (const pattern of ACTION_BLOCKS) {
    const actions = [...text.matchAll(pattern)].map((match) => (match[1] ?? "").trim());
    if (actions.length > 0) return actions;
  }
  return [];
}

function returnCodeOf(reply: Record<string, unknown> | undefined, text: string): number | undefined {
  const extra = asRecord(reply?.["extra"]);
  const code = extra?.["returncode"];
  if (typeof code === "number") return code;
  const match = /<returncode>(-?\d+)<\/returncode>/.exec(text);
  return match === null ? undefined : Number(match[1]);
}

/** The command's output without the return-code wrapper (which is the status, not the output). */
function outputOf(text: string): string {
  return text.replace(/<returncode>-?\d+<\/returncode>\s*/, "");
}
