import type { Cost, DeliverySummary, MetricFact, ModelCall, Packet, Repair, TaskSnapshot } from "../contract/facts.ts";
import {
  byFactId,
  byItself,
  byUnit,
  DocList,
  DocTable,
  INLINE_MEMBERS,
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
  type CallDoc,
  type DeliveryDoc,
  type PacketDoc,
  type SnapshotDoc,
  type TaskIdDoc,
  type TaskReader,
} from "./entity-docs.ts";
import type { LinkTable, Table } from "./tables.ts";

/** The index's tables: a table per kind of entity document, and a link table per list a document spills (keyed by its document's id). */
export interface IndexTables {
  readonly callDocs: Table<CallDoc>;
  readonly deliveryDocs: Table<DeliveryDoc>;
  readonly taskIdDocs: Table<TaskIdDoc>;
  readonly packetDocs: Table<PacketDoc>;
  readonly snapshotDocs: Table<SnapshotDoc>;
  readonly callCosts: LinkTable<Cost>;
  readonly deliverySummaries: LinkTable<DeliverySummary>;
  readonly deliveryCosts: LinkTable<Cost>;
  readonly deliveryCalls: LinkTable<string>;
  readonly deliveryRepairs: LinkTable<Repair>;
  readonly deliveryReaders: LinkTable<TaskReader>;
  readonly taskIdCalls: LinkTable<string>;
  readonly taskIdRepairs: LinkTable<Repair>;
  readonly taskIdReaders: LinkTable<TaskReader>;
  readonly packetRepairs: LinkTable<Repair>;
}

/** The facts under a key (a Delivery's costs, a task_id's calls): what a unit reads through one link. */
export interface FactLinks<V extends MetricFact> {
  get(key: string): readonly V[];
}

/** An entity's admitted fact by its id (a call by call_id, a packet, a snapshot). */
export interface FactById<V extends MetricFact> {
  get(id: string): V | undefined;
}

/** About how many bytes a fact takes encoded, for the cache's count until a commit measures it. */
const FACT_BYTES = 160;
const REF_BYTES = 24;

/** The lists' bits in a document's `spilled`. */
const SUMMARIES = 1;
const COSTS = 2;
const CALLS = 4;
const REPAIRS = 8;
const READERS = 16;

