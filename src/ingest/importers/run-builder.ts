import { createHash } from "node:crypto";
import { canonicalJson } from "../../contract/canonical-json.ts";
import { OBSERVATION_CONTRACT } from "../../contract/fact-schema.ts";
import { observationDigest } from "../../contract/observation-digest.ts";
import { formatTimestamp } from "../../contract/timestamp.ts";

/**
 * Builds the facts of one imported run: every importer reads its own format and says what
 * happened, in log order; this is where identity, sequence, time and provenance are decided, once
 * for all formats (docs/importers.md).
 *
 * - fact_id = "imp-" + 32 hex of sha256 over [format, run_id, type, seq | call id]: importing the
 *   same log twice writes byte-identical facts (a redelivery, a no-op downstream).
 * - seq = position in the log: one counter per run for agent steps; a sandbox event that mirrors
 *   a tool call carries that tool call's seq (the monitor matches the two by it).
 * - event_time: the log's own time when it has one (provenance basis DIRECT_HOST); otherwise the
 *   importer's documented reading, flagged DERIVED.
 */
export type ImportFormat = "claude-code" | "codex" | "swe-agent" | "mini-swe-agent" | "openhands";

export interface StepTime {
  readonly millis: number;
  /** true when the time is read from the log itself; false for a derived reading. */
  readonly direct: boolean;
}

export interface ToolCallInput {
  readonly time: StepTime;
  readonly actor: string;
  readonly tool: string;
  /** The call's arguments as the log has them (an object); written as canonical JSON. */
  readonly args: unknown;
  /** The observation text, when the log has the call's result. */
  readonly observation?: string | undefined;
  readonly failed?: boolean | undefined;
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
  /** What the call did in the sandbox, when it is a shell or file action. */
  readonly sandbox?: SandboxAction | undefined;
}

export type SandboxAction =
  | {
      readonly kind: "exec";
      readonly command: string;
      readonly cwd?: string | undefined;
      readonly exitCode?: number | undefined;
    }
  | { readonly kind: "file_read" | "file_write"; readonly path: string; readonly cwd?: string | undefined };

export interface MessageInput {
  readonly time: StepTime;
  readonly actor: string;
  readonly text: string;
}

export interface ModelCallInput {
  readonly time: StepTime;
  /** The log's own identity of the call (response id), made unique per run by the builder. */
  readonly callKey: string;
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
}

export interface ImportOptions {
  /** C30 role id for model calls, when the user names it; never guessed. */
  readonly role?: string | undefined;
  /** C06 runtime id for model calls; defaults to the format's agent name. */
  readonly runtime?: string | undefined;
  /** Replaces the file modification time as the base of derived event times (reproducible imports). */
  readonly baseTimeMs?: number | undefined;
}

export type Fact = Record<string, unknown>;

export class RunBuilder {
  readonly facts: Fact[] = [];
  private nextSeq = 0;
  private readonly callKeys = new Set<string>();
  steps = 0;

  readonly format: ImportFormat;
  readonly runId: string;
  private readonly options: ImportOptions;

  constructor(format: ImportFormat, runId: string, options: ImportOptions) {
    this.format = format;
    this.runId = runId;
    this.options = options;
  }

  private envelope(type: string, identity: string, time: StepTime): Fact {
    return {
      contract: OBSERVATION_CONTRACT,
      type,
      fact_id: factId([this.format, this.runId, type, identity]),
      event_time: formatTimestamp(time.millis),
      provenance: { basis: time.direct ? "DIRECT_HOST" : "DERIVED", source: `agentops-import:${this.format}` },
    };
  }

  message(input: MessageInput): void {
    const seq = this.nextSeq++;
    this.steps++;
    this.facts.push({
      ...this.envelope("agent_step", String(seq), input.time),
      run_id: this.runId,
      seq,
      actor: input.actor,
      kind: "message",
      observation_digest: observationDigest(input.text),
    });
  }

