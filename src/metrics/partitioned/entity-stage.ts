import type { MetricFact } from "../../contract/facts.ts";
import { terminalSummaries } from "../delivery-reading.ts";
import type { EngineConfig } from "../engine-config.ts";
import { conflictReport } from "../fact-ledger.ts";
import { groupCodec } from "../state/codecs.ts";
import { StateStore } from "../state/state-store.ts";
import { UnitState } from "../unit-state.ts";
import { bundleId, bundleKey, bundleKind, evidenceHome, taskUnitBundle, unitBundle } from "./bundles.ts";
import type { StagePartitions } from "./ledger-stages.ts";
import { partitionOf } from "./partitioner.ts";
import { compositeKey, splitKey, type Admission, type StageRecord } from "./stage-records.ts";

const GROUPS = groupCodec();

/** Members of a bundle as the owner holds them: direct ones under "", pushed ones under the call bundle that pushed them. */
type Members = Map<string, Map<string, MetricFact>>;

/**
 * One partition of the entity stage (see bundles.ts): it owns the bundles whose keys hash to it
 * and the units named after them. It keeps every fact its units read, from three sources: its
 * own bundles' admissions, call bundles pushed to its Deliveries, and replicas of the bundles its
 * task units subscribed to. A fact held along several paths is indexed once (its "effective"
 * value; paths agree once the input is consumed). It evaluates only its own units, and sends the
 * aggregation stage its partial sums of every group its units contribute to.
 */
export class EntityPartition {
  readonly partition: number;
  private readonly stages: StagePartitions;
  private readonly units: UnitState;
  /** bundle (owned) → member tag ("" direct, or the pushing call bundle) → admission key → fact. */
  private readonly bundles = new Map<string, Members>();
  private readonly origins = new Map<string, Admission["origin"]>();
  /** Every record held (any topic), by topic and key: what its tombstone takes away. */
  private readonly arrivals = new Map<string, { readonly admission: string; readonly fact: MetricFact }>();
  /** admission key → the paths (held records) it arrived along → the fact each holds. */
  private readonly held = new Map<string, Map<string, MetricFact>>();
  private readonly effective = new Map<string, MetricFact>();
  /** bundle (owned) → subscribing partition → the event time up to which it reads the bundle. */
  private readonly subscribers = new Map<string, Map<number, number>>();
  /** call bundle (owned) → the Delivery bundle its members are pushed to. */
  private readonly pushTargets = new Map<string, string>();
  /** bundles the task units here read → cutoff → how many snapshots' task units read it up to that cutoff. */
  private readonly wanted = new Map<string, Map<number, number>>();
  private readonly laterTerminal = new Set<string>();

  constructor(partition: number, stages: StagePartitions, config: EngineConfig) {
    this.partition = partition;
    this.stages = stages;
    this.units = new UnitState(config, new StateStore(undefined), (kind, id) => this.owns(unitBundle(kind, id)));
  }

  /** What this partition holds: facts indexed (once each), bundles owned, subscriptions served. */
  stats(): { facts: number; bundles: number; subscriptions: number } {
    let subscriptions = 0;
    for (const subscribers of this.subscribers.values()) subscriptions += subscribers.size;
    return { facts: this.effective.size, bundles: this.bundles.size, subscriptions };
  }

  /** True when every unit is evaluated and every partial sent. */
  get settled(): boolean {
    return this.units.settled;
  }

  receive(record: StageRecord, out: StageRecord[]): void {
    const parts = splitKey(record.key);
    switch (record.topic) {
      case "admissions": {
        const [bundle, admission] = parts as [string, string];
        if (record.value === null) this.origins.delete(record.key);
        else this.origins.set(record.key, record.value.origin);
        this.changeMember(bundle, "", admission, record.value?.fact, out);
        return;
      }
      case "pushes": {
        const [delivery, call, admission] = parts as [string, string, string];
        this.changeMember(delivery, call, admission, record.value ?? undefined, out);
        return;
      }
      case "subscriptions": {
        const [bundle, subscriber] = parts as [string, string];
        this.subscription(bundle, Number(subscriber), record.value ?? undefined, out);
        return;
      }
      case "replicas": {
        const [, , , admission] = parts as [string, string, string, string];
        this.hold(`r\u0000${record.key}`, admission, record.value ?? undefined, out);
        return;
      }
      default:
        throw new Error(`the entity stage does not read ${record.topic}`);
    }
  }

