import { ANOMALY_MIX } from "./anomaly-mix.ts";
import type { Rng } from "./prng.ts";
import { fact, MINUTE, provenanceFor, type BatchSink } from "./records.ts";
import type { TaskPlan } from "./task-plan.ts";

export const SUPPORTED_REVISION = "0.2";
export const UNSUPPORTED_REVISION = "0.1";

/**
 * A task's governance packet and the Fix-to-Finding repairs found against it. Repairs link to the
 * packet and to the task (by task_id, or by a member's delivery_id); a few are not attributable,
 * a few packets have unavailable repair attribution or an unsupported governance revision.
 */
export function emitPacketAndRepairs(sink: BatchSink, rng: Rng, task: TaskPlan): void {
  const first = task.deliveries[0];
  if (first === undefined) return;
  const hasPacket = rng.chance(ANOMALY_MIX.packet);
  const packetId = `pkt-${task.tag}`;
  const packetTime = first.start + Math.floor((first.end - first.start) / 2);
  if (hasPacket) {
    sink.emit(
      packetTime,
      fact("packet", `pk-${task.tag}`, packetTime, provenanceFor(rng, "governance-bot"), {
        packet_id: packetId,
        task_id: task.id,
        governance_revision: rng.chance(ANOMALY_MIX.unsupportedRevision) ? UNSUPPORTED_REVISION : SUPPORTED_REVISION,
        repair_attribution: rng.chance(ANOMALY_MIX.repairUnavailable) ? "UNAVAILABLE" : "AVAILABLE",
      }),
    );
  }
  if (!rng.chance(ANOMALY_MIX.repaired)) return;
  for (let n = rng.int(1, 2) - 1; n >= 0; n -= 1) {
    const member = rng.pick(task.deliveries);
    const time = packetTime + rng.int(5, 240) * MINUTE;
    const link = rng.weighted([
      ["task", 0.6],
      ["delivery", 0.3],
      ["task-only", 0.1],
    ] as const);
    sink.emit(
      time,
      fact("repair", `rp-${task.tag}-${n}`, time, provenanceFor(rng, "review-bot"), {
        repair_id: `rep-${task.tag}-${n}`,
        finding_id: `fnd-${task.tag}-${n}`,
        packet_id: hasPacket && link !== "task-only" ? packetId : undefined,
        task_id: link === "delivery" ? undefined : task.id,
        delivery_id: link === "delivery" ? member.id : undefined,
        attributable: rng.chance(ANOMALY_MIX.attributableRepair),
      }),
    );
  }
}
