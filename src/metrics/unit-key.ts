import type { MetricFact, ModelCall } from "../contract/facts.ts";
import type { TaskReader } from "./entity-docs.ts";

/**
 * A unit is what a metric counts: a call, a Delivery, a packet, one defined task of one snapshot,
 * or a snapshot itself (for its no-task record). Evidence facts (OPEN summaries, a Delivery's
 * costs) are units too, but depend on nothing else, so the engine adds them directly. A unit is
 * named by its kind and its id (the fact's own id string, so no key is built per fact); its
 * contributions are recomputed when any fact it reads changes.
 */
export type UnitKind = "call" | "delivery" | "packet" | "task" | "snapshot";

export const UNIT_KINDS: readonly UnitKind[] = ["call", "delivery", "packet", "task", "snapshot"];

/** A task unit's id: snapshot id and the task's position in it. */
export const taskUnitId = (snapshotId: string, position: number): string => `${snapshotId}\u0000${position}`;

/**
 * What finding a fact's readers looks up: a call by id (a cost linked to a call reaches its
 * Delivery through it), and the task units naming a task_id or listing a Delivery as a member,
 * each with its snapshot's cutoff.
 */
export interface UnitReaders {
  callOf(callId: string): ModelCall | undefined;
  tasksNaming(taskId: string): readonly TaskReader[];
  tasksListing(deliveryId: string): readonly TaskReader[];
}

/**
 * The task_id and the member Delivery under which a task reads this fact (a cost linked to a call
 * is read under its call's Delivery): the links to the task units reading it, and to the task
 * readings (task-inputs.ts) it is part of.
 */
export function taskLinksOf(
  fact: MetricFact,
  callOf: UnitReaders["callOf"],
): { readonly taskId?: string; readonly deliveryId?: string } {
  switch (fact.type) {
    case "model_call":
    case "repair":
      return { taskId: fact.task_id, deliveryId: fact.delivery_id };
    case "cost":
      return {
        deliveryId: fact.delivery_id ?? (fact.call_id === undefined ? undefined : callOf(fact.call_id)?.delivery_id),
      };
    case "delivery_summary":
      return { deliveryId: fact.delivery_id };
    default:
      return {};
  }
}

/**
 * Calls `mark` for every unit whose contributions may change when this fact is accepted or
 * retracted. A task unit reads nothing after its snapshot's cutoff (seed §6.2: every reading is at
 * the cutoff; a cost is read through a call only when both are at most the cutoff), so a fact
 * later than the cutoff leaves it as it is and does not mark it.
 */
export function markUnitsReading(
  fact: MetricFact,
  readers: UnitReaders,
  mark: (kind: UnitKind, id: string) => void,
): void {
  const { taskId, deliveryId } = taskLinksOf(fact, readers.callOf);
  const time = fact.event_time;
  if (taskId !== undefined) markTasks(readers.tasksNaming(taskId), time, mark);
  if (deliveryId !== undefined) markTasks(readers.tasksListing(deliveryId), time, mark);
  switch (fact.type) {
    case "model_call":
      mark("call", fact.call_id);
      if (deliveryId !== undefined) mark("delivery", deliveryId);
      return;
    case "cost":
      if (fact.call_id !== undefined) mark("call", fact.call_id);
      if (deliveryId !== undefined) mark("delivery", deliveryId);
      return;
    case "delivery_summary":
      mark("delivery", fact.delivery_id);
      return;
    case "packet":
      mark("packet", fact.packet_id);
      return;
    case "repair":
      if (fact.packet_id !== undefined) mark("packet", fact.packet_id);
      return;
    case "task_snapshot":
      mark("snapshot", fact.snapshot_id);
      fact.tasks.forEach((_, position) => mark("task", taskUnitId(fact.snapshot_id, position)));
      return;
  }
}

/** The task units among `tasks` whose cutoff is at or after `time`. */
function markTasks(tasks: readonly TaskReader[], time: number, mark: (kind: UnitKind, id: string) => void): void {
  for (let index = 0; index < tasks.length; index++) {
    const task = tasks[index] as TaskReader;
    if (time <= task.cutoff) mark("task", task.unit);
  }
}
