import { OBSERVATION_CONTRACT, isCurrencyCode, type FactType } from "./fact-schema.ts";
import type { Fact } from "./facts.ts";
import {
  BAD,
  ENUMS,
  KEYS,
  isCount,
  isId,
  isNonEmpty,
  isRecord,
  onlyKnownKeys,
  optCount,
  optDuration,
  optEnum,
  optId,
  optLabel,
  intern,
  optIdArray,
  optInteger,
  optNonEmpty,
  optString,
  optStringArray,
  provenance,
  timestamp,
  type Rec,
} from "./fast-fields.ts";

/**
 * The validation fast path: a hand-written check of the common, valid record that answers the
 * normalised fact exactly as zod's schemas (src/contract/fact-schema.ts) would — the same keys in
 * the same order (schema shape order: envelope, then the type's fields), absent optionals left out,
 * null optionals present as `undefined` (zod keeps a key that was in the input), timestamps as epoch
 * milliseconds, fresh arrays — or `undefined`, meaning "not sure or invalid: ask zod". It never
 * accepts what zod rejects and never builds a different fact; zod remains the definition of the
 * contract, and the rejection reasons come from zod alone. Verified against zod by
 * test/unit/contract/fast-parse.test.ts and test/property/fast-parse.property.test.ts.
 *
 * Each optional field is written as `if (value !== undefined || "key" in record) out.key = value`:
 * zod's rule for an optional whose value normalises to undefined (kept when the key was present).
 */
export function fastParseFact(input: unknown): Fact | undefined {
  if (!isRecord(input) || input["contract"] !== OBSERVATION_CONTRACT) return undefined;
  const type = input["type"];
  const builder = typeof type === "string" && Object.hasOwn(BUILDERS, type) ? BUILDERS[type as FactType] : undefined;
  if (builder === undefined || !onlyKnownKeys(input, KEYS[type as FactType])) return undefined;
  // The builders below produce exactly the zod output shape of the record's type.
  return builder(input) as Fact | undefined;
}

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
  const deliveryId = optId(r["delivery_id"]);
  if (deliveryId === BAD) return undefined;
  if (deliveryId !== undefined || "delivery_id" in r) out["delivery_id"] = deliveryId;
  const taskId = optId(r["task_id"]);
  if (taskId === BAD) return undefined;
  if (taskId !== undefined || "task_id" in r) out["task_id"] = taskId;
  const operational = r["operational"];
  if (typeof operational !== "boolean") return undefined;
  out["operational"] = operational;
  const provider = optLabel(r["provider"]);
  if (provider === BAD) return undefined;
  if (provider !== undefined || "provider" in r) out["provider"] = provider;
  const model = optLabel(r["model"]);
  if (model === BAD) return undefined;
  if (model !== undefined || "model" in r) out["model"] = model;
  const role = optLabel(r["role"]);
  if (role === BAD) return undefined;
  if (role !== undefined || "role" in r) out["role"] = role;
  const runtime = optLabel(r["runtime"]);
  if (runtime === BAD) return undefined;
  if (runtime !== undefined || "runtime" in r) out["runtime"] = runtime;
  const spanDuration = optDuration(r["span_duration_ms"]);
  if (spanDuration === BAD) return undefined;
  if (spanDuration !== undefined || "span_duration_ms" in r) out["span_duration_ms"] = spanDuration;
  const inputTokens = optCount(r["input_tokens"]);
  if (inputTokens === BAD) return undefined;
  if (inputTokens !== undefined || "input_tokens" in r) out["input_tokens"] = inputTokens;
  const outputTokens = optCount(r["output_tokens"]);
  if (outputTokens === BAD) return undefined;
  if (outputTokens !== undefined || "output_tokens" in r) out["output_tokens"] = outputTokens;
  const usageSource = optEnum(r["usage_source"], ENUMS.usageSource);
  if (usageSource === BAD) return undefined;
  if (usageSource !== undefined || "usage_source" in r) out["usage_source"] = usageSource;
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
  if (!isCount(amount) || typeof currency !== "string" || !isCurrencyCode(currency) || !ENUMS.costSource.has(source) || !isNonEmpty(basis) || !ENUMS.attribution.has(attribution) || typeof estimated !== "boolean") return undefined;
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
  const taskId = optId(r["task_id"]);
  if (taskId === BAD) return undefined;
  if (taskId !== undefined || "task_id" in r) out["task_id"] = taskId;
  const runId = optId(r["run_id"]);
  if (runId === BAD) return undefined;
  if (runId !== undefined || "run_id" in r) out["run_id"] = runId;
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
  const elapsed = optCount(r["elapsed_ms"]);
  if (elapsed === BAD) return undefined;
  if (elapsed !== undefined || "elapsed_ms" in r) out["elapsed_ms"] = elapsed;
  const stage = optNonEmpty(r["stage_reached"]);
  if (stage === BAD) return undefined;
  if (stage !== undefined || "stage_reached" in r) out["stage_reached"] = stage === undefined ? undefined : intern(stage);
  return out;
}

