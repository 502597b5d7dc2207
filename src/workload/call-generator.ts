import { ANOMALY_MIX } from "./anomaly-mix.ts";
import type { Rng } from "./prng.ts";
import { absent, fact, HOUR, MINUTE, provenanceFor, type BatchSink } from "./records.ts";
import type { DeliveryPlan, TaskPlan } from "./task-plan.ts";
import { COST_BASES, JUDGE_TUPLE, type Tuple } from "./vocabulary.ts";

interface CallSpec {
  readonly tuple: Tuple;
  readonly operational: boolean;
}

/**
 * A Delivery's model calls and the costs linked to them: writer calls, reviewer calls (more of them
 * under the writer-reviewer template) and sometimes a non-operational judge call. Most calls carry a
 * complete attribution tuple, native span duration, token usage and one cost; a few miss pieces.
 */
export function emitCallsAndCosts(sink: BatchSink, rng: Rng, task: TaskPlan, delivery: DeliveryPlan): void {
  const specs: CallSpec[] = [];
  for (let n = rng.int(2, 3); n > 0; n -= 1) specs.push({ tuple: task.writer, operational: true });
  const reviews = task.template.startsWith("writer-reviewer") ? rng.int(1, 2) : rng.int(0, 1);
  for (let n = reviews; n > 0; n -= 1) specs.push({ tuple: task.reviewer, operational: true });
  if (rng.chance(ANOMALY_MIX.judgeCall)) specs.push({ tuple: JUDGE_TUPLE, operational: false });

  // Calls happen while the Delivery runs; a long-running one's calls stay in its first hours.
  const span = Math.min(delivery.end - delivery.start, 6 * HOUR);
  specs.forEach((spec, position) => {
    const time = delivery.start + Math.floor(((position + rng.next()) / specs.length) * span);
    emitCall(sink, rng, task, delivery, spec, position, time);
  });

  if (rng.chance(ANOMALY_MIX.deliveryCost)) {
    // Sandbox compute, metered by the host and linked to the Delivery itself (not to a call).
    const minutes = Math.max(1, Math.round(Math.min(span, 8 * HOUR) / MINUTE));
    const time = Math.min(delivery.end, delivery.start + 8 * HOUR) + MINUTE;
    emitCost(
      sink,
      rng,
      `${delivery.tag}-sbx`,
      time,
      { delivery_id: delivery.id },
      minutes * 2,
      "USD",
      "HOST",
      COST_BASES.sandbox,
    );
  }
}

function emitCall(
  sink: BatchSink,
  rng: Rng,
  task: TaskPlan,
  delivery: DeliveryPlan,
  spec: CallSpec,
  position: number,
  time: number,
): void {
  const { tuple } = spec;
  const callId = `call-${delivery.tag}-${position}`;
  const coordinates: Record<string, string | null | undefined> = {
    provider: tuple.provider,
    model: tuple.model,
    role: tuple.role,
    runtime: tuple.runtime,
  };
  if (delivery.legacyRunner) coordinates["runtime"] = absent(rng);
  if (rng.chance(ANOMALY_MIX.incompleteTuple)) {
    // Missing, null or empty: none of them completes the tuple (and no alias may).
    const missing = rng.pick(["provider", "model", "role", "runtime"]);
    coordinates[missing] = rng.pick([undefined, null, ""]);
  }
  const usage = rng.weighted(ANOMALY_MIX.usageSource);
  const reportsTokens = usage !== "NONE";
  const inputTokens = Math.round(rng.skewed(spec.operational ? 18_000 : 4_000, 2));
  const outputTokens = Math.round(rng.skewed(spec.operational ? 1_500 : 300, 2));
  const duration = Math.round(rng.skewed(spec.operational ? 9_000 : 2_500, 1.8) * 10) / 10;
  const record = fact("model_call", `mc-${callId}`, time, provenanceFor(rng, "otel"), {
    call_id: callId,
    run_id: delivery.runId,
    delivery_id: delivery.id,
    task_id: rng.chance(0.05) ? absent(rng) : task.id,
    operational: spec.operational,
    ...coordinates,
    span_duration_ms: rng.chance(ANOMALY_MIX.missingSpan) ? absent(rng) : duration,
    input_tokens: reportsTokens && !rng.chance(ANOMALY_MIX.missingTokens) ? inputTokens : absent(rng),
    output_tokens: reportsTokens && !rng.chance(ANOMALY_MIX.missingTokens) ? outputTokens : absent(rng),
    usage_source: usage ?? absent(rng),
  });
  sink.emit(time, record, true);

  if (!reportsTokens || rng.chance(ANOMALY_MIX.callWithoutCost)) return;
  const amount = Math.max(
    1,
    Math.round((inputTokens * tuple.inputPrice + outputTokens * tuple.outputPrice) / 1_000_000),
  );
  const source = rng.weighted(ANOMALY_MIX.costSource);
  const basis =
    source === "HOST"
      ? COST_BASES.hostMetered
      : tuple.provider === "anthropic" && tuple.role === "writer" && rng.chance(ANOMALY_MIX.contractBasis)
        ? COST_BASES.contract
        : COST_BASES.listPrice;
  const costTime = time + Math.ceil(duration) + rng.int(1, 30) * 1000;
  emitCost(
    sink,
    rng,
    callId.slice(5),
    costTime,
    { call_id: callId },
    amount,
    tuple.currency,
    source,
    basis,
    spec.operational ? undefined : "SHARED",
  );
}

function emitCost(
  sink: BatchSink,
  rng: Rng,
  tag: string,
  time: number,
  link: Readonly<Record<string, string>>,
  amount: number,
  currency: string,
  source: "PROVIDER" | "HOST" | "ESTIMATE",
  basis: string,
  attribution?: "SHARED",
): void {
  const estimated = source === "ESTIMATE" || rng.chance(ANOMALY_MIX.estimatedFlag);
  const provenance =
    source === "ESTIMATE"
      ? { basis: "ESTIMATED", source: "cost-estimator" }
      : provenanceFor(
          rng,
          source === "HOST" ? "meter" : "billing",
          source === "HOST" ? "DIRECT_HOST" : "DIRECT_PROVIDER",
        );
  sink.emit(
    time,
    fact("cost", `cost-${tag}`, time, provenance, {
      cost_id: `cst-${tag}`,
      ...link,
      amount_minor: amount,
      currency,
      source,
      cost_basis: basis,
      attribution: attribution ?? rng.weighted(ANOMALY_MIX.costAttribution),
      estimated,
    }),
    true,
  );
}