  toolCall(input: ToolCallInput): void {
    const seq = this.nextSeq++;
    this.steps++;
    const step: Fact = {
      ...this.envelope("agent_step", String(seq), input.time),
      run_id: this.runId,
      seq,
      actor: input.actor,
      kind: "tool_call",
      tool: input.tool,
      input: canonicalJson(input.args ?? {}),
    };
    if (input.observation !== undefined) step["observation_digest"] = observationDigest(input.observation);
    if (input.failed !== undefined) step["status"] = input.failed ? "error" : "ok";
    if (input.inputTokens !== undefined) step["input_tokens"] = input.inputTokens;
    if (input.outputTokens !== undefined) step["output_tokens"] = input.outputTokens;
    this.facts.push(step);
    const action = input.sandbox;
    // A failed file tool call (a rejected edit) wrote or deleted nothing: no file event for it.
    if (action === undefined || (input.failed === true && action.kind !== "exec")) return;
    const event: Fact = {
      ...this.envelope("sandbox_event", String(seq), input.time),
      run_id: this.runId,
      seq,
      kind: action.kind,
    };
    if (action.kind === "exec") {
      event["command"] = action.command;
      if (action.exitCode !== undefined) event["exit_code"] = action.exitCode;
    } else {
      event["path"] = action.path;
    }
    if (action.cwd !== undefined) event["cwd"] = action.cwd;
    this.facts.push(event);
  }

  modelCall(input: ModelCallInput): void {
    let key = input.callKey;
    for (let suffix = 2; this.callKeys.has(key); suffix++) key = `${input.callKey}#${suffix}`;
    this.callKeys.add(key);
    const call: Fact = {
      ...this.envelope("model_call", key, input.time),
      call_id: `${this.runId}/${key}`,
      run_id: this.runId,
      operational: true,
    };
    if (input.provider !== undefined) call["provider"] = input.provider;
    if (input.model !== undefined) call["model"] = input.model;
    if (this.options.role !== undefined) call["role"] = this.options.role;
    call["runtime"] = this.options.runtime ?? this.format;
    if (input.inputTokens !== undefined) call["input_tokens"] = input.inputTokens;
    if (input.outputTokens !== undefined) call["output_tokens"] = input.outputTokens;
    // Usage read from the provider's response as the log recorded it.
    call["usage_source"] = input.inputTokens !== undefined || input.outputTokens !== undefined ? "PROVIDER" : "NONE";
    this.facts.push(call);
  }
}

export function factId(parts: readonly string[]): string {
  return `imp-${sha256Hex(canonicalJson(parts)).slice(0, 32)}`;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * A run id for logs that carry none (SWE-agent, mini-swe-agent, OpenHands): the file's name
 * stem and 12 hex of the content's sha256, so the same log always gets the same id and two runs
 * of one instance never share one.
 */
export function contentRunId(stem: string, content: string): string {
  return `${stem}-${sha256Hex(content).slice(0, 12)}`;
}

/** Derived times: the base (e.g. the file's modification time) plus the step index in ms. */
export function derivedTime(baseMillis: number, index: number): StepTime {
  return { millis: baseMillis + index, direct: false };
}

/** A log timestamp with a zone is direct; one without a zone is read as UTC and flagged DERIVED. */
export function logTime(text: unknown): StepTime | undefined {
  if (typeof text !== "string") return undefined;
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/.test(text);
  const millis = Date.parse(zoned ? text : `${text}Z`);
  return Number.isNaN(millis) ? undefined : { millis, direct: zoned };
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function asCount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** Text of a content value that is a string or an array of {type: "text", text} blocks. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? "" : JSON.stringify(content);
  return content
    .map((block) => {
      const record = asRecord(block);
      if (record === undefined) return typeof block === "string" ? block : "";
      return (
        asString(record["text"]) ??
        asString(record["content"]) ??
        (Array.isArray(record["content"]) ? textOf(record["content"]) : "")
      );
    })
    .join("\n");
}