/**
 * The accepted facts, indexed by every link the metrics follow (seed §6 and contract §2): costs to
 * calls and Deliveries, calls to Deliveries and tasks, repairs to packets, tasks and Deliveries,
 * summaries to Deliveries. Only accepted facts are here; quarantined ones are removed. Among
 * accepted facts a fact_id names one fact, and a call_id one call.
 *
 * The index is a set of entity documents (entity-docs.ts, IndexTables), so that what a unit reads
 * is one document; a list past INLINE_MEMBERS members keeps the rest in a link table of its own
 * (DocList), and every read here gives the whole list.
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

  private readonly callCosts: DocList<CallDoc, Cost>;
  private readonly deliverySummaryList: DocList<DeliveryDoc, DeliverySummary>;
  private readonly deliveryCosts: DocList<DeliveryDoc, Cost>;
  private readonly deliveryCalls: DocList<DeliveryDoc, string>;
  private readonly deliveryRepairs: DocList<DeliveryDoc, Repair>;
  private readonly deliveryReaders: DocList<DeliveryDoc, TaskReader>;
  private readonly taskIdCalls: DocList<TaskIdDoc, string>;
  private readonly taskIdRepairs: DocList<TaskIdDoc, Repair>;
  private readonly taskIdReaders: DocList<TaskIdDoc, TaskReader>;
  private readonly packetRepairs: DocList<PacketDoc, Repair>;

  /** `inlineMembers` is how many members a document's list holds itself (INLINE_MEMBERS; tests spill with fewer). */
  constructor(tables: IndexTables, inlineMembers = INLINE_MEMBERS) {
    this.callDocs = new DocTable(tables.callDocs, newCallDoc, isEmptyCallDoc);
    this.deliveryDocs = new DocTable(tables.deliveryDocs, newDeliveryDoc, isEmptyDeliveryDoc);
    this.taskIdDocs = new DocTable(tables.taskIdDocs, newTaskIdDoc, isEmptyTaskIdDoc);
    this.packetDocs = new DocTable(tables.packetDocs, newPacketDoc, isEmptyPacketDoc);
    this.snapshotDocs = new DocTable(tables.snapshotDocs, newSnapshotDoc, isEmptySnapshotDoc);

    this.callCosts = new DocList(
      COSTS,
      (doc) => doc.costs,
      (doc, list) => (doc.costs = list),
      tables.callCosts,
      byFactId,
      inlineMembers,
    );
    this.deliverySummaryList = new DocList(
      SUMMARIES,
      (doc) => doc.summaries,
      (doc, list) => (doc.summaries = list),
      tables.deliverySummaries,
      byFactId,
      inlineMembers,
    );
    this.deliveryCosts = new DocList(
      COSTS,
      (doc) => doc.costs,
      (doc, list) => (doc.costs = list),
      tables.deliveryCosts,
      byFactId,
      inlineMembers,
    );
    this.deliveryCalls = new DocList(
      CALLS,
      (doc) => doc.calls,
      (doc, list) => (doc.calls = list),
      tables.deliveryCalls,
      byItself,
      inlineMembers,
    );
    this.deliveryRepairs = new DocList(
      REPAIRS,
      (doc) => doc.repairs,
      (doc, list) => (doc.repairs = list),
      tables.deliveryRepairs,
      byFactId,
      inlineMembers,
    );
    this.deliveryReaders = new DocList(
      READERS,
      (doc) => doc.readers,
      (doc, list) => (doc.readers = list),
      tables.deliveryReaders,
      byUnit,
      inlineMembers,
    );
    this.taskIdCalls = new DocList(
      CALLS,
      (doc) => doc.calls,
      (doc, list) => (doc.calls = list),
      tables.taskIdCalls,
      byItself,
      inlineMembers,
    );
    this.taskIdRepairs = new DocList(
      REPAIRS,
      (doc) => doc.repairs,
      (doc, list) => (doc.repairs = list),
      tables.taskIdRepairs,
      byFactId,
      inlineMembers,
    );
    this.taskIdReaders = new DocList(
      READERS,
      (doc) => doc.readers,
      (doc, list) => (doc.readers = list),
      tables.taskIdReaders,
      byUnit,
      inlineMembers,
    );
    this.packetRepairs = new DocList(
      REPAIRS,
      (doc) => doc.repairs,
      (doc, list) => (doc.repairs = list),
      tables.packetRepairs,
      byFactId,
      inlineMembers,
    );

    const { callDocs, deliveryDocs, taskIdDocs, packetDocs, snapshotDocs } = this;
    this.calls = { get: (id) => callDocs.get(id)?.call };
    this.packets = { get: (id) => packetDocs.get(id)?.packet };
    this.snapshots = { get: (id) => snapshotDocs.get(id)?.snapshot };
    this.summariesByDelivery = { get: (id) => this.deliverySummaryList.all(deliveryDocs.get(id), id) };
    this.costsByCall = { get: (id) => this.callCosts.all(callDocs.get(id), id) };
    this.costsByDelivery = { get: (id) => this.deliveryCosts.all(deliveryDocs.get(id), id) };
    this.callsByDelivery = { get: (id) => resolveCalls(this.deliveryCallIds(id), callDocs) };
    this.callsByTask = { get: (id) => resolveCalls(this.taskIdCallIds(id), callDocs) };
    this.repairsByPacket = { get: (id) => this.packetRepairs.all(packetDocs.get(id), id) };
    this.repairsByTask = { get: (id) => this.taskIdRepairs.all(taskIdDocs.get(id), id) };
    this.repairsByDelivery = { get: (id) => this.deliveryRepairs.all(deliveryDocs.get(id), id) };
  }

  add(fact: MetricFact): void {
    this.apply(fact, true);
  }

  remove(fact: MetricFact): void {
    this.apply(fact, false);
  }

  /** The call_ids of a Delivery's admitted calls (their calls are in their call documents). */
  deliveryCallIds(deliveryId: string): readonly string[] {
    return this.deliveryCalls.all(this.deliveryDocs.get(deliveryId), deliveryId);
  }

  /** The call_ids of the admitted calls naming a task_id. */
  taskIdCallIds(taskId: string): readonly string[] {
    return this.taskIdCalls.all(this.taskIdDocs.get(taskId), taskId);
  }

  /** Every Delivery with summaries, and its summaries (a scan of every Delivery: for reports). */
  *deliverySummaries(): Iterable<[string, readonly DeliverySummary[]]> {
    for (const [id, doc] of this.deliveryDocs.scan()) {
      const summaries = this.deliverySummaryList.all(doc, id);
      if (summaries.length > 0) yield [id, summaries];
    }
  }

  /** The task units listing a Delivery as a member, with their cutoffs. */
  tasksListing(deliveryId: string): readonly TaskReader[] {
    return this.deliveryReaders.all(this.deliveryDocs.get(deliveryId), deliveryId);
  }

  /** The task units naming a task_id, with their cutoffs. */
  tasksNaming(taskId: string): readonly TaskReader[] {
    return this.taskIdReaders.all(this.taskIdDocs.get(taskId), taskId);
  }

  /** Records (or forgets) that a task unit reads a Delivery as a member, or a task_id, at `cutoff`. */
  listTask(
    link: { readonly deliveryId: string } | { readonly taskId: string },
    reader: TaskReader,
    adding: boolean,
  ): void {
    if ("deliveryId" in link)
      this.changeMember(this.deliveryDocs, this.deliveryReaders, link.deliveryId, reader, adding, REF_BYTES);
    else this.changeMember(this.taskIdDocs, this.taskIdReaders, link.taskId, reader, adding, REF_BYTES);
  }

  private apply(fact: MetricFact, adding: boolean): void {
    switch (fact.type) {
      case "model_call": {
        const callDoc = this.callDocs.edit(fact.call_id, adding ? FACT_BYTES : 0);
        const own = adding || callDoc.call?.fact_id === fact.fact_id;
        if (adding) callDoc.call = fact;
        else if (own) callDoc.call = undefined;
        this.callDocs.settle(fact.call_id, callDoc);
        // Withdrawing a version that does not hold the call_id: the links are the other version's.
        if (!own) return;
        if (fact.delivery_id !== undefined)
          this.changeMember(this.deliveryDocs, this.deliveryCalls, fact.delivery_id, fact.call_id, adding, REF_BYTES);
        if (fact.task_id !== undefined)
          this.changeMember(this.taskIdDocs, this.taskIdCalls, fact.task_id, fact.call_id, adding, REF_BYTES);
        return;
      }
      case "cost":
        if (fact.call_id !== undefined) this.changeFact(this.callDocs, this.callCosts, fact.call_id, fact, adding);
        if (fact.delivery_id !== undefined)
          this.changeFact(this.deliveryDocs, this.deliveryCosts, fact.delivery_id, fact, adding);
        return;
      case "delivery_summary":
        this.changeFact(this.deliveryDocs, this.deliverySummaryList, fact.delivery_id, fact, adding);
        return;
      case "packet": {
        const doc = this.packetDocs.edit(fact.packet_id, adding ? FACT_BYTES : 0);
        if (adding) doc.packet = fact;
        else if (doc.packet?.fact_id === fact.fact_id) doc.packet = undefined;
        this.packetDocs.settle(fact.packet_id, doc);
        return;
      }
      case "repair":
        if (fact.packet_id !== undefined)
          this.changeFact(this.packetDocs, this.packetRepairs, fact.packet_id, fact, adding);
        if (fact.task_id !== undefined)
          this.changeFact(this.taskIdDocs, this.taskIdRepairs, fact.task_id, fact, adding);
        if (fact.delivery_id !== undefined)
          this.changeFact(this.deliveryDocs, this.deliveryRepairs, fact.delivery_id, fact, adding);
        return;
      case "task_snapshot": {
        const doc = this.snapshotDocs.edit(fact.snapshot_id, adding ? FACT_BYTES : 0);
        if (adding) doc.snapshot = fact;
        else if (doc.snapshot?.fact_id === fact.fact_id) doc.snapshot = undefined;
        this.snapshotDocs.settle(fact.snapshot_id, doc);
        return;
      }
    }
  }

  /** A fact added to (or removed from) one list of a document, by fact_id. */
  private changeFact<D extends { spilled: number }, V extends MetricFact>(
    docs: DocTable<D>,
    list: DocList<D, V>,
    id: string,
    fact: V,
    adding: boolean,
  ): void {
    this.changeMember(docs, list, id, fact, adding, FACT_BYTES);
  }

  private changeMember<D extends { spilled: number }, V>(
    docs: DocTable<D>,
    list: DocList<D, V>,
    id: string,
    member: V,
    adding: boolean,
    bytes: number,
  ): void {
    const doc = docs.edit(id, adding ? bytes : 0);
    if (adding) list.put(doc, id, member, bytes);
    else list.drop(doc, id, list.keyOf(member));
    docs.settle(id, doc);
  }
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
