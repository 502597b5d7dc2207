import type { Cost, DeliverySummary, MetricFact, ModelCall, Packet, Repair, TaskSnapshot } from "../contract/facts.ts";
import {
  byFactId,
  byItself,
  byUnit,
  DocTable,
  dropMember,
  isEmptyCallDoc,
  isEmptyDeliveryDoc,
  isEmptyPacketDoc,
  isEmptySnapshotDoc,
  isEmptyTaskIdDoc,
  newCallDoc,
  newDeliveryDoc,
  newPacketDoc,
  newSnapshotDoc,
  newTaskIdDoc,
  putMember,
  type CallDoc,
  type DeliveryDoc,
  type PacketDoc,
  type SnapshotDoc,
  type TaskIdDoc,
  type TaskReader,
} from "./entity-docs.ts";
import { callDocCodec, deliveryDocCodec, packetDocCodec, snapshotDocCodec, taskIdDocCodec } from "./state/entity-codecs.ts";
import type { GroupKeyIds } from "./state/group-key-ids.ts";
import type { StateStore } from "./state/state-store.ts";

/** The facts under a key (a Delivery's costs, a task_id's calls): what a unit reads through one link. */
export interface FactLinks<V extends MetricFact> {
  get(key: string): readonly V[];
}

/** An entity's admitted fact by its id (a call by call_id, a packet, a snapshot). */
export interface FactById<V extends MetricFact> {
  get(id: string): V | undefined;
}

const NOTHING: readonly never[] = Object.freeze([]);

/** About how many bytes a fact takes encoded, for the cache's count until a commit measures it. */
const FACT_BYTES = 160;
const REF_BYTES = 24;

/**
 * The accepted facts, indexed by every link the metrics follow (seed §6 and contract §2): costs to
 * calls and Deliveries, calls to Deliveries and tasks, repairs to packets, tasks and Deliveries,
 * summaries to Deliveries. Only accepted facts are here; quarantined ones are removed. Among
 * accepted facts a fact_id names one fact, and a call_id one call.
 *
 * The index is a set of entity documents (entity-docs.ts) in the engine's state store (on disk in
 * a Kafka member): a call holds its costs, a Delivery its summaries, direct costs, repairs and the
 * ids of its calls, a task_id its calls' ids and repairs, so reading what a unit reads is one
 * document, and a Delivery's calls are found through their call documents (stored once). The
 * documents also hold the task units that read them (`readers`, with their cutoffs) and, for the
 * entities that are units, the unit's contributions (`UnitState` keeps them there).
 */
export class FactIndex {
  readonly callDocs: DocTable<CallDoc>;
  readonly deliveryDocs: DocTable<DeliveryDoc>;
  readonly taskIdDocs: DocTable<TaskIdDoc>;
  readonly packetDocs: DocTable<PacketDoc>;
  readonly snapshotDocs: DocTable<SnapshotDoc>;

  readonly calls: FactById<ModelCall>;
  readonly packets: FactById<Packet>;
  readonly snapshots: FactById<TaskSnapshot>;

  readonly summariesByDelivery: FactLinks<DeliverySummary>;
  readonly costsByCall: FactLinks<Cost>;
  readonly costsByDelivery: FactLinks<Cost>;
  readonly callsByDelivery: FactLinks<ModelCall>;
  readonly callsByTask: FactLinks<ModelCall>;
  readonly repairsByPacket: FactLinks<Repair>;
  readonly repairsByTask: FactLinks<Repair>;
  readonly repairsByDelivery: FactLinks<Repair>;

