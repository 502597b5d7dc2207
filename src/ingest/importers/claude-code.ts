import { parseJsonLine, type FormatImporter } from "./importer.ts";
import {
  asCount,
  asRecord,
  asString,
  logTime,
  RunBuilder,
  textOf,
  type SandboxAction,
  type StepTime,
} from "./run-builder.ts";
import { shellCommandOf } from "../../tripwires/detectors/agent-tool-intent.ts";

/**
 * Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`): one JSON
 * object a line; `user`/`assistant` lines carry `message` (Anthropic Messages API shape) with
 * `tool_use` blocks in assistant content and `tool_result` blocks (matched by `tool_use_id`) in
 * user content; every line has its `timestamp`, `sessionId` and `cwd`. An assistant response
 * streamed as several lines repeats one `message.id` and `usage`: it is one model call.
 */
const FILE_TOOLS_WRITE = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);
const FILE_TOOLS_READ = new Set(["Read"]);
const SHELL_TOOLS = new Set(["Bash"]);

interface ToolResult {
  readonly text: string;
  readonly isError: boolean;
}

export const claudeCodeImporter: FormatImporter = {
  format: "claude-code",
  filePattern: /\.jsonl$/,
  description: "Claude Code session JSONL (~/.claude/projects/**/*.jsonl)",
  importFile(file, options, unmapped) {
    const lines: Record<string, unknown>[] = [];
    for (const line of file.text.split("\n")) {
      if (line.trim() === "") continue;
      const record = asRecord(parseJsonLine(line, unmapped));
      if (record !== undefined) lines.push(record);
    }
    // First pass: results by tool_use_id, and the last usage of every streamed response.
    const results = new Map<string, ToolResult>();
    const usageByMessage = new Map<string, Record<string, unknown>>();
    for (const line of lines) {
      const message = asRecord(line["message"]);
      if (message === undefined) continue;
      const usage = asRecord(message["usage"]);
      const id = asString(message["id"]);
      if (usage !== undefined && id !== undefined) usageByMessage.set(id, usage);
      if (!Array.isArray(message["content"])) continue;
      for (const block of message["content"] as unknown[]) {
        const record = asRecord(block);
        if (record?.["type"] !== "tool_result") continue;
        const useId = asString(record["tool_use_id"]);
        if (useId !== undefined)
          results.set(useId, { text: textOf(record["content"]), isError: record["is_error"] === true });
      }
    }
    const runs = new Map<string, RunBuilder>();
    const calls = new Set<string>();
    for (const line of lines) {
      const type = asString(line["type"]);
      const sessionId = asString(line["sessionId"]);
      if ((type !== "user" && type !== "assistant") || sessionId === undefined) {
        unmapped.add(`line type "${type ?? "none"}" (not a step)`);
        continue;
      }
      const time = logTime(line["timestamp"]);
      if (time === undefined) {
        unmapped.add("line without a readable timestamp");
        continue;
      }
      let run = runs.get(sessionId);
      if (run === undefined) {
        run = new RunBuilder("claude-code", sessionId, options);
        runs.set(sessionId, run);
      }
      const message = asRecord(line["message"]);
      const cwd = asString(line["cwd"]);
      const actor = line["isSidechain"] === true ? "subagent" : type === "assistant" ? "assistant" : "user";
      if (type === "assistant") {
        const id = asString(message?.["id"]);
        if (id !== undefined && !calls.has(id)) {
          calls.add(id);
          const usage = usageByMessage.get(id);
          run.modelCall({
            time,
            callKey: id,
            provider: "anthropic",
            model: asString(message?.["model"]),
            inputTokens: asCount(usage?.["input_tokens"]),
            outputTokens: asCount(usage?.["output_tokens"]),
          });
        }
      }
      const content = message?.["content"];
      if (typeof content === "string") {
        run.message({ time, actor, text: content });
        continue;
      }
      if (!Array.isArray(content)) {
        unmapped.add("message without content");
        continue;
      }
      for (const block of content as unknown[]) addBlock(run, asRecord(block), { time, actor, cwd, results }, unmapped);
    }
    return [...runs.values()];
  },
};

function addBlock(
  run: RunBuilder,
  block: Record<string, unknown> | undefined,
  context: { time: StepTime; actor: string; cwd: string | undefined; results: Map<string, ToolResult> },
  unmapped: { add(reason: string): void },
): void {
  switch (block?.["type"]) {
    case "text": {
      const text = asString(block["text"]) ?? "";
      if (text.trim() !== "") run.message({ time: context.time, actor: context.actor, text });
      return;
    }
    case "tool_use": {
      const tool = asString(block["name"]) ?? "unknown";
      const args = block["input"] ?? {};
      const result = context.results.get(asString(block["id"]) ?? "");
      run.toolCall({
        time: context.time,
        actor: context.actor,
        tool,
        args,
        observation: result?.text,
        failed: result?.isError,
        sandbox: sandboxAction(tool, args, context.cwd),
      });
      return;
    }
    case "tool_result":
      return; // read with its tool_use
    case "thinking":
    case "redacted_thinking":
      unmapped.add("thinking block (reasoning, not a step)");
      return;
    default:
      unmapped.add(`content block "${String(block?.["type"] ?? "none")}"`);
  }
}

function sandboxAction(tool: string, args: unknown, cwd: string | undefined): SandboxAction | undefined {
  const record = asRecord(args);
  if (SHELL_TOOLS.has(tool)) {
    const command = shellCommandOf(args);
    return command === undefined ? undefined : { kind: "exec", command, cwd };
  }
  const path = asString(record?.["file_path"]) ?? asString(record?.["notebook_path"]);
  if (path === undefined) return undefined;
  if (FILE_TOOLS_WRITE.has(tool)) return { kind: "file_write", path, cwd };
  if (FILE_TOOLS_READ.has(tool)) return { kind: "file_read", path, cwd };
  return undefined;
}