function packet(r: Rec): Rec | undefined {
  const out = envelope(r, "packet");
  if (out === undefined) return undefined;
  const packetId = r["packet_id"];
  if (!isId(packetId)) return undefined;
  out["packet_id"] = packetId;
  const taskId = optId(r["task_id"]);
  if (taskId === BAD) return undefined;
  if (taskId !== undefined || "task_id" in r) out["task_id"] = taskId;
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
  const packetId = optId(r["packet_id"]);
  if (packetId === BAD) return undefined;
  if (packetId !== undefined || "packet_id" in r) out["packet_id"] = packetId;
  const taskId = optId(r["task_id"]);
  if (taskId === BAD) return undefined;
  if (taskId !== undefined || "task_id" in r) out["task_id"] = taskId;
  const deliveryId = optId(r["delivery_id"]);
  if (deliveryId === BAD) return undefined;
  if (deliveryId !== undefined || "delivery_id" in r) out["delivery_id"] = deliveryId;
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
  // superRefine: a task_id is defined at most once per snapshot.
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
  const taskId = optId(value["task_id"]);
  if (taskId === BAD) return undefined;
  if (taskId !== undefined || "task_id" in value) out["task_id"] = taskId;
  const members = optIdArray(value["members"]);
  if (members === BAD) return undefined;
  if (members !== undefined || "members" in value) out["members"] = members;
  const roleTemplate = optNonEmpty(value["role_template"]);
  if (roleTemplate === BAD) return undefined;
  if (roleTemplate !== undefined || "role_template" in value) out["role_template"] = roleTemplate;
  const assignment = optEnum(value["template_assignment"], ENUMS.templateAssignment);
  if (assignment === BAD) return undefined;
  if (assignment !== undefined || "template_assignment" in value) out["template_assignment"] = assignment;
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
  const actor = optString(r["actor"]);
  if (actor === BAD) return undefined;
  if (actor !== undefined || "actor" in r) out["actor"] = actor;
  const kind = r["kind"];
  if (!ENUMS.stepKind.has(kind)) return undefined;
  out["kind"] = kind;
  const tool = optString(r["tool"]);
  if (tool === BAD) return undefined;
  if (tool !== undefined || "tool" in r) out["tool"] = tool;
  const stepInput = optString(r["input"]);
  if (stepInput === BAD) return undefined;
  if (stepInput !== undefined || "input" in r) out["input"] = stepInput;
  const digest = optString(r["observation_digest"]);
  if (digest === BAD) return undefined;
  if (digest !== undefined || "observation_digest" in r) out["observation_digest"] = digest;
  const status = optEnum(r["status"], ENUMS.stepStatus);
  if (status === BAD) return undefined;
  if (status !== undefined || "status" in r) out["status"] = status;
  const inputTokens = optCount(r["input_tokens"]);
  if (inputTokens === BAD) return undefined;
  if (inputTokens !== undefined || "input_tokens" in r) out["input_tokens"] = inputTokens;
  const outputTokens = optCount(r["output_tokens"]);
  if (outputTokens === BAD) return undefined;
  if (outputTokens !== undefined || "output_tokens" in r) out["output_tokens"] = outputTokens;
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
  const command = optString(r["command"]);
  if (command === BAD) return undefined;
  if (command !== undefined || "command" in r) out["command"] = command;
  const argv = optStringArray(r["argv"]);
  if (argv === BAD) return undefined;
  if (argv !== undefined || "argv" in r) out["argv"] = argv;
  const path = optString(r["path"]);
  if (path === BAD) return undefined;
  if (path !== undefined || "path" in r) out["path"] = path;
  const cwd = optString(r["cwd"]);
  if (cwd === BAD) return undefined;
  if (cwd !== undefined || "cwd" in r) out["cwd"] = cwd;
  const workspaceRoot = optString(r["workspace_root"]);
  if (workspaceRoot === BAD) return undefined;
  if (workspaceRoot !== undefined || "workspace_root" in r) out["workspace_root"] = workspaceRoot;
  const target = optString(r["target"]);
  if (target === BAD) return undefined;
  if (target !== undefined || "target" in r) out["target"] = target;
  const exitCode = optInteger(r["exit_code"]);
  if (exitCode === BAD) return undefined;
  if (exitCode !== undefined || "exit_code" in r) out["exit_code"] = exitCode;
  return out;
}
