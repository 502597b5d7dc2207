import type { MetricFact } from "../contract/facts.ts";
import { terminalSummaries } from "../metrics/delivery-reading.ts";
import type { EngineConfig } from "../metrics/engine-config.ts";
import { conflictReport, recordForm, sameRecord } from "../metrics/fact-ledger.ts";
import type { LinkTable, Table } from "../metrics/tables.ts";
import { groupCodec } from "../state/codecs/contributions.ts";
import { factCodec, originCodec, presenceCodec, stringCodec, type StoredOrigin } from "../state/codecs/values.ts";
import { unitTables } from "../state/engine-tables.ts";
import { StateStore } from "../state/state-store.ts";
import { joinReadingCodec } from "./stage-codecs.ts";
import {
  EMPTY_MEMBER,
  EMPTY_TASK_ID,
  indexTaskInputs,
  type MemberReading,
  type TaskIdReading,
  type TaskInputs,
} from "../metrics/task-inputs.ts";
import { taskLinksOf } from "../metrics/unit-key.ts";
import { UnitState } from "../metrics/unit-state.ts";
import { bundleId, bundleKey, bundleKind, evidenceHome, taskUnitBundle, unitBundle } from "./bundles.ts";
import type { StagePartitions } from "./ledger-stages.ts";
import { partitionOf } from "../kafka/key-partitioner.ts";
import { compositeKey, splitKey, type JoinReading, type StageRecord } from "./stage-records.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import { InvariantError } from "../errors.ts";

const GROUPS = groupCodec();

/** One subscription to an owned bundle: who reads it, up to which cutoff. */
interface Subscription {
  readonly subscriber: number;
  readonly cutoff: number;
}

/**
 * One partition of the entity stage (see bundles.ts): it owns the bundles whose keys hash to it
 * and the units named after them, and holds every fact of its bundles: their admissions, and the
 * call bundles pushed to its Deliveries (a fact arriving along both is indexed once: its
 * "effective" value; the paths agree once the input is consumed). Its task units read members
 * and task_ids owned elsewhere as foreign-key join responses (KIP-213's subscription and
 * response, one per (bundle, subscriber, cutoff)): the owner computes the bundle's reading at the
 * cutoff from its own index and sends it again whenever it changes. It evaluates only its own
 * units and sends the aggregation stage its partial sums of every group they contribute to.
 */
export class EntityPartition {
  readonly partition: number;
  private readonly stages: StagePartitions;
  private readonly units: UnitState;
  /** bundle (owned) → admission key → the fact admitted under it (direct members). */
  private readonly direct: LinkTable<MetricFact>;
  /** Delivery bundle (owned) → (pushing call bundle, admission key) → fact (pushed members). */
  private readonly pushed: LinkTable<MetricFact>;
  /** Where each admitted summary was read, for LATER_TERMINAL_SUMMARY reports (by admission record key). */
  private readonly origins: Table<StoredOrigin>;
  /** admission key → the paths (held records) it arrived along → the fact each holds. */
  private readonly held: LinkTable<MetricFact>;
  private readonly effective: Table<MetricFact>;
  /** call bundle (owned) → the Delivery bundle its members are pushed to. */
  private readonly pushTargets: Table<string>;
  /** bundle (owned) → (subscriber, cutoff): who reads it at which cutoff. */
  private readonly subscriptions: LinkTable<true>;
  /** response key → the reading last sent (canonical form), so only changes are sent. */
  private readonly sentResponses: Table<string>;
  /** (bundle, cutoff) the task units here read, owned elsewhere → how many snapshots' task units read it. */
  private readonly wanted: Table<string>;
  /** (bundle, cutoff) → the reading its owner last sent. */
  private readonly responses: Table<JoinReading>;
  private readonly laterTerminal: Table<true>;
  /** Owned bundles with subscribers whose readings may have changed since the last flush (flushed before any commit). */
  private readonly changedBundles = new Set<string>();

