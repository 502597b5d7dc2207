import { NOTHING, type ProcessResult, type SourceRecord, type Task } from "../processor.ts";

/**
 * The one place the transports read a task's optional capabilities (processor.ts), and what a task
 * without one does: it holds no local state (it rebuilds from offset 0 and checkpoints nothing), it
 * restores nothing, and going live writes nothing.
 */

/** Where the task's state stands given its source partition's end: offset 0 without local state. */
export function resumeFrom(task: Task<unknown>, sourceEnd: string): string {
  return task.localState?.resumeFrom(sourceEnd) ?? "0";
}

/** A batch's writes before `nextOffset` are acknowledged: a task with local state may checkpoint. */
export async function acknowledged(task: Task<unknown>, nextOffset: string): Promise<void> {
  await task.localState?.committed(nextOffset);
}

/** Releases a task's local state, if it keeps any. */
export async function closeTask(task: Task<unknown>): Promise<void> {
  await task.localState?.close();
}

/** Replays source records into a source-restored task's state; publishes nothing but its changelog. */
export function restore<V>(task: Task<V>, records: readonly SourceRecord<V>[]): ProcessResult {
  return task.sourceRestore?.restore(records) ?? NOTHING;
}

/** What going live writes, page by page (one empty page for a task that does not restore from its source). */
export function goLivePages(task: Task<unknown>): Iterable<ProcessResult> {
  return task.sourceRestore?.goLive() ?? [NOTHING];
}
