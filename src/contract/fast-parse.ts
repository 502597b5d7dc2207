import { MEASURE_RANGES, OBSERVATION_CONTRACT, type FactType } from "./fact-schema.ts";
import type { Fact } from "./facts.ts";
import {
  BAD,
  ENUMS,
  KEYS,
  isCount,
  isId,
  isLabel,
  isNonEmpty,
  isRecord,
  onlyKnownKeys,
  optBoundedCount,
  optCount,
  optDuration,
  optEnum,
  optId,
  optLabel,
  intern,
  optIdArray,
  optInteger,
  optNonBlank,
  optString,
  optStringArray,
  provenance,
  timestamp,
  type Rec,
} from "./fast-fields.ts";
import { isIso4217Code } from "./iso4217.ts";

/**
 * The validation fast path: a hand-written check of the common, valid record that answers the
 * normalised fact exactly as zod's schemas (src/contract/fact-schema.ts) would (same keys in the
 * same order, absent optionals left out, null optionals as `undefined`, timestamps as epoch
 * milliseconds), or `undefined`: "not sure or invalid, ask zod". zod stays the definition of the
 * contract and the source of every rejection reason; test/unit/contract/fast-parse.test.ts and
 * test/property/fast-parse.property.test.ts hold the two equal.
 */
export function fastParseFact(input: unknown): Fact | undefined {
  if (!isRecord(input) || input["contract"] !== OBSERVATION_CONTRACT) return undefined;
  const type = input["type"];
  const builder = typeof type === "string" && Object.hasOwn(BUILDERS, type) ? BUILDERS[type as FactType] : undefined;
  if (builder === undefined || !onlyKnownKeys(input, KEYS[type as FactType])) return undefined;
  // The builders below produce exactly the zod output shape of the record's type.
  return builder(input) as Fact | undefined;
}

/**
 * zod's rule for an optional field: an invalid value rejects the record (false); a value that
 * normalises to undefined is kept only when the key was present; absent keys stay absent.
 */
function copyOptional<T>(from: Rec, to: Rec, key: string, read: (value: unknown) => T | typeof BAD): boolean {
  const value = read(from[key]);
  if (value === BAD) return false;
  if (value !== undefined || key in from) to[key] = value;
  return true;
}

const optTokens = (value: unknown): number | undefined | typeof BAD => optBoundedCount(value, MEASURE_RANGES.tokens);

/** Each record type's builder (closed keys are checked before it runs). */
const BUILDERS: Readonly<Record<FactType, (record: Rec) => Rec | undefined>> = {
  model_call: modelCall,
  cost,
  delivery_summary: deliverySummary,
  packet,
  repair,
  task_snapshot: taskSnapshot,
  agent_step: agentStep,
  sandbox_event: sandboxEvent,
};

/** The envelope in shape order: contract, fact_id, event_time, provenance, type. */
function envelope(record: Rec, type: string): Rec | undefined {
  const factId = record["fact_id"];
  if (!isId(factId)) return undefined;
  const eventTime = timestamp(record["event_time"]);
  if (eventTime === BAD) return undefined;
  const source = provenance(record["provenance"]);
  if (source === BAD) return undefined;
  return { contract: OBSERVATION_CONTRACT, fact_id: factId, event_time: eventTime, provenance: source, type };
}

function modelCall(r: Rec): Rec | undefined {
  const out = envelope(r, "model_call");
  if (out === undefined) return undefined;
  const callId = r["call_id"];
  const runId = r["run_id"];
  if (!isId(callId) || !isId(runId)) return undefined;
  out["call_id"] = callId;
  out["run_id"] = runId;
  if (!copyOptional(r, out, "delivery_id", optId)) return undefined;
  if (!copyOptional(r, out, "task_id", optId)) return undefined;
  const operational = r["operational"];
  if (typeof operational !== "boolean") return undefined;
  out["operational"] = operational;
  if (!copyOptional(r, out, "provider", optLabel)) return undefined;
  if (!copyOptional(r, out, "model", optLabel)) return undefined;
  if (!copyOptional(r, out, "role", optLabel)) return undefined;
  if (!copyOptional(r, out, "runtime", optLabel)) return undefined;
  if (!copyOptional(r, out, "span_duration_ms", optDuration)) return undefined;
  if (!copyOptional(r, out, "input_tokens", optTokens)) return undefined;
  if (!copyOptional(r, out, "output_tokens", optTokens)) return undefined;
  if (!copyOptional(r, out, "usage_source", (value) => optEnum(value, ENUMS.usageSource))) return undefined;
  return out;
}

