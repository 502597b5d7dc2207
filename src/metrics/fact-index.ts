import type { Cost, DeliverySummary, MetricFact, ModelCall, Packet, Repair, TaskSnapshot } from "../contract/facts.ts";
import { factCodec } from "./state/codecs.ts";
import type { LinkTable, StateStore, Table } from "./state/state-store.ts";

/** A link from a key to facts: the facts under a key, each member named by its fact_id. */
export interface FactLinks<V extends MetricFact> {
  get(key: string): Iterable<V>;
}

/**
 * The accepted facts, indexed by every link the metrics follow (seed §6 and contract §2): costs to
 * calls and Deliveries, calls to Deliveries and tasks, repairs to packets, tasks and Deliveries,
 * summaries to Deliveries. Only accepted facts are here; quarantined ones are removed. Among
 * accepted facts a fact_id names one fact, so it names a link's member.
 *
 * Each map and link is a table of the engine's state store (on disk in a Kafka member); a link's
 * facts are stored under it, so reading a Delivery's costs is one prefix read, not one per cost.
 */
export class FactIndex {
  readonly calls: Table<ModelCall>;
  readonly packets: Table<Packet>;
  readonly snapshots: Table<TaskSnapshot>;

  readonly summariesByDelivery: LinkTable<DeliverySummary>;
  readonly costsByCall: LinkTable<Cost>;
  readonly costsByDelivery: LinkTable<Cost>;
  readonly callsByDelivery: LinkTable<ModelCall>;
  readonly callsByTask: LinkTable<ModelCall>;
  readonly repairsByPacket: LinkTable<Repair>;
  readonly repairsByTask: LinkTable<Repair>;
  readonly repairsByDelivery: LinkTable<Repair>;

  constructor(state: StateStore) {
    const facts = <V extends MetricFact>(prefix: string): Table<V> => state.table(prefix, factCodec as never);
    const links = <V extends MetricFact>(prefix: string): LinkTable<V> => state.links(prefix, factCodec as never);
    this.calls = facts("ic\u0000");
    this.packets = facts("ip\u0000");
    this.snapshots = facts("is\u0000");
    this.summariesByDelivery = links("lsd\u0000");
    this.costsByCall = links("lcc\u0000");
    this.costsByDelivery = links("lcd\u0000");
    this.callsByDelivery = links("lad\u0000");
    this.callsByTask = links("lat\u0000");
    this.repairsByPacket = links("lrp\u0000");
    this.repairsByTask = links("lrt\u0000");
    this.repairsByDelivery = links("lrd\u0000");
  }

  add(fact: MetricFact): void {
    this.apply(fact, true);
  }

  remove(fact: MetricFact): void {
    this.apply(fact, false);
  }

  private apply(fact: MetricFact, adding: boolean): void {
    const link = <V extends MetricFact>(index: LinkTable<V>, key: string | undefined, value: V): void => {
      if (key === undefined) return;
      if (adding) index.add(key, value.fact_id, value);
      else index.delete(key, value.fact_id);
    };
    const keep = <V extends MetricFact>(index: Table<V>, key: string, value: V): void => {
      if (adding) index.set(key, value);
      else if (index.get(key)?.fact_id === value.fact_id) index.delete(key);
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
