import { z } from "zod";
import { ISO_4217_PUBLISHED, isIso4217Code } from "./iso4217.ts";
import { timestampSchema } from "./timestamp.ts";

/**
 * The zod form of observation contract 1.0.0 (shared/spec/observation-contract.md §1–§2): what
 * Avro cannot say (ranges, ISO 4217, fields required only for some values) is enforced here.
 * Optional fields accept absent or null and normalise to absent, so `{"x": null}` and `{}` are the
 * same fact. Objects are closed: an unknown field means a different contract, so it is rejected.
 */

export const OBSERVATION_CONTRACT = "agentops.observation@1.0.0";

export const FACT_TYPES = [
  "model_call",
  "cost",
  "delivery_summary",
  "packet",
  "repair",
  "task_snapshot",
  "agent_step",
  "sandbox_event",
] as const;
export type FactType = (typeof FACT_TYPES)[number];

export const PROVENANCE_BASES = ["DIRECT_HOST", "DIRECT_PROVIDER", "DERIVED", "ESTIMATED", "MANUAL"] as const;
export const DELIVERY_OUTCOMES = ["SUCCEEDED", "FAILED", "CANCELLED", "INFRASTRUCTURE_FAILURE"] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/**
 * Contract revision 3 change 9: whitespace is not a value. A string of Unicode White_Space only is
 * blank, like an empty one: it never names an identity, completes a tuple or names a cohort. Every
 * other string is kept and compared exactly (no trimming, case folding or normalisation).
 */
export function hasValue(text: string): boolean {
  const first = text.charCodeAt(0);
  // Printable ASCII is never White_Space: the common identifier needs no regular expression.
  if (first > 0x20 && first < 0x7f) return true;
  return NOT_WHITESPACE.test(text);
}
const NOT_WHITESPACE = /\P{White_Space}/u;
const notBlank = { message: "an empty or whitespace-only string is not a value", params: { reason: "BLANK_VALUE" } };

const identifier = z.string().min(1).max(256).refine(hasValue, notBlank);

const CURRENCY_RULE = `currency must be on ISO 4217 List One or Three (published ${ISO_4217_PUBLISHED}), e.g. USD`;
const nonNegativeInteger = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/**
 * Contract revision 2 §1, ranges of the measures: wide enough for any real report, small enough
 * that no single value is near 2^53 (sums stay exact; see src/metrics/exact-sum.ts).
 */
export const MEASURE_RANGES = {
  tokens: 1e12,
  spanDurationMs: 1e10,
  elapsedMs: 1e11,
  amountMinor: 1e15,
} as const;
const tokenCount = z.number().int().nonnegative().max(MEASURE_RANGES.tokens);
/** A measure label (provider, model, role, runtime, stage, cost basis): empty or blank is invalid (§1). */
const label = z.string().min(1).refine(hasValue, notBlank);

/**
 * Contract revision 2 §1: measure fields are read field by field. An invalid measure (wrong type,
 * out of range, empty) does not reject its fact: parseFact drops it, reports it as
 * INVALID_MEASURE, and the metrics that need it read it as unavailable. Everything else (envelope,
 * identities, links, status) still rejects the record.
 */
export const MEASURE_FIELDS: Readonly<Partial<Record<FactType, ReadonlySet<string>>>> = {
  model_call: new Set([
    "span_duration_ms",
    "input_tokens",
    "output_tokens",
    "usage_source",
    "provider",
    "model",
    "role",
    "runtime",
  ]),
  delivery_summary: new Set(["elapsed_ms", "stage_reached"]),
  cost: new Set(["amount_minor", "currency", "source", "cost_basis", "attribution", "estimated"]),
  packet: new Set(["repair_attribution"]),
};

/** Measures a record of the type must carry (§2): their absence is an invalid measure too. */
export const REQUIRED_MEASURES: Readonly<Partial<Record<FactType, readonly string[]>>> = {
  cost: ["amount_minor", "currency", "source", "cost_basis", "attribution", "estimated"],
  packet: ["repair_attribution"],
};

/** Absent and null are the same: both become `undefined`. */
function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value) => value ?? undefined);
}

/** Provenance is kept as reported: an unknown basis is not a parse error but unreadable provenance. */
const provenanceSchema = z
  .strictObject({ basis: z.string(), source: optional(z.string()) })
  .nullish()
  .transform((value) => value ?? null);

const envelope = {
  contract: z.literal(OBSERVATION_CONTRACT),
  fact_id: identifier,
  event_time: timestampSchema,
  provenance: provenanceSchema,
};

export const modelCallSchema = z.strictObject({
  ...envelope,
  type: z.literal("model_call"),
  call_id: identifier,
  run_id: identifier,
  delivery_id: optional(identifier),
  task_id: optional(identifier),
  operational: z.boolean(),
  provider: optional(label),
  model: optional(label),
  role: optional(label),
  runtime: optional(label),
  span_duration_ms: optional(z.number().nonnegative().max(MEASURE_RANGES.spanDurationMs)),
  input_tokens: optional(tokenCount),
  output_tokens: optional(tokenCount),
  usage_source: optional(z.enum(["PROVIDER", "HOST", "NONE"])),
});