function cost(r: Rec): Rec | undefined {
  const out = envelope(r, "cost");
  if (out === undefined) return undefined;
  const costId = r["cost_id"];
  if (!isId(costId)) return undefined;
  out["cost_id"] = costId;
  const callId = optId(r["call_id"]);
  const deliveryId = optId(r["delivery_id"]);
  // superRefine: exactly one of call_id / delivery_id (after normalisation).
  if (callId === BAD || deliveryId === BAD || (callId === undefined) === (deliveryId === undefined)) return undefined;
  if (callId !== undefined || "call_id" in r) out["call_id"] = callId;
  if (deliveryId !== undefined || "delivery_id" in r) out["delivery_id"] = deliveryId;
  const amount = r["amount_minor"];
  const currency = r["currency"];
  const source = r["source"];
  const basis = r["cost_basis"];
  const attribution = r["attribution"];
  const estimated = r["estimated"];
  if (
    typeof amount !== "number" ||
    optBoundedCount(amount, MEASURE_RANGES.amountMinor) === BAD ||
    typeof currency !== "string" ||
    !isIso4217Code(currency) ||
    !ENUMS.costSource.has(source) ||
    !isLabel(basis) ||
    !ENUMS.attribution.has(attribution) ||
    typeof estimated !== "boolean"
  )
    return undefined;
  out["amount_minor"] = amount;
  out["currency"] = intern(currency);
  out["source"] = intern(source as string);
  out["cost_basis"] = intern(basis);
  out["attribution"] = intern(attribution as string);
  out["estimated"] = estimated;
  return out;
}

function deliverySummary(r: Rec): Rec | undefined {
  const out = envelope(r, "delivery_summary");
  if (out === undefined) return undefined;
  const deliveryId = r["delivery_id"];
  if (!isId(deliveryId)) return undefined;
  out["delivery_id"] = deliveryId;
  if (!copyOptional(r, out, "task_id", optId)) return undefined;
  if (!copyOptional(r, out, "run_id", optId)) return undefined;
  const status = r["status"];
  if (!ENUMS.deliveryStatus.has(status)) return undefined;
  out["status"] = status;
  const outcome = optEnum(r["outcome"], ENUMS.deliveryOutcome);
  // superRefine: outcome is required iff TERMINAL.
  if (outcome === BAD || (status === "TERMINAL") === (outcome === undefined)) return undefined;
  if (outcome !== undefined || "outcome" in r) out["outcome"] = outcome;
  const requirementChanged = r["requirement_changed"];
  if (typeof requirementChanged !== "boolean") return undefined;
  out["requirement_changed"] = requirementChanged;
  if (!copyOptional(r, out, "elapsed_ms", (value) => optBoundedCount(value, MEASURE_RANGES.elapsedMs)))
    return undefined;
  const stage = optNonBlank(r["stage_reached"]);
  if (stage === BAD) return undefined;
  if (stage !== undefined || "stage_reached" in r)
    out["stage_reached"] = stage === undefined ? undefined : intern(stage);
  return out;
}

function packet(r: Rec): Rec | undefined {
  const out = envelope(r, "packet");
  if (out === undefined) return undefined;
  const packetId = r["packet_id"];
  if (!isId(packetId)) return undefined;
  out["packet_id"] = packetId;
  if (!copyOptional(r, out, "task_id", optId)) return undefined;
  const revision = r["governance_revision"];
  const repairAttribution = r["repair_attribution"];
  if (!isNonEmpty(revision) || !ENUMS.repairAttribution.has(repairAttribution)) return undefined;
  out["governance_revision"] = intern(revision as string);
  out["repair_attribution"] = repairAttribution;
  return out;
}