  /** Recomputes the marked units and sends the partial sums of every group they changed. */
  flush(out: StageRecord[]): void {
    this.units.recomputeUnits();
    for (const groupKey of this.units.takeDirtyGroups()) {
      const group = this.units.group(groupKey);
      const empty = group === undefined || group.isEmpty;
      if (empty && group !== undefined) this.units.dropGroup(groupKey);
      out.push({ topic: "partials", partition: partitionOf(groupKey, this.stages.aggregation), key: compositeKey(groupKey, String(this.partition)), value: empty ? null : GROUPS.encode(group) });
    }
  }

  private owns(bundle: string): boolean {
    return partitionOf(bundle, this.stages.entities) === this.partition;
  }

  /** A member of an owned bundle changed: held, forwarded to subscribers and the push target, and its consequences. */
  private changeMember(bundle: string, tag: string, admission: string, fact: MetricFact | undefined, out: StageRecord[]): void {
    const members = this.bundles.get(bundle) ?? new Map<string, Map<string, MetricFact>>();
    const tagged = members.get(tag) ?? new Map<string, MetricFact>();
    const previous = tagged.get(admission);
    if (fact === undefined) tagged.delete(admission);
    else tagged.set(admission, fact);
    if (tagged.size === 0) members.delete(tag);
    else members.set(tag, tagged);
    if (members.size === 0) this.bundles.delete(bundle);
    else this.bundles.set(bundle, members);

    // Evidence is added by the fact's home bundle only, so once in the whole stage.
    if (tag === "") {
      if (previous !== undefined && evidenceHome(previous) === bundle) this.units.applyEvidence(previous, -1);
      if (fact !== undefined && evidenceHome(fact) === bundle) this.units.applyEvidence(fact, 1);
    }
    this.hold(`m\u0000${compositeKey(bundle, tag, admission)}`, admission, fact, out);
    for (const [subscriber, cutoff] of this.subscribers.get(bundle) ?? []) {
      const was = upTo(previous, cutoff);
      const now = upTo(fact, cutoff);
      if (was !== undefined || now !== undefined) out.push(replica(subscriber, bundle, tag, admission, now));
    }
    if (bundleKind(bundle) === "call") {
      const target = this.pushTargets.get(bundle);
      if (target !== undefined) out.push(this.push(target, bundle, admission, fact));
      if (admission === `call\u0000${bundleId(bundle)}`) this.retarget(bundle, fact, out);
    }
    if (bundleKind(bundle) === "delivery" && tag === "" && (previous?.type === "delivery_summary" || fact?.type === "delivery_summary")) this.reportLaterTerminal(bundle, out);
  }

  /** A call bundle's Delivery is its call's delivery_id: when that changes, its members move. */
  private retarget(bundle: string, call: MetricFact | undefined, out: StageRecord[]): void {
    const before = this.pushTargets.get(bundle);
    const after = call?.type === "model_call" && call.delivery_id !== undefined ? bundleKey("delivery", call.delivery_id) : undefined;
    if (before === after) return;
    const direct = this.bundles.get(bundle)?.get("") ?? new Map<string, MetricFact>();
    if (before !== undefined) for (const admission of direct.keys()) out.push(this.push(before, bundle, admission, undefined));
    if (after === undefined) this.pushTargets.delete(bundle);
    else {
      this.pushTargets.set(bundle, after);
      for (const [admission, member] of direct) out.push(this.push(after, bundle, admission, member));
    }
  }

  private push(delivery: string, call: string, admission: string, fact: MetricFact | undefined): StageRecord {
    return { topic: "pushes", partition: partitionOf(delivery, this.stages.entities), key: compositeKey(delivery, call, admission), value: fact ?? null };
  }

  /** A subscriber's cutoff for a bundle changed (undefined: unsubscribed): it gets the facts it now reads and loses the others. */
  private subscription(bundle: string, subscriber: number, cutoff: number | undefined, out: StageRecord[]): void {
    const subscribers = this.subscribers.get(bundle) ?? new Map<number, number>();
    const before = subscribers.get(subscriber);
    if (before === cutoff) return;
    if (cutoff === undefined) subscribers.delete(subscriber);
    else subscribers.set(subscriber, cutoff);
    if (subscribers.size === 0) this.subscribers.delete(bundle);
    else this.subscribers.set(bundle, subscribers);
    for (const [tag, members] of this.bundles.get(bundle) ?? []) {
      for (const [admission, fact] of members) {
        const was = upTo(fact, before);
        const now = upTo(fact, cutoff);
        if (was !== now) out.push(replica(subscriber, bundle, tag, admission, now));
      }
    }
  }

