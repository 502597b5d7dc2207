import { ANOMALY_MIX } from "./anomaly-mix.ts";
import { emitAgentRun } from "./agent-run-generator.ts";
import { emitCallsAndCosts } from "./call-generator.ts";
import { emitSummaries } from "./delivery-generator.ts";
import { emitPacketAndRepairs } from "./packet-generator.ts";
import { deriveSeed, Rng } from "./prng.ts";
import { BatchSink, DAY } from "./records.ts";
import { emitSnapshots } from "./snapshot-generator.ts";
import { injectStreamAnomalies } from "./stream-anomalies.ts";
import { planTask, type TaskPlan } from "./task-plan.ts";
import { DESTRUCTIVE_ACTIONS } from "./vocabulary.ts";

/** 2026-10-01T00:00:00Z: batch b starts b days later. */
export const BASE_TIME = Date.UTC(2026, 9, 1);

export interface BatchStats {
  lines: number;
  /** Lines that are not meant to be accepted (malformed or unsupported contract). */
  malformed: number;
  unsupportedContract: number;
  redeliveries: number;
  /** Accepted facts with invalid measures (contract revision 2 §1): each measure is a dead letter, the fact counts. */
  invalidMeasureFacts: number;
  /** Identical re-reports of a domain identity under a new fact_id (count once). */
  reReports: number;
  /** Extra versions written under an existing identity (fact_id, call_id, snapshot_id). */
  conflictingVersions: number;
  tasks: number;
  deliveries: number;
  agentEvents: number;
  destructiveRuns: number;
}

export function emptyStats(): BatchStats {
  return {
    lines: 0,
    malformed: 0,
    unsupportedContract: 0,
    redeliveries: 0,
    invalidMeasureFacts: 0,
    reReports: 0,
    conflictingVersions: 0,
    tasks: 0,
    deliveries: 0,
    agentEvents: 0,
    destructiveRuns: 0,
  };
}

export function addStats(total: BatchStats, batch: Readonly<BatchStats>): void {
  for (const key of Object.keys(total) as (keyof BatchStats)[]) total[key] += batch[key];
}

/**
 * One self-contained batch of the workload: `taskCount` tasks starting on day `batch`, their
 * Deliveries, calls, costs, packets, repairs, agent runs and snapshots, plus the wire anomalies.
 * Lines come out in event-time order (redeliveries and corrections arrive after their originals).
 * A batch depends only on (seed, batch, taskCount), so batches can be generated one at a time.
 */
export function generateBatch(seed: number, batch: number, taskCount: number): { lines: string[]; stats: BatchStats } {
  const rng = new Rng(deriveSeed(seed, batch));
  const batchStart = BASE_TIME + batch * DAY;
  const sink = new BatchSink();
  const tasks: TaskPlan[] = [];
  for (let index = 0; index < taskCount; index += 1) tasks.push(planTask(rng, batch, index, batchStart));

  // Every batch carries each destructive action once, on random runs; a rare extra one may follow.
  const deliveryCount = tasks.reduce((sum, task) => sum + task.deliveries.length, 0);
  const destructiveAt = new Map<number, number>();
  DESTRUCTIVE_ACTIONS.forEach((_, kind) => {
    if (deliveryCount < DESTRUCTIVE_ACTIONS.length) return;
    let at = rng.int(0, deliveryCount - 1);
    while (destructiveAt.has(at)) at = (at + 1) % deliveryCount;
    destructiveAt.set(at, kind);
  });

  const stats = emptyStats();
  let deliveryIndex = 0;
  for (const task of tasks) {
    for (const delivery of task.deliveries) {
      emitSummaries(sink, rng, task, delivery);
      emitCallsAndCosts(sink, rng, task, delivery);
      const destructive =
        destructiveAt.get(deliveryIndex) ??
        (rng.chance(ANOMALY_MIX.destructive) ? rng.int(0, DESTRUCTIVE_ACTIONS.length - 1) : -1);
      if (destructive >= 0 || rng.chance(ANOMALY_MIX.monitoredRun)) {
        if (destructive >= 0) stats.destructiveRuns += 1;
        stats.agentEvents += emitAgentRun(sink, rng, task, delivery, { destructive });
      }
      deliveryIndex += 1;
    }
    emitPacketAndRepairs(sink, rng, task);
  }
  stats.conflictingVersions += emitSnapshots(sink, rng, batch, batchStart, tasks);
  const wire = injectStreamAnomalies(sink, rng);

  const lines = sink.sorted().map((line) => line.line);
  stats.lines = lines.length;
  stats.malformed = wire.malformed;
  stats.unsupportedContract = wire.unsupportedContract;
  stats.redeliveries = wire.redeliveries;
  stats.invalidMeasureFacts = wire.invalidMeasureFacts;
  stats.reReports = wire.reReports;
  stats.conflictingVersions += wire.conflictingVersions;
  stats.tasks = tasks.length;
  stats.deliveries = deliveryCount;
  return { lines, stats };
}
