import type { DeliveryOutcome } from "../contract/fact-schema.ts";
import { ANOMALY_MIX } from "./anomaly-mix.ts";
import type { Rng } from "./prng.ts";
import { absent, fact, MINUTE, provenanceFor, type BatchSink } from "./records.ts";
import type { DeliveryPlan, TaskPlan } from "./task-plan.ts";
import { STAGES } from "./vocabulary.ts";

const STAGE_BY_OUTCOME: Readonly<Record<DeliveryOutcome, readonly string[]>> = {
  SUCCEEDED: ["merge"],
  FAILED: ["test", "review"],
  CANCELLED: ["plan", "implement"],
  INFRASTRUCTURE_FAILURE: ["implement", "test"],
};

/**
 * A Delivery's summaries: usually OPEN at its start and TERMINAL at its end. A few stay OPEN, a
 * few have no summary at all, a few get a later second TERMINAL summary (ignored by the engine),
 * and a few lack C55 elapsed_ms or C56 stage_reached.
 */
export function emitSummaries(sink: BatchSink, rng: Rng, task: TaskPlan, delivery: DeliveryPlan): void {
  if (delivery.summaries === "NONE") return;
  const base = { delivery_id: delivery.id, task_id: task.id, run_id: delivery.runId };
  const openAt = delivery.start + rng.int(1, 20) * 1000;
  if (delivery.summaries === "OPEN_ONLY" || rng.chance(0.9)) {
    sink.emit(
      openAt,
      fact("delivery_summary", `sum-${delivery.tag}-open`, openAt, provenanceFor(rng, "ci", "DIRECT_HOST"), {
        ...base,
        status: "OPEN",
        requirement_changed: false,
        stage_reached: STAGES[0],
      }),
    );
  }
  if (delivery.summaries === "OPEN_ONLY") return;

  const elapsed = rng.chance(ANOMALY_MIX.missingElapsed) ? absent(rng) : delivery.end - delivery.start;
  const stage = rng.chance(ANOMALY_MIX.missingStage) ? absent(rng) : rng.pick(STAGE_BY_OUTCOME[delivery.outcome]);
  sink.emit(
    delivery.end,
    fact("delivery_summary", `sum-${delivery.tag}-end`, delivery.end, provenanceFor(rng, "ci", "DIRECT_HOST"), {
      ...base,
      status: "TERMINAL",
      outcome: delivery.outcome,
      requirement_changed: delivery.requirementChanged,
      elapsed_ms: elapsed,
      stage_reached: stage,
    }),
    // Kept so the wire anomalies can derive summaries of the Delivery (src/workload/stream-anomalies.ts).
    true,
  );
  if (delivery.secondTerminal) {
    // A re-run report after the Delivery already ended: counted by the engine, never read.
    const later = delivery.end + rng.int(5, 180) * MINUTE;
    sink.emit(
      later,
      fact("delivery_summary", `sum-${delivery.tag}-end2`, later, provenanceFor(rng, "ci", "DIRECT_HOST"), {
        ...base,
        status: "TERMINAL",
        outcome: rng.pick(["SUCCEEDED", "FAILED"] as const),
        requirement_changed: false,
        elapsed_ms: later - delivery.start,
        stage_reached: "merge",
      }),
    );
  }
}
