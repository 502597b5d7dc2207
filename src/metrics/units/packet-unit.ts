import type { Packet, Repair } from "../../contract/facts.ts";
import type { ContributionDraft } from "../contribution.ts";
import type { EngineConfig } from "../engine-config.ts";
import type { FactIndex } from "../fact-index.ts";
import { NO_COHORT, windowScopeOf } from "../scope.ts";

export const SUPPORTED_GOVERNANCE_REVISION = "0.2";

/**
 * packet-rework-rate: a packet in the window of its event_time. Unsupported governance revisions
 * are outside the base scope (counted, not candidates). Unavailable repair attribution is
 * uncovered, never a "no repair" zero; a known no-repair packet is covered and contributes 0.
 * Repairs count wherever their own event_time falls (linked facts follow their unit).
 */
export function packetContributions(packet: Packet, index: FactIndex, config: EngineConfig): ContributionDraft[] {
  const scope = windowScopeOf(packet.event_time, config.windowMillis);
  if (packet.governance_revision !== SUPPORTED_GOVERNANCE_REVISION) {
    return [
      {
        metricId: "packet-rework-rate",
        scope,
        cohort: NO_COHORT,
        candidate: false,
        exclusions: { UNSUPPORTED_GOVERNANCE_REVISION: 1 },
        asOf: packet.event_time,
      },
    ];
  }
  const covered = packet.repair_attribution === "AVAILABLE";
  let repaired = false;
  let asOf = packet.event_time;
  const repairs = index.repairsByPacket.get(packet.packet_id);
  for (let position = 0; position < repairs.length; position++) {
    const repair = repairs[position] as Repair;
    asOf = Math.max(asOf, repair.event_time);
    if (repair.attributable) repaired = true;
  }
  return [
    {
      metricId: "packet-rework-rate",
      scope,
      cohort: NO_COHORT,
      candidate: true,
      covered,
      eligible: covered,
      hit: covered && repaired,
      asOf,
    },
  ];
}