  /**
   * One path's value for an admission key changed. The indexed fact is the smallest of the paths'
   * values (by fact_id, then content), so transient disagreement between paths resolves the same
   * way everywhere; once the input is consumed all paths hold the same fact.
   */
  private hold(path: string, admission: string, fact: MetricFact | undefined, out: StageRecord[]): void {
    const previousArrival = this.arrivals.get(path);
    if (fact === undefined) this.arrivals.delete(path);
    else this.arrivals.set(path, { admission, fact });
    const paths = this.held.get(admission) ?? new Map<string, MetricFact>();
    if (previousArrival !== undefined && previousArrival.admission !== admission) throw new Error(`record ${JSON.stringify(path)} changed its admission key`);
    if (fact === undefined) paths.delete(path);
    else paths.set(path, fact);
    if (paths.size === 0) this.held.delete(admission);
    else this.held.set(admission, paths);

    let next: MetricFact | undefined;
    for (const candidate of paths.values()) if (next === undefined || before(candidate, next)) next = candidate;
    const current = this.effective.get(admission);
    if (current === next || (current !== undefined && next !== undefined && JSON.stringify(current) === JSON.stringify(next))) return;
    if (current !== undefined) {
      this.units.withdraw(current, false);
      if (current.type === "task_snapshot") this.want(current, -1, out);
    }
    if (next === undefined) this.effective.delete(admission);
    else {
      this.effective.set(admission, next);
      this.units.admit(next, false);
      if (next.type === "task_snapshot") this.want(next, 1, out);
    }
  }

  /** The task units owned here read their task_id's bundle and their members' bundles: subscribe to those owned elsewhere. */
  private want(snapshot: Extract<MetricFact, { type: "task_snapshot" }>, delta: 1 | -1, out: StageRecord[]): void {
    const bundles = new Set<string>();
    for (const [position, task] of snapshot.tasks.entries()) {
      if (!this.owns(taskUnitBundle(snapshot.snapshot_id, position))) continue;
      if (task.task_id !== undefined) bundles.add(bundleKey("task", task.task_id));
      for (const member of task.members ?? []) bundles.add(bundleKey("delivery", member));
    }
    for (const bundle of bundles) {
      if (this.owns(bundle)) continue;
      const cutoffs = this.wanted.get(bundle) ?? new Map<number, number>();
      const before = latest(cutoffs);
      const count = (cutoffs.get(snapshot.cutoff) ?? 0) + delta;
      if (count === 0) cutoffs.delete(snapshot.cutoff);
      else cutoffs.set(snapshot.cutoff, count);
      if (cutoffs.size === 0) this.wanted.delete(bundle);
      else this.wanted.set(bundle, cutoffs);
      const after = latest(cutoffs);
      if (after !== before) out.push({ topic: "subscriptions", partition: partitionOf(bundle, this.stages.entities), key: compositeKey(bundle, String(this.partition)), value: after ?? null });
    }
  }

  /** Contract §2, revision 2 §3: a Delivery with more than one admitted TERMINAL summary is reported. */
  private reportLaterTerminal(bundle: string, out: StageRecord[]): void {
    const direct = this.bundles.get(bundle)?.get("") ?? new Map<string, MetricFact>();
    const summaries = [...direct.values()].filter((fact) => fact.type === "delivery_summary");
    const terminal = terminalSummaries(summaries);
    const identity = bundle;
    if (terminal.length > 1) {
      this.laterTerminal.add(identity);
      const versions = terminal.map((fact) => ({ fact, origin: this.origins.get(compositeKey(bundle, `summary\u0000${fact.fact_id}`)) ?? undefined }));
      out.push({ topic: "conflicts", partition: 0, key: identity, value: conflictReport("LATER_TERMINAL_SUMMARY", identity, versions) });
    } else if (this.laterTerminal.delete(identity)) out.push({ topic: "conflicts", partition: 0, key: identity, value: null });
  }
}

function replica(subscriber: number, bundle: string, tag: string, admission: string, fact: MetricFact | undefined): StageRecord {
  return { topic: "replicas", partition: subscriber, key: compositeKey(String(subscriber), bundle, tag, admission), value: fact ?? null };
}

function before(a: MetricFact, b: MetricFact): boolean {
  if (a.fact_id !== b.fact_id) return a.fact_id < b.fact_id;
  return JSON.stringify(a) < JSON.stringify(b);
}

/** The fact if a subscriber reading up to `cutoff` reads it (undefined: not subscribed, or after the cutoff). */
function upTo(fact: MetricFact | undefined, cutoff: number | undefined): MetricFact | undefined {
  return fact !== undefined && cutoff !== undefined && fact.event_time <= cutoff ? fact : undefined;
}

function latest(cutoffs: ReadonlyMap<number, number>): number | undefined {
  let found: number | undefined;
  for (const cutoff of cutoffs.keys()) if (found === undefined || cutoff > found) found = cutoff;
  return found;
}
