import type { MetricFact } from "../contract/facts.ts";
import type { FactIndex } from "./fact-index.ts";
import type { MultiMap } from "./multi-map.ts";

/**
 * A unit is what a metric counts: a call, a Delivery, a packet, or one defined task of one
 * snapshot (evidence facts are units too, but depend on nothing else: the engine adds them directly). Its key names it; its contributions are recomputed when any fact it reads
 * changes.
 */
export const callUnit = (callId: string): string => `call\u0000${callId}`;
export const deliveryUnit = (deliveryId: string): string => `delivery\u0000${deliveryId}`;
export const packetUnit = (packetId: string): string => `packet\u0000${packetId}`;
export const taskUnit = (snapshotId: string, position: number): string => `task\u0000${snapshotId}\u0000${position}`;
export const snapshotUnit = (snapshotId: string): string => `snapshot\u0000${snapshotId}`;

/** Where defined tasks are, so a fact about a task or Delivery finds the task units reading it. */
export interface TaskUnitIndex {
  readonly byTaskId: MultiMap<string, string>;
  readonly byMember: MultiMap<string, string>;
}

/** Every unit whose contributions may change when this fact is accepted or retracted. */
export function unitsReading(fact: MetricFact, index: FactIndex, tasks: TaskUnitIndex): string[] {
  const units: string[] = [];
  const tasksOf = (taskId: string | undefined, deliveryId: string | undefined): void => {
    if (taskId !== undefined) units.push(...tasks.byTaskId.get(taskId));
    if (deliveryId !== undefined) units.push(...tasks.byMember.get(deliveryId));
  };
  switch (fact.type) {
    case "model_call":
      units.push(callUnit(fact.call_id));
      if (fact.delivery_id !== undefined) units.push(deliveryUnit(fact.delivery_id));
      tasksOf(fact.task_id, fact.delivery_id);
      break;
    case "cost": {
      const viaCall = fact.call_id === undefined ? undefined : index.calls.get(fact.call_id);
      if (fact.call_id !== undefined) units.push(callUnit(fact.call_id));
      const deliveryId = fact.delivery_id ?? viaCall?.delivery_id;
      if (deliveryId !== undefined) units.push(deliveryUnit(deliveryId));
      tasksOf(undefined, deliveryId);
      break;
    }
    case "delivery_summary":
      units.push(deliveryUnit(fact.delivery_id));
      tasksOf(undefined, fact.delivery_id);
      break;
    case "packet":
      units.push(packetUnit(fact.packet_id));
      break;
    case "repair":
      if (fact.packet_id !== undefined) units.push(packetUnit(fact.packet_id));
      tasksOf(fact.task_id, fact.delivery_id);
      break;
    case "task_snapshot":
      units.push(snapshotUnit(fact.snapshot_id));
      fact.tasks.forEach((_, position) => units.push(taskUnit(fact.snapshot_id, position)));
      break;
  }
  return units;
}