export const costSchema = z
  .strictObject({
    ...envelope,
    type: z.literal("cost"),
    cost_id: identifier,
    call_id: optional(identifier),
    delivery_id: optional(identifier),
    // Money measures: required (REQUIRED_MEASURES), optional here so that parseFact can accept a
    // cost whose money field is invalid (it is then not eligible money).
    amount_minor: optional(z.number().int().nonnegative().max(MEASURE_RANGES.amountMinor)),
    currency: optional(
      z.string().refine(isIso4217Code, { message: CURRENCY_RULE, params: { reason: "INVALID_CURRENCY" } }),
    ),
    source: optional(z.enum(["PROVIDER", "HOST", "ESTIMATE"])),
    cost_basis: optional(label),
    attribution: optional(z.enum(["PROJECT", "SHARED", "UNATTRIBUTED"])),
    estimated: optional(z.boolean()),
  })
  .superRefine((cost, ctx) => {
    if ((cost.call_id === undefined) === (cost.delivery_id === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["call_id"],
        message: "a cost links by exactly one of call_id and delivery_id",
        params: { reason: "COST_LINK_NOT_EXACTLY_ONE" },
      });
    }
  });

export const deliverySummarySchema = z
  .strictObject({
    ...envelope,
    type: z.literal("delivery_summary"),
    delivery_id: identifier,
    task_id: optional(identifier),
    run_id: optional(identifier),
    status: z.enum(["OPEN", "TERMINAL"]),
    outcome: optional(z.enum(DELIVERY_OUTCOMES)),
    requirement_changed: z.boolean(),
    elapsed_ms: optional(z.number().int().nonnegative().max(MEASURE_RANGES.elapsedMs)),
    stage_reached: optional(label),
  })
  .superRefine((summary, ctx) => {
    if (summary.status === "TERMINAL" && summary.outcome === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["outcome"],
        message: "a TERMINAL summary must record its outcome",
        params: { reason: "OUTCOME_REQUIRED" },
      });
    }
    if (summary.status === "OPEN" && summary.outcome !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["outcome"],
        message: "an OPEN summary has no outcome yet",
        params: { reason: "OUTCOME_NOT_ALLOWED" },
      });
    }
  });

/** governance_revision is kept as reported: an unsupported revision is a metric exclusion, not a parse error. */
export const packetSchema = z.strictObject({
  ...envelope,
  type: z.literal("packet"),
  packet_id: identifier,
  task_id: optional(identifier),
  governance_revision: z.string().min(1),
  repair_attribution: optional(z.enum(["AVAILABLE", "UNAVAILABLE"])),
});

export const repairSchema = z.strictObject({
  ...envelope,
  type: z.literal("repair"),
  repair_id: identifier,
  finding_id: identifier,
  packet_id: optional(identifier),
  task_id: optional(identifier),
  delivery_id: optional(identifier),
  attributable: z.boolean(),
});

/**
 * A defined task keeps exactly what the evaluation owner declared: missing parts stay missing.
 * Revision 3 change 5: its fields are read one at a time (src/contract/task-entries.ts).
 */
export const definedTaskSchema = z.strictObject({
  task_id: optional(identifier),
  members: optional(z.array(identifier)),
  role_template: optional(label),
  template_assignment: optional(z.enum(["EVENT_TIME", "BACKFILLED"])),
});

/** Its tasks reach this schema read entry by entry (src/contract/task-entries.ts), one per task_id. */
export const taskSnapshotSchema = z.strictObject({
  ...envelope,
  type: z.literal("task_snapshot"),
  snapshot_id: identifier,
  cutoff: timestampSchema,
  tasks: z.array(definedTaskSchema),
});

export const agentStepSchema = z.strictObject({
  ...envelope,
  type: z.literal("agent_step"),
  run_id: identifier,
  seq: nonNegativeInteger,
  actor: optional(z.string()),
  kind: z.enum(["tool_call", "message", "plan"]),
  tool: optional(z.string()),
  input: optional(z.string()),
  observation_digest: optional(z.string()),
  status: optional(z.enum(["ok", "error"])),
  input_tokens: optional(nonNegativeInteger),
  output_tokens: optional(nonNegativeInteger),
});

export const sandboxEventSchema = z.strictObject({
  ...envelope,
  type: z.literal("sandbox_event"),
  run_id: identifier,
  seq: nonNegativeInteger,
  kind: z.enum(["exec", "file_read", "file_write", "file_delete", "network", "git", "sql"]),
  command: optional(z.string()),
  argv: optional(z.array(z.string())),
  path: optional(z.string()),
  cwd: optional(z.string()),
  workspace_root: optional(z.string()),
  target: optional(z.string()),
  exit_code: optional(z.number().int()),
});

export const factSchemas = {
  model_call: modelCallSchema,
  cost: costSchema,
  delivery_summary: deliverySummarySchema,
  packet: packetSchema,
  repair: repairSchema,
  task_snapshot: taskSnapshotSchema,
  agent_step: agentStepSchema,
  sandbox_event: sandboxEventSchema,
} as const;
