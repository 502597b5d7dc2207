import type { AttributeValue } from "./otlp-records.ts";

/**
 * How OTLP records become observation facts, as data (docs/ingest.md has the table). Attribute
 * lists are tried in order, on the record first and then on its resource; the first present,
 * well-typed value wins. Nothing here guesses: a field whose attributes are all absent stays
 * absent in the fact (unavailable, never zero).
 */
export interface OtlpMappingConfig {
  /** The run a record belongs to. */
  readonly runId: readonly string[];
  /** For GenAI spans only: a trace with no run attribute is one agent run (OpenAI Agents SDK: one trace per `Runner.run`). */
  readonly runIdFromTraceId: boolean;
  /** C30 role id: only an explicit id, never an agent's display name. */
  readonly role: readonly string[];
  /** C06 runtime id; else `service.name@service.version` for the agents listed in `runtimeFromService`. */
  readonly runtime: readonly string[];
  readonly runtimeFromService: readonly string[];
  readonly provider: readonly string[];
  /** The response's model first: it is the model that answered. */
  readonly model: readonly string[];
  readonly inputTokens: readonly string[];
  readonly outputTokens: readonly string[];
  /** Who measured the token counts the attributes carry: GenAI spans and Claude Code relay the provider's usage block. */
  readonly usageSource: "PROVIDER" | "HOST";
  /** A call matching any of these is an evaluation/judge call (`operational: false`); every other call is the agent's own work. */
  readonly nonOperational: readonly { readonly attribute: string; readonly equals: AttributeValue }[];
  readonly genAi: {
    readonly operation: readonly string[];
    readonly modelCallOperations: readonly string[];
    readonly toolOperations: readonly string[];
    readonly toolName: readonly string[];
    readonly toolArguments: readonly string[];
  };
  readonly claudeCode: {
    /** A log record is a Claude Code event when its event name starts with this prefix. */
    readonly eventPrefix: string;
    readonly cost: {
      readonly currency: string;
      readonly source: "HOST";
      readonly costBasis: string;
      readonly attribution: "PROJECT" | "SHARED" | "UNATTRIBUTED";
      /** Claude Code calls cost_usd an estimate at list price: it is not billed money. */
      readonly estimated: boolean;
    };
  };
}

export const DEFAULT_OTLP_MAPPING: OtlpMappingConfig = {
  runId: ["agentops.run_id", "session.id", "gen_ai.conversation.id"],
  runIdFromTraceId: true,
  role: ["agentops.role"],
  runtime: ["agentops.runtime"],
  runtimeFromService: ["claude-code", "claude-code-desktop"],
  provider: ["gen_ai.provider.name", "gen_ai.system", "agentops.provider"],
  model: ["gen_ai.response.model", "gen_ai.request.model", "model"],
  inputTokens: ["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.usage.prompt_tokens", "input_tokens"],
  outputTokens: [
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.usage.completion_tokens",
    "output_tokens",
  ],
  usageSource: "PROVIDER",
  nonOperational: [{ attribute: "agentops.operational", equals: false }],
  genAi: {
    operation: ["gen_ai.operation.name", "llm.request.type"],
    modelCallOperations: ["chat", "text_completion", "generate_content", "completion", "embeddings"],
    toolOperations: ["execute_tool"],
    toolName: ["gen_ai.tool.name"],
    toolArguments: ["gen_ai.tool.call.arguments"],
  },
  claudeCode: {
    eventPrefix: "claude_code.",
    cost: {
      currency: "USD",
      source: "HOST",
      costBasis: "claude-code cost_usd: client estimate at list price",
      attribution: "PROJECT",
      estimated: true,
    },
  },
};
