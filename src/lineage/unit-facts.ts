import type { Cost, DeliverySummary, MetricFact } from "../contract/facts.ts";
import { terminalSummary } from "../metrics/delivery-reading.ts";
import type { FactOrigin } from "../metrics/fact-ledger.ts";
import type { EngineLineage } from "../metrics/metric-engine.ts";
import type { UnitKind } from "../metrics/unit-key.ts";
import { deliveryCosts } from "../metrics/units/delivery-unit.ts";
import type { ExplainedFact, ExplainedOrigin } from "./explanation.ts";

/**
 * Which fact each direct-evidence contribution of a call or Delivery unit stands for: a call's
 * unit contributes its call first, then each linked cost in the index's order
 * (callEvidenceContributions); a Delivery's contributes its earliest TERMINAL summary first.
 */
export function evidenceLabels(
  lineage: EngineLineage,
  kind: "call" | "delivery",
  id: string,
): (MetricFact | undefined)[] {
  if (kind === "delivery") return [terminalSummary(lineage.index.summariesByDelivery.get(id))];
  const call = lineage.index.calls.get(id);
  return call === undefined ? [] : [call, ...lineage.index.costsByCall.get(id)];
}

/** The fact a unit is anchored at (its call, earliest TERMINAL summary, packet or snapshot). */
export function anchorOf(lineage: EngineLineage, kind: UnitKind, id: string): MetricFact | undefined {
  const { index } = lineage;
  switch (kind) {
    case "call":
      return index.calls.get(id);
    case "delivery":
      return terminalSummary(index.summariesByDelivery.get(id));
    case "packet":
      return index.packets.get(id);
    case "snapshot":
      return index.snapshots.get(id);
    case "task":
      return index.snapshots.get(id.slice(0, id.lastIndexOf("\u0000")));
  }
}

/** The admitted facts a unit reads through the index (a task: its links up to the cutoff). */
export function unitFacts(lineage: EngineLineage, kind: UnitKind, id: string): MetricFact[] {
  const { index } = lineage;
  const facts = new Map<string, MetricFact>();
  const add = (fact: MetricFact | undefined): void => {
    if (fact !== undefined) facts.set(fact.fact_id, fact);
  };
  switch (kind) {
    case "call":
      add(index.calls.get(id));
      index.costsByCall.get(id).forEach(add);
      break;
    case "delivery":
      index.summariesByDelivery.get(id).forEach(add);
      deliveryCosts(id, index).costs.forEach(add);
      break;
    case "packet":
      add(index.packets.get(id));
      index.repairsByPacket.get(id).forEach(add);
      break;
    case "snapshot":
      add(index.snapshots.get(id));
      break;
    case "task": {
      const separator = id.lastIndexOf("\u0000");
      const snapshot = index.snapshots.get(id.slice(0, separator));
      const task = snapshot?.tasks[Number(id.slice(separator + 1))];
      if (snapshot === undefined || task === undefined) break;
      add(snapshot);
      const linked: MetricFact[] = [];
      if (task.task_id !== undefined)
        linked.push(...index.callsByTask.get(task.task_id), ...index.repairsByTask.get(task.task_id));
      for (const member of task.members ?? []) {
        linked.push(
          ...index.summariesByDelivery.get(member),
          ...index.callsByDelivery.get(member),
          ...index.repairsByDelivery.get(member),
          ...deliveryCosts(member, index).costs,
        );
      }
      for (const fact of linked) if (fact.event_time <= snapshot.cutoff) add(fact);
      break;
    }
  }
  return [...facts.values()];
}

/** Admitted OPEN summaries and costs linked to a Delivery: the facts the engine applies as units of their own. */
export function* evidenceFacts(lineage: EngineLineage): Iterable<Cost | DeliverySummary> {
  const { index } = lineage;
  for (const [id] of index.deliveryDocs.scan()) {
    for (const summary of index.summariesByDelivery.get(id)) if (summary.status !== "TERMINAL") yield summary;
    yield* index.costsByDelivery.get(id);
  }
}

export function explainFact(lineage: EngineLineage, fact: MetricFact): ExplainedFact {
  return {
    fact_id: fact.fact_id,
    type: fact.type,
    basis: fact.provenance?.basis ?? null,
    event_time: fact.event_time,
    origin: originOf(lineage.origin(fact)),
  };
}

/** A ledger origin in the explanation's terms (a file line, or `topic/partition/offset`). */
export function originOf(origin: FactOrigin | undefined | null): ExplainedOrigin | null {
  if (origin === undefined || origin === null) return null;
  if (typeof origin === "number") return { line: origin };
  const parts = origin.split("/");
  const offset = parts.pop() ?? "";
  const partition = Number(parts.pop());
  return { topic: parts.join("/"), partition, offset };
}