  /** `groupIds` names the groups of the contributions the documents hold, on disk. */
  constructor(state: StateStore, groupIds: GroupKeyIds) {
    this.callDocs = new DocTable(state.table("ec\u0000", callDocCodec(groupIds)), newCallDoc, isEmptyCallDoc);
    this.deliveryDocs = new DocTable(state.table("ed\u0000", deliveryDocCodec(groupIds)), newDeliveryDoc, isEmptyDeliveryDoc);
    this.taskIdDocs = new DocTable(state.table("et\u0000", taskIdDocCodec), newTaskIdDoc, isEmptyTaskIdDoc);
    this.packetDocs = new DocTable(state.table("ep\u0000", packetDocCodec(groupIds)), newPacketDoc, isEmptyPacketDoc);
    this.snapshotDocs = new DocTable(state.table("es\u0000", snapshotDocCodec(groupIds)), newSnapshotDoc, isEmptySnapshotDoc);

    const { callDocs, deliveryDocs, taskIdDocs, packetDocs, snapshotDocs } = this;
    this.calls = { get: (id) => callDocs.get(id)?.call };
    this.packets = { get: (id) => packetDocs.get(id)?.packet };
    this.snapshots = { get: (id) => snapshotDocs.get(id)?.snapshot };
    const callsOf = (ids: readonly string[] | undefined): readonly ModelCall[] => (ids === undefined ? NOTHING : resolveCalls(ids, callDocs));
    this.summariesByDelivery = { get: (id) => deliveryDocs.get(id)?.summaries ?? NOTHING };
    this.costsByCall = { get: (id) => callDocs.get(id)?.costs ?? NOTHING };
    this.costsByDelivery = { get: (id) => deliveryDocs.get(id)?.costs ?? NOTHING };
    this.callsByDelivery = { get: (id) => callsOf(deliveryDocs.get(id)?.calls) };
    this.callsByTask = { get: (id) => callsOf(taskIdDocs.get(id)?.calls) };
    this.repairsByPacket = { get: (id) => packetDocs.get(id)?.repairs ?? NOTHING };
    this.repairsByTask = { get: (id) => taskIdDocs.get(id)?.repairs ?? NOTHING };
    this.repairsByDelivery = { get: (id) => deliveryDocs.get(id)?.repairs ?? NOTHING };
  }

  add(fact: MetricFact): void {
    this.apply(fact, true);
  }

  remove(fact: MetricFact): void {
    this.apply(fact, false);
  }

  /** Every Delivery with summaries, and its summaries (a scan of every Delivery: for reports). */
  *deliverySummaries(): Iterable<[string, readonly DeliverySummary[]]> {
    for (const [id, doc] of this.deliveryDocs.scan()) if (doc.summaries !== undefined && doc.summaries.length > 0) yield [id, doc.summaries];
  }

  /** The task units listing a Delivery as a member, with their cutoffs. */
  tasksListing(deliveryId: string): readonly TaskReader[] {
    return this.deliveryDocs.get(deliveryId)?.readers ?? NOTHING;
  }

  /** The task units naming a task_id, with their cutoffs. */
  tasksNaming(taskId: string): readonly TaskReader[] {
    return this.taskIdDocs.get(taskId)?.readers ?? NOTHING;
  }

  /** Records (or forgets) that a task unit reads a Delivery as a member, or a task_id, at `cutoff`. */
  listTask(link: { readonly deliveryId: string } | { readonly taskId: string }, reader: TaskReader, adding: boolean): void {
    if ("deliveryId" in link) {
      const doc = this.deliveryDocs.edit(link.deliveryId, adding ? REF_BYTES : 0);
      if (adding) doc.readers = putMember(doc.readers, reader, byUnit);
      else dropMember(doc.readers, reader.unit, byUnit);
      this.deliveryDocs.settle(link.deliveryId, doc);
    } else {
      const doc = this.taskIdDocs.edit(link.taskId, adding ? REF_BYTES : 0);
      if (adding) doc.readers = putMember(doc.readers, reader, byUnit);
      else dropMember(doc.readers, reader.unit, byUnit);
      this.taskIdDocs.settle(link.taskId, doc);
    }
  }