function repair(r: Rec): Rec | undefined {
  const out = envelope(r, "repair");
  if (out === undefined) return undefined;
  const repairId = r["repair_id"];
  const findingId = r["finding_id"];
  if (!isId(repairId) || !isId(findingId)) return undefined;
  out["repair_id"] = repairId;
  out["finding_id"] = findingId;
  if (!copyOptional(r, out, "packet_id", optId)) return undefined;
  if (!copyOptional(r, out, "task_id", optId)) return undefined;
  if (!copyOptional(r, out, "delivery_id", optId)) return undefined;
  const attributable = r["attributable"];
  if (typeof attributable !== "boolean") return undefined;
  out["attributable"] = attributable;
  return out;
}

function taskSnapshot(r: Rec): Rec | undefined {
  const out = envelope(r, "task_snapshot");
  if (out === undefined) return undefined;
  const snapshotId = r["snapshot_id"];
  if (!isId(snapshotId)) return undefined;
  const cutoff = timestamp(r["cutoff"]);
  const tasks = r["tasks"];
  if (cutoff === BAD || !Array.isArray(tasks)) return undefined;
  const defined: Rec[] = [];
  // A task_id declared twice, like any malformed entry, is left to zod's path (src/contract/task-entries.ts).
  const seen = new Set<string>();
  for (let index = 0; index < tasks.length; index++) {
    const task = definedTask(tasks[index]);
    if (task === undefined) return undefined;
    const taskId = task["task_id"];
    if (typeof taskId === "string") {
      if (seen.has(taskId)) return undefined;
      seen.add(taskId);
    }
    defined.push(task);
  }
  out["snapshot_id"] = snapshotId;
  out["cutoff"] = cutoff;
  out["tasks"] = defined;
  return out;
}

function definedTask(value: unknown): Rec | undefined {
  if (!isRecord(value) || !onlyKnownKeys(value, KEYS.task)) return undefined;
  const out: Rec = {};
  if (!copyOptional(value, out, "task_id", optId)) return undefined;
  if (!copyOptional(value, out, "members", optIdArray)) return undefined;
  if (!copyOptional(value, out, "role_template", optNonBlank)) return undefined;
  if (!copyOptional(value, out, "template_assignment", (value) => optEnum(value, ENUMS.templateAssignment)))
    return undefined;
  return out;
}

function agentStep(r: Rec): Rec | undefined {
  const out = envelope(r, "agent_step");
  if (out === undefined) return undefined;
  const runId = r["run_id"];
  const seq = r["seq"];
  if (!isId(runId) || !isCount(seq)) return undefined;
  out["run_id"] = runId;
  out["seq"] = seq;
  if (!copyOptional(r, out, "actor", optString)) return undefined;
  const kind = r["kind"];
  if (!ENUMS.stepKind.has(kind)) return undefined;
  out["kind"] = kind;
  if (!copyOptional(r, out, "tool", optString)) return undefined;
  if (!copyOptional(r, out, "input", optString)) return undefined;
  if (!copyOptional(r, out, "observation_digest", optString)) return undefined;
  if (!copyOptional(r, out, "status", (value) => optEnum(value, ENUMS.stepStatus))) return undefined;
  if (!copyOptional(r, out, "input_tokens", optCount)) return undefined;
  if (!copyOptional(r, out, "output_tokens", optCount)) return undefined;
  return out;
}

function sandboxEvent(r: Rec): Rec | undefined {
  const out = envelope(r, "sandbox_event");
  if (out === undefined) return undefined;
  const runId = r["run_id"];
  const seq = r["seq"];
  const kind = r["kind"];
  if (!isId(runId) || !isCount(seq) || !ENUMS.sandboxKind.has(kind)) return undefined;
  out["run_id"] = runId;
  out["seq"] = seq;
  out["kind"] = kind;
  if (!copyOptional(r, out, "command", optString)) return undefined;
  if (!copyOptional(r, out, "argv", optStringArray)) return undefined;
  if (!copyOptional(r, out, "path", optString)) return undefined;
  if (!copyOptional(r, out, "cwd", optString)) return undefined;
  if (!copyOptional(r, out, "workspace_root", optString)) return undefined;
  if (!copyOptional(r, out, "target", optString)) return undefined;
  if (!copyOptional(r, out, "exit_code", optInteger)) return undefined;
  return out;
}