  constructor(
    partition: number,
    stages: StagePartitions,
    config: EngineConfig,
    state: StateStore = new StateStore(undefined),
  ) {
    this.partition = partition;
    this.stages = stages;
    this.units = new UnitState(config, unitTables(state, { changelog: false }), {
      owns: (kind, id) => this.owns(unitBundle(kind, id)),
      taskInputs: (index) => this.taskInputs(indexTaskInputs(index)),
    });
    this.direct = state.links("Ed\u0000", factCodec);
    this.pushed = state.links("Ep\u0000", factCodec);
    this.origins = state.table("Eo\u0000", originCodec);
    this.held = state.links("Eh\u0000", factCodec);
    this.effective = state.table("Ee\u0000", factCodec);
    this.pushTargets = state.table("Et\u0000", stringCodec);
    this.subscriptions = state.links("Es\u0000", presenceCodec);
    this.sentResponses = state.table("Er\u0000", stringCodec);
    this.wanted = state.table("Ew\u0000", stringCodec);
    this.responses = state.table("Ex\u0000", joinReadingCodec);
    this.laterTerminal = state.table("El\u0000", presenceCodec);
  }

  /** What this partition holds: facts indexed (once each), bundles owned, subscriptions served, responses held (a scan: for benchmarks). */
  stats(): { facts: number; bundles: number; subscriptions: number; responses: number } {
    let subscriptions = 0;
    for (const [, subscribers] of this.subscriptions.scan()) subscriptions += subscribers.size;
    return { facts: this.effective.size, bundles: this.direct.size, subscriptions, responses: this.responses.size };
  }

  /** True when every unit is evaluated, every response and every partial sent. */
  get settled(): boolean {
    return this.units.settled && this.changedBundles.size === 0;
  }

  receive(record: StageRecord, out: StageRecord[]): void {
    const parts = splitKey(record.key);
    switch (record.topic) {
      case "admissions": {
        const [bundle, admission] = parts as [string, string];
        if (record.value === null) this.origins.delete(record.key);
        else if (record.value.origin !== null) this.origins.set(record.key, record.value.origin);
        this.changeMember(bundle, "", admission, record.value?.fact, out);
        return;
      }
      case "pushes": {
        const [delivery, call, admission] = parts as [string, string, string];
        this.changeMember(delivery, call, admission, record.value ?? undefined, out);
        return;
      }
      case "subscriptions": {
        const [bundle, subscriber, cutoff] = parts as [string, string, string];
        this.subscription(
          bundle,
          { subscriber: Number(subscriber), cutoff: Number(cutoff) },
          record.value !== null,
          out,
        );
        return;
      }
      case "responses": {
        const [, bundle, cutoff] = parts as [string, string, string];
        const key = compositeKey(bundle, cutoff);
        if (record.value === null) this.responses.delete(key);
        else this.responses.set(key, record.value);
        const id = bundleId(bundle);
        this.units.markTasksReading(bundleKind(bundle) === "delivery" ? { deliveryId: id } : { taskId: id });
        return;
      }
      default:
        throw new InvariantError({ problem: `the entity stage does not read ${record.topic}` });
    }
  }

  /** Recomputes the marked units, answers the subscriptions whose bundles changed, and sends the partial sums of every changed group. */
  flush(out: StageRecord[]): void {
    for (const bundle of [...this.changedBundles].sort(byUtf8))
      for (const subscription of this.subscribersOf(bundle)) this.respond(bundle, subscription, true, out);
    this.changedBundles.clear();
    this.units.recomputeUnits();
    for (const groupKey of this.units.takeDirtyGroups()) {
      const group = this.units.group(groupKey);
      const empty = group === undefined || group.isEmpty;
      if (empty && group !== undefined) this.units.dropGroup(groupKey);
      out.push({
        topic: "partials",
        partition: partitionOf(groupKey, this.stages.aggregation),
        key: compositeKey(groupKey, String(this.partition)),
        value: empty ? null : GROUPS.encode(group),
      });
    }
  }

  private owns(bundle: string): boolean {
    return partitionOf(bundle, this.stages.entities) === this.partition;
  }

  /** Task units read bundles owned here from the index, and the others from their owners' responses (empty until one arrives). */
  private taskInputs(local: TaskInputs): TaskInputs {
    return {
      member: (deliveryId, cutoff): MemberReading => {
        const bundle = bundleKey("delivery", deliveryId);
        return this.owns(bundle)
          ? local.member(deliveryId, cutoff)
          : ((this.responses.get(compositeKey(bundle, String(cutoff))) as MemberReading | undefined) ?? EMPTY_MEMBER);
      },
      taskId: (taskId, cutoff): TaskIdReading => {
        const bundle = bundleKey("task", taskId);
        return this.owns(bundle)
          ? local.taskId(taskId, cutoff)
          : ((this.responses.get(compositeKey(bundle, String(cutoff))) as TaskIdReading | undefined) ?? EMPTY_TASK_ID);
      },
    };
  }

