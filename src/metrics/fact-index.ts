import type { Cost, DeliverySummary, MetricFact, ModelCall, Packet, Repair, TaskSnapshot } from "../contract/facts.ts";
import { MultiMap } from "./multi-map.ts";

/**
 * The accepted facts, indexed by every link the metrics follow (seed §6 and contract §2): costs to
 * calls and Deliveries, calls to Deliveries and tasks, repairs to packets, tasks and Deliveries,
 * summaries to Deliveries. Only accepted facts are here; quarantined ones are removed.
 */
export class FactIndex {
  readonly calls = new Map<string, ModelCall>();
  readonly packets = new Map<string, Packet>();
  readonly snapshots = new Map<string, TaskSnapshot>();

  readonly summariesByDelivery = new MultiMap<string, DeliverySummary>();
  readonly costsByCall = new MultiMap<string, Cost>();
  readonly costsByDelivery = new MultiMap<string, Cost>();
  readonly callsByDelivery = new MultiMap<string, ModelCall>();
  readonly callsByTask = new MultiMap<string, ModelCall>();
  readonly repairsByPacket = new MultiMap<string, Repair>();
  readonly repairsByTask = new MultiMap<string, Repair>();
  readonly repairsByDelivery = new MultiMap<string, Repair>();

  add(fact: MetricFact): void {
    this.apply(fact, true);
  }

  remove(fact: MetricFact): void {
    this.apply(fact, false);
  }

  private apply(fact: MetricFact, adding: boolean): void {
    const link = <K, V>(index: MultiMap<K, V>, key: K | undefined, value: V): void => {
      if (key === undefined) return;
      if (adding) index.add(key, value);
      else index.delete(key, value);
    };
    const keep = <V>(index: Map<string, V>, key: string, value: V): void => {
      if (adding) index.set(key, value);
      else if (index.get(key) === value) index.delete(key);
    };
    switch (fact.type) {
      case "model_call":
        keep(this.calls, fact.call_id, fact);
        link(this.callsByDelivery, fact.delivery_id, fact);
        link(this.callsByTask, fact.task_id, fact);
        return;
      case "cost":
        link(this.costsByCall, fact.call_id, fact);
        link(this.costsByDelivery, fact.delivery_id, fact);
        return;
      case "delivery_summary":
        link(this.summariesByDelivery, fact.delivery_id, fact);
        return;
      case "packet":
        keep(this.packets, fact.packet_id, fact);
        return;
      case "repair":
        link(this.repairsByPacket, fact.packet_id, fact);
        link(this.repairsByTask, fact.task_id, fact);
        link(this.repairsByDelivery, fact.delivery_id, fact);
        return;
      case "task_snapshot":
        keep(this.snapshots, fact.snapshot_id, fact);
        return;
    }
  }
}
