import type { Rng } from "./prng.ts";
import { fact, HOUR, MINUTE, type BatchSink } from "./records.ts";
import type { TaskPlan } from "./task-plan.ts";

/** Cutoffs relative to the batch start: a mid-batch one (many tasks still open) and a final one. */
export const EARLY_CUTOFF = 12 * HOUR;
export const FINAL_CUTOFF = 40 * HOUR;
/** Tasks in the pilot snapshot: fewer than minimum_sample, so its results stay unpublished. */
export const PILOT_TASKS = 8;

/** How the evaluation owner declared one task: missing parts are simply left out. */
function declaration(task: TaskPlan): Record<string, unknown> {
  return {
    task_id: task.declaresTaskId ? task.id : undefined,
    members:
      task.members === "ABSENT"
        ? undefined
        : task.members === "EMPTY"
          ? []
          : task.deliveries.map((delivery) => delivery.id),
    role_template: task.declaresTemplate ? task.template : undefined,
    template_assignment: task.declaresTemplate ? task.assignment : undefined,
  };
}

function emitSnapshot(
  sink: BatchSink,
  snapshotId: string,
  factId: string,
  cutoff: number,
  tasks: readonly TaskPlan[],
): void {
  const time = cutoff + 5 * MINUTE;
  sink.emit(
    time,
    fact(
      "task_snapshot",
      factId,
      time,
      { basis: "MANUAL", source: "evaluation-owner" },
      { snapshot_id: snapshotId, cutoff: new Date(cutoff).toISOString(), tasks: tasks.map(declaration) },
    ),
  );
}

/**
 * The batch's defined-task snapshots: a final one with every task, an early one with the tasks
 * started by then (facts after its cutoff are not read), a small pilot one (below minimum sample),
 * and one snapshot_id reported twice with different content (a conflict: neither version counts).
 * Returns the number of conflicting snapshot versions written.
 */
export function emitSnapshots(
  sink: BatchSink,
  rng: Rng,
  batch: number,
  batchStart: number,
  tasks: readonly TaskPlan[],
): number {
  emitSnapshot(sink, `snap-${batch}-final`, `ts-${batch}-final`, batchStart + FINAL_CUTOFF, tasks);
  emitSnapshot(
    sink,
    `snap-${batch}-early`,
    `ts-${batch}-early`,
    batchStart + EARLY_CUTOFF,
    tasks.filter((task) => task.start <= batchStart + EARLY_CUTOFF),
  );
  const pilotStart = rng.int(0, Math.max(0, tasks.length - PILOT_TASKS));
  emitSnapshot(
    sink,
    `snap-${batch}-pilot`,
    `ts-${batch}-pilot`,
    batchStart + FINAL_CUTOFF,
    tasks.slice(pilotStart, pilotStart + PILOT_TASKS),
  );
  if (tasks.length < 4) return 0;
  emitSnapshot(sink, `snap-${batch}-audit`, `ts-${batch}-audit-a`, batchStart + FINAL_CUTOFF, tasks.slice(0, 3));
  emitSnapshot(sink, `snap-${batch}-audit`, `ts-${batch}-audit-b`, batchStart + FINAL_CUTOFF, tasks.slice(0, 4));
  return 2;
}