  /** A member of an owned bundle changed: held, pushed on (call bundles), and its consequences. */
  private changeMember(
    bundle: string,
    tag: string,
    admission: string,
    fact: MetricFact | undefined,
    out: StageRecord[],
  ): void {
    const members = tag === "" ? this.direct : this.pushed;
    const member = tag === "" ? admission : compositeKey(tag, admission);
    const previous = members.member(bundle, member);
    if (fact === undefined) members.delete(bundle, member);
    else members.add(bundle, member, fact);

    // Evidence is added by the fact's home bundle only, so once in the whole stage.
    if (tag === "") {
      if (previous !== undefined && evidenceHome(previous) === bundle) this.units.applyEvidence(previous, -1);
      if (fact !== undefined && evidenceHome(fact) === bundle) this.units.applyEvidence(fact, 1);
    }
    this.hold(compositeKey(bundle, tag, admission), admission, fact, out);
    if (bundleKind(bundle) === "call") {
      const target = this.pushTargets.get(bundle);
      if (target !== undefined) out.push(this.push(target, bundle, admission, fact));
      if (admission === `call\u0000${bundleId(bundle)}`) this.retarget(bundle, fact, out);
    }
    if (
      bundleKind(bundle) === "delivery" &&
      tag === "" &&
      (previous?.type === "delivery_summary" || fact?.type === "delivery_summary")
    )
      this.reportLaterTerminal(bundle, out);
  }

  /** A call bundle's Delivery is its call's delivery_id: when that changes, its members move. */
  private retarget(bundle: string, call: MetricFact | undefined, out: StageRecord[]): void {
    const before = this.pushTargets.get(bundle);
    const after =
      call?.type === "model_call" && call.delivery_id !== undefined
        ? bundleKey("delivery", call.delivery_id)
        : undefined;
    if (before === after) return;
    const direct = this.direct.members(bundle);
    if (before !== undefined)
      for (const admission of direct.keys()) out.push(this.push(before, bundle, admission, undefined));
    if (after === undefined) this.pushTargets.delete(bundle);
    else {
      this.pushTargets.set(bundle, after);
      for (const [admission, member] of direct) out.push(this.push(after, bundle, admission, member));
    }
  }

  private push(delivery: string, call: string, admission: string, fact: MetricFact | undefined): StageRecord {
    return {
      topic: "pushes",
      partition: partitionOf(delivery, this.stages.entities),
      key: compositeKey(delivery, call, admission),
      value: fact ?? null,
    };
  }

  private subscription(bundle: string, subscription: Subscription, subscribed: boolean, out: StageRecord[]): void {
    const member = compositeKey(String(subscription.subscriber), String(subscription.cutoff));
    if (subscribed) this.subscriptions.add(bundle, member, true);
    else this.subscriptions.delete(bundle, member);
    this.respond(bundle, subscription, subscribed, out);
  }

  private *subscribersOf(bundle: string): Iterable<Subscription> {
    for (const member of this.subscriptions.members(bundle).keys()) {
      const [subscriber, cutoff] = splitKey(member) as [string, string];
      yield { subscriber: Number(subscriber), cutoff: Number(cutoff) };
    }
  }

  /** Sends the bundle's reading at the subscriber's cutoff when it differs from the last one sent (a tombstone when unsubscribed). */
  private respond(bundle: string, { subscriber, cutoff }: Subscription, subscribed: boolean, out: StageRecord[]): void {
    const key = compositeKey(String(subscriber), bundle, String(cutoff));
    if (!subscribed) {
      this.sentResponses.delete(key);
      out.push({ topic: "responses", partition: subscriber, key, value: null });
      return;
    }
    const local = indexTaskInputs(this.units.index);
    const reading: JoinReading =
      bundleKind(bundle) === "delivery"
        ? local.member(bundleId(bundle), cutoff)
        : local.taskId(bundleId(bundle), cutoff);
    const form = canonical(reading);
    if (this.sentResponses.get(key) === form) return;
    this.sentResponses.set(key, form);
    out.push({ topic: "responses", partition: subscriber, key, value: reading });
  }

