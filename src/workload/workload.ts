import { addStats, emptyStats, generateBatch, type BatchStats } from "./batch.ts";

export const DEFAULT_SEED = 42;
export const DEFAULT_TASKS = 400;
/** Tasks per batch: one batch is generated, written and dropped at a time, so memory stays flat. */
export const BATCH_TASKS = 400;
/** Measured lines per task (default mix), used to turn --facts into a task count. */
export const LINES_PER_TASK = 20;

export interface WorkloadOptions {
  readonly seed: number;
  /** Total tasks; ignored when `facts` is given. */
  readonly tasks?: number;
  /** Approximate total line count: batches are added until it is reached. */
  readonly facts?: number;
}

export interface WorkloadBatch {
  readonly index: number;
  readonly lines: readonly string[];
  readonly stats: BatchStats;
}

/**
 * The workload as a sequence of batches. With `tasks`, batches of BATCH_TASKS tasks (the last one
 * smaller) add up to exactly that many tasks. With `facts`, full batches are generated until the
 * line count reaches the target, the last one sized from LINES_PER_TASK.
 */
export function* workloadBatches(options: WorkloadOptions): Generator<WorkloadBatch> {
  let index = 0;
  if (options.facts !== undefined) {
    let written = 0;
    while (written < options.facts) {
      const remaining = Math.ceil((options.facts - written) / LINES_PER_TASK);
      const batch = generateBatch(options.seed, index, Math.max(1, Math.min(BATCH_TASKS, remaining)));
      written += batch.lines.length;
      yield { index, ...batch };
      index += 1;
    }
    return;
  }
  let remaining = options.tasks ?? DEFAULT_TASKS;
  while (remaining > 0) {
    const size = Math.min(BATCH_TASKS, remaining);
    yield { index, ...generateBatch(options.seed, index, size) };
    remaining -= size;
    index += 1;
  }
}

/** A whole (small) workload in memory: for tests and in-process benchmarks of modest size. */
export function generateWorkloadLines(options: WorkloadOptions): { lines: string[]; stats: BatchStats } {
  const lines: string[] = [];
  const stats = emptyStats();
  for (const batch of workloadBatches(options)) {
    for (const line of batch.lines) lines.push(line);
    addStats(stats, batch.stats);
  }
  return { lines, stats };
}
