import type { ContributionDraft } from "./contribution.ts";
import type { EngineConfig } from "./engine-config.ts";
import type { FactIndex } from "./fact-index.ts";
import type { TaskInputs } from "./task-inputs.ts";
import type { UnitKind } from "./unit-key.ts";
import { callContributions } from "./units/call-unit.ts";
import { deliveryContributions } from "./units/delivery-unit.ts";
import { packetContributions } from "./units/packet-unit.ts";
import { emptySnapshotContributions, taskContributions } from "./units/task-unit.ts";

/** A unit's contribution drafts from the admitted facts: what the unit of that kind and id reads. */
export function evaluateUnit(
  kind: UnitKind,
  id: string,
  index: FactIndex,
  config: EngineConfig,
  taskInputs: TaskInputs,
): readonly ContributionDraft[] {
  switch (kind) {
    case "call": {
      const call = index.calls.get(id);
      return call === undefined ? [] : callContributions(call, index, config);
    }
    case "delivery":
      return deliveryContributions(id, index, config);
    case "packet": {
      const packet = index.packets.get(id);
      return packet === undefined ? [] : packetContributions(packet, index, config);
    }
    case "snapshot": {
      const snapshot = index.snapshots.get(id);
      return snapshot === undefined ? [] : emptySnapshotContributions(snapshot);
    }
    case "task": {
      const separator = id.lastIndexOf("\u0000");
      const snapshot = index.snapshots.get(id.slice(0, separator));
      const task = snapshot?.tasks[Number(id.slice(separator + 1))];
      return snapshot === undefined || task === undefined ? [] : taskContributions(snapshot, task, taskInputs);
    }
  }
}