  /**
   * One path's value for an admission key changed. The indexed fact is the smallest of the paths'
   * values (by fact_id, then content), so transient disagreement between paths resolves the same
   * way everywhere; once the input is consumed all paths hold the same fact.
   */
  private hold(path: string, admission: string, fact: MetricFact | undefined, out: StageRecord[]): void {
    if (fact === undefined) this.held.delete(admission, path);
    else this.held.add(admission, path, fact);
    const paths = this.held.members(admission);

    let next: MetricFact | undefined;
    for (const candidate of paths.values()) if (next === undefined || before(candidate, next)) next = candidate;
    const current = this.effective.get(admission);
    if (current === next || (current !== undefined && next !== undefined && sameRecord(current, next))) return;
    if (current !== undefined) {
      this.markReadingsOf(current);
      this.units.withdraw(current, false);
      if (current.type === "task_snapshot") this.want(current, -1, out);
    }
    if (next === undefined) this.effective.delete(admission);
    else {
      this.effective.set(admission, next);
      this.units.admit(next, false);
      this.markReadingsOf(next);
      if (next.type === "task_snapshot") this.want(next, 1, out);
    }
  }

  /**
   * The subscribed readings an indexed fact is part of (what `indexTaskInputs` reads it under): a
   * reading is computed from the index, and the index holds the effective fact, which can change
   * when another bundle's path to the same fact changes, so readings are refreshed on index
   * changes, not on member changes.
   */
  private markReadingsOf(fact: MetricFact): void {
    const { taskId, deliveryId } = taskLinksOf(fact, (callId) => this.units.index.calls.get(callId));
    for (const bundle of [
      deliveryId === undefined ? undefined : bundleKey("delivery", deliveryId),
      taskId === undefined ? undefined : bundleKey("task", taskId),
    ]) {
      if (bundle !== undefined && this.subscriptions.members(bundle).size > 0) this.changedBundles.add(bundle);
    }
  }

  /** The task units owned here read their task_id and their members at their snapshot's cutoff: subscribe to those owned elsewhere. */
  private want(snapshot: Extract<MetricFact, { type: "task_snapshot" }>, delta: 1 | -1, out: StageRecord[]): void {
    const bundles = new Set<string>();
    for (const [position, task] of snapshot.tasks.entries()) {
      if (!this.owns(taskUnitBundle(snapshot.snapshot_id, position))) continue;
      if (task.task_id !== undefined) bundles.add(bundleKey("task", task.task_id));
      for (const member of task.members ?? []) bundles.add(bundleKey("delivery", member));
    }
    const cutoff = String(snapshot.cutoff);
    for (const bundle of bundles) {
      if (this.owns(bundle)) continue;
      const key = compositeKey(bundle, cutoff);
      const count = Number(this.wanted.get(key) ?? "0") + delta;
      if (count === 0) this.wanted.delete(key);
      else this.wanted.set(key, String(count));
      if ((delta === 1 && count === 1) || count === 0)
        out.push({
          topic: "subscriptions",
          partition: partitionOf(bundle, this.stages.entities),
          key: compositeKey(bundle, String(this.partition), cutoff),
          value: count === 0 ? null : true,
        });
    }
  }

  /** Contract §2, revision 2 §3: a Delivery with more than one admitted TERMINAL summary is reported. */
  private reportLaterTerminal(bundle: string, out: StageRecord[]): void {
    const summaries = [...this.direct.get(bundle)].filter((fact) => fact.type === "delivery_summary");
    const terminal = terminalSummaries(summaries);
    const identity = bundle;
    if (terminal.length > 1) {
      this.laterTerminal.set(identity, true);
      const versions = terminal.map((fact) => ({
        fact,
        origin: this.origins.get(compositeKey(bundle, `summary\u0000${fact.fact_id}`)),
      }));
      out.push({
        topic: "conflicts",
        partition: 0,
        key: identity,
        value: conflictReport("LATER_TERMINAL_SUMMARY", identity, versions),
      });
    } else if (this.laterTerminal.get(identity) !== undefined) {
      this.laterTerminal.delete(identity);
      out.push({ topic: "conflicts", partition: 0, key: identity, value: null });
    }
  }
}

function before(a: MetricFact, b: MetricFact): boolean {
  if (a === b) return false;
  if (a.fact_id !== b.fact_id) return byUtf8(a.fact_id, b.fact_id) < 0;
  return byUtf8(recordForm(a), recordForm(b)) < 0;
}

/** A reading's canonical form (money may hold bigints past 2^53 − 1). */
function canonical(reading: JoinReading): string {
  return JSON.stringify(reading, (_, value: unknown) => (typeof value === "bigint" ? `${value.toString()}n` : value));
}