  private apply(fact: MetricFact, adding: boolean): void {
    const grows = adding ? FACT_BYTES : 0;
    switch (fact.type) {
      case "model_call": {
        const callDoc = this.callDocs.edit(fact.call_id, grows);
        if (adding) callDoc.call = fact;
        else if (callDoc.call?.fact_id === fact.fact_id) callDoc.call = undefined;
        else {
          // Another version holds the call_id: its links are its own.
          this.callDocs.settle(fact.call_id, callDoc);
          return;
        }
        this.callDocs.settle(fact.call_id, callDoc);
        if (fact.delivery_id !== undefined) {
          const doc = this.deliveryDocs.edit(fact.delivery_id, adding ? REF_BYTES : 0);
          if (adding) doc.calls = putMember(doc.calls, fact.call_id, byItself);
          else dropMember(doc.calls, fact.call_id, byItself);
          this.deliveryDocs.settle(fact.delivery_id, doc);
        }
        if (fact.task_id !== undefined) {
          const doc = this.taskIdDocs.edit(fact.task_id, adding ? REF_BYTES : 0);
          if (adding) doc.calls = putMember(doc.calls, fact.call_id, byItself);
          else dropMember(doc.calls, fact.call_id, byItself);
          this.taskIdDocs.settle(fact.task_id, doc);
        }
        return;
      }
      case "cost":
        if (fact.call_id !== undefined) {
          const doc = this.callDocs.edit(fact.call_id, grows);
          doc.costs = change(doc.costs, fact, adding);
          this.callDocs.settle(fact.call_id, doc);
        }
        if (fact.delivery_id !== undefined) {
          const doc = this.deliveryDocs.edit(fact.delivery_id, grows);
          doc.costs = change(doc.costs, fact, adding);
          this.deliveryDocs.settle(fact.delivery_id, doc);
        }
        return;
      case "delivery_summary": {
        const doc = this.deliveryDocs.edit(fact.delivery_id, grows);
        doc.summaries = change(doc.summaries, fact, adding);
        this.deliveryDocs.settle(fact.delivery_id, doc);
        return;
      }
      case "packet": {
        const doc = this.packetDocs.edit(fact.packet_id, grows);
        if (adding) doc.packet = fact;
        else if (doc.packet?.fact_id === fact.fact_id) doc.packet = undefined;
        this.packetDocs.settle(fact.packet_id, doc);
        return;
      }
      case "repair":
        if (fact.packet_id !== undefined) {
          const doc = this.packetDocs.edit(fact.packet_id, grows);
          doc.repairs = change(doc.repairs, fact, adding);
          this.packetDocs.settle(fact.packet_id, doc);
        }
        if (fact.task_id !== undefined) {
          const doc = this.taskIdDocs.edit(fact.task_id, grows);
          doc.repairs = change(doc.repairs, fact, adding);
          this.taskIdDocs.settle(fact.task_id, doc);
        }
        if (fact.delivery_id !== undefined) {
          const doc = this.deliveryDocs.edit(fact.delivery_id, grows);
          doc.repairs = change(doc.repairs, fact, adding);
          this.deliveryDocs.settle(fact.delivery_id, doc);
        }
        return;
      case "task_snapshot": {
        const doc = this.snapshotDocs.edit(fact.snapshot_id, grows);
        if (adding) doc.snapshot = fact;
        else if (doc.snapshot?.fact_id === fact.fact_id) doc.snapshot = undefined;
        this.snapshotDocs.settle(fact.snapshot_id, doc);
        return;
      }
    }
  }
}

/** A fact added to (or removed from) a document's list of facts, by fact_id. */
function change<V extends MetricFact>(list: V[] | undefined, fact: V, adding: boolean): V[] | undefined {
  if (adding) return putMember(list, fact, byFactId);
  dropMember(list, fact.fact_id, byFactId);
  return list;
}

/** The admitted calls of these call_ids (each found in its call document). */
function resolveCalls(ids: readonly string[], callDocs: DocTable<CallDoc>): ModelCall[] {
  const calls: ModelCall[] = [];
  for (let index = 0; index < ids.length; index++) {
    const call = callDocs.get(ids[index] as string)?.call;
    if (call !== undefined) calls.push(call);
  }
  return calls;
}
