import type { MetricId } from "../../src/catalog/metric-definitions.ts";
import type {
  Cost,
  DeliverySummary,
  MetricFact,
  ModelCall,
  Packet,
  Repair,
  TaskSnapshot,
} from "../../src/contract/facts.ts";
import { cohortOf, NO_COHORT, resultKey, snapshotScopeOf, windowScopeOf } from "../../src/metrics/scope.ts";
import { domainIdentity } from "../../src/metrics/fact-ledger.ts";
import { markUnitsReading, type UnitReaders } from "../../src/metrics/unit-key.ts";
import type { Cohort, Scope } from "../../src/contract/result-record.ts";
import type { RecordCache } from "./record-cache.ts";

/*
 * The metric engine's state as keyed records (the layout docs/engine-state.md proposes), driven by
 * real workload facts, so that a store is measured on the engine's key and value shapes and its
 * operation mix: per fact a ledger read and write by identity, entity documents (the FactIndex)
 * read-modify-written by entity id, the task index; per commit the units the facts touched are
 * recomputed from their entity documents, their previous contributions are read and retracted and
 * the new ones added to the group sums (by result key), and the changed results are compared with
 * the published ones. The contributions' content is shaped like the engine's (metric, scope,
 * cohort, flags, amount, as-of), not computed by its formulas: this measures the store, not the
 * metrics. Conflicts and re-reports are counted and otherwise ignored (rare in the workload).
 */

const SEP = "\u0000";
const DAY_MILLIS = 86_400_000;

/** Key prefixes: one keyspace per store of the design. */
const KEY = {
  fact: (factId: string) => `F${SEP}${factId}`,
  identity: (kind: string, id: string) => `I${SEP}${kind}${SEP}${id}`,
  entity: (kind: EntityKind, id: string) => `E${SEP}${kind}${SEP}${id}`,
  taskUnits: (by: "task" | "member", id: string) => `T${SEP}${by}${SEP}${id}`,
  contributions: (unit: string) => `C${SEP}${unit}`,
  group: (groupKey: string) => `G${SEP}${groupKey}`,
  asOf: (groupKey: string, time: number) => `A${SEP}${groupKey}${SEP}${time}`,
  published: (groupKey: string) => `P${SEP}${groupKey}`,
  checkpoint: "M\u0000checkpoint",
};

export const CHECKPOINT_KEY = KEY.checkpoint;
export const factKey = KEY.fact;

type EntityKind = "call" | "delivery" | "task" | "packet";

/** The FactIndex as one document per entity: the fact ids (or call ids) linked to it. */
interface EntityDocument {
  self?: string;
  calls?: string[];
  costs?: string[];
  summaries?: string[];
  repairs?: string[];
}

/** What a unit added to one group, kept so that it can be retracted exactly. */
interface StoredContribution {
  readonly g: string;
  readonly f: number;
  readonly a: number;
  readonly t: number;
  readonly k?: string;
}

interface GroupSums {
  units: number;
  candidates: number;
  covered: number;
  eligible: number;
  hits: number;
  amount: number;
  categories: Record<string, number>;
}

const CANDIDATE = 1;
const COVERED = 2;
const ELIGIBLE = 4;
const HIT = 8;

export interface ShapeCounters {
  facts: number;
  redeliveries: number;
  identityCollisions: number;
  unitRecomputes: number;
  contributionsApplied: number;
  resultsPublished: number;
}

export class EngineShapedState {
  private readonly cache: RecordCache;
  private readonly dirtyUnits = new Set<string>();
  private readonly dirtyGroups = new Set<string>();
  readonly counters: ShapeCounters = {
    facts: 0,
    redeliveries: 0,
    identityCollisions: 0,
    unitRecomputes: 0,
    contributionsApplied: 0,
    resultsPublished: 0,
  };

  constructor(cache: RecordCache) {
    this.cache = cache;
  }

  /** Ledger, index and unit marking for one fact (MetricEngine.ingest's part); false when not recorded. */
  apply(fact: MetricFact): boolean {
    this.counters.facts += 1;
    const body = JSON.stringify(fact);
    const own = this.cache.get<MetricFact>(KEY.fact(fact.fact_id));
    if (own !== undefined) {
      if (JSON.stringify(own) === body) this.counters.redeliveries += 1;
      else this.counters.identityCollisions += 1;
      return false;
    }
    const domain = domainIdentity(fact);
    if (domain !== undefined && this.cache.get<string>(KEY.identity(domain[0], domain[1])) !== undefined) {
      this.counters.identityCollisions += 1;
      return false;
    }
    this.cache.put(KEY.fact(fact.fact_id), fact, body.length);
    if (domain !== undefined) this.cache.put(KEY.identity(domain[0], domain[1]), fact.fact_id, fact.fact_id.length + 2);
    this.index(fact);
    this.markReaders(fact);
    if ((fact.type === "cost" && fact.delivery_id !== undefined) || fact.type === "delivery_summary") {
      this.applyToGroup(
        {
          g: groupKey("direct-evidence-basis-rate", windowScopeOf(fact.event_time, DAY_MILLIS), NO_COHORT),
          f: CANDIDATE | COVERED | ELIGIBLE | HIT,
          a: 0,
          t: fact.event_time,
        },
        1,
      );
    }
    return true;
  }

  /** Recomputes the touched units and publishes changed results (MetricEngine.flush's part). */
  flush(): void {
    for (const unit of this.dirtyUnits) this.recompute(unit);
    this.dirtyUnits.clear();
    for (const key of this.dirtyGroups) {
      const sums = this.cache.get<GroupSums>(KEY.group(key));
      const rendered = sums === undefined || sums.units === 0 ? undefined : JSON.stringify({ key, ...sums });
      if (this.cache.get<string>(KEY.published(key)) === rendered) continue;
      this.cache.put(KEY.published(key), rendered, rendered?.length ?? 0);
      this.counters.resultsPublished += 1;
    }
    this.dirtyGroups.clear();
  }

  private index(fact: MetricFact): void {
    switch (fact.type) {
      case "model_call":
        this.link("call", fact.call_id, "self", fact.fact_id);
        if (fact.delivery_id !== undefined) this.link("delivery", fact.delivery_id, "calls", fact.call_id);
        if (fact.task_id !== undefined) this.link("task", fact.task_id, "calls", fact.call_id);
        return;
      case "cost":
        if (fact.call_id !== undefined) this.link("call", fact.call_id, "costs", fact.fact_id);
        if (fact.delivery_id !== undefined) this.link("delivery", fact.delivery_id, "costs", fact.fact_id);
        return;
      case "delivery_summary":
        this.link("delivery", fact.delivery_id, "summaries", fact.fact_id);
        return;
      case "packet":
        this.link("packet", fact.packet_id, "self", fact.fact_id);
        return;
      case "repair":
        if (fact.packet_id !== undefined) this.link("packet", fact.packet_id, "repairs", fact.fact_id);
        if (fact.task_id !== undefined) this.link("task", fact.task_id, "repairs", fact.fact_id);
        if (fact.delivery_id !== undefined) this.link("delivery", fact.delivery_id, "repairs", fact.fact_id);
        return;
      case "task_snapshot":
        fact.tasks.forEach((task, position) => {
          const unit = `${fact.snapshot_id}${SEP}${position}`;
          if (task.task_id !== undefined) this.addTaskUnit("task", task.task_id, unit);
          for (const member of task.members ?? []) this.addTaskUnit("member", member, unit);
        });
        return;
    }
  }

  private link(kind: EntityKind, id: string, field: keyof EntityDocument, value: string): void {
    const key = KEY.entity(kind, id);
    const document = this.cache.get<EntityDocument>(key) ?? {};
    if (field === "self") document.self = value;
    else (document[field] ??= []).push(value);
    this.cache.put(key, document, documentBytes(document));
  }

  private addTaskUnit(by: "task" | "member", id: string, unit: string): void {
    const key = KEY.taskUnits(by, id);
    const units = [...(this.cache.get<string[]>(key) ?? []), unit];
    this.cache.put(key, units, units.length * (unit.length + 3));
  }

  private markReaders(fact: MetricFact): void {
    markUnitsReading(fact, this.readers, (kind, id) => void this.dirtyUnits.add(`${kind}${SEP}${id}`));
  }

  /** The engine's own reader lookup (src/metrics/unit-key.ts) over this model's records. */
  private readonly readers: UnitReaders = {
    callOf: (callId) => this.callOf(callId),
    // This model keeps no cutoffs: every task unit listed is marked, as the engine did before it kept them.
    tasksNaming: (taskId) =>
      (this.cache.get<string[]>(KEY.taskUnits("task", taskId)) ?? []).map((unit) => ({
        unit,
        cutoff: Number.POSITIVE_INFINITY,
      })),
    tasksListing: (deliveryId) =>
      (this.cache.get<string[]>(KEY.taskUnits("member", deliveryId)) ?? []).map((unit) => ({
        unit,
        cutoff: Number.POSITIVE_INFINITY,
      })),
  };

  private recompute(unit: string): void {
    this.counters.unitRecomputes += 1;
    const separator = unit.indexOf(SEP);
    const kind = unit.slice(0, separator);
    const id = unit.slice(separator + 1);
    const next = this.evaluate(kind, id);
    const key = KEY.contributions(unit);
    for (const previous of this.cache.get<StoredContribution[]>(key) ?? []) this.applyToGroup(previous, -1);
    for (const contribution of next) this.applyToGroup(contribution, 1);
    this.cache.put(
      key,
      next.length === 0 ? undefined : next,
      next.reduce((bytes, contribution) => bytes + contribution.g.length + 40, 2),
    );
  }

  private applyToGroup(contribution: StoredContribution, sign: 1 | -1): void {
    this.counters.contributionsApplied += 1;
    const key = KEY.group(contribution.g);
    const sums = this.cache.get<GroupSums>(key) ?? {
      units: 0,
      candidates: 0,
      covered: 0,
      eligible: 0,
      hits: 0,
      amount: 0,
      categories: {},
    };
    sums.units += sign;
    if (contribution.f & CANDIDATE) sums.candidates += sign;
    if (contribution.f & COVERED) sums.covered += sign;
    if (contribution.f & ELIGIBLE) sums.eligible += sign;
    if (contribution.f & HIT) sums.hits += sign;
    sums.amount += sign * contribution.a;
    if (contribution.k !== undefined) sums.categories[contribution.k] = (sums.categories[contribution.k] ?? 0) + sign;
    this.cache.put(key, sums.units === 0 ? undefined : sums, 160);
    // as_of = max over the group's contributions: a counted multiset of times, one key per time.
    const asOfKey = KEY.asOf(contribution.g, contribution.t);
    const count = (this.cache.get<number>(asOfKey) ?? 0) + sign;
    this.cache.put(asOfKey, count === 0 ? undefined : count, 4);
    this.dirtyGroups.add(contribution.g);
  }

  private fact<T extends MetricFact>(factId: string): T | undefined {
    return this.cache.get<T>(KEY.fact(factId));
  }

  private byIdentity<T extends MetricFact>(kind: string, id: string): T | undefined {
    const factId = this.cache.get<string>(KEY.identity(kind, id));
    return factId === undefined ? undefined : this.fact<T>(factId);
  }

  private callOf(callId: string): ModelCall | undefined {
    return this.byIdentity<ModelCall>("call", callId);
  }

  private entity(kind: EntityKind, id: string): EntityDocument {
    return this.cache.get<EntityDocument>(KEY.entity(kind, id)) ?? {};
  }

  private facts<T extends MetricFact>(ids: readonly string[] | undefined): T[] {
    const found: T[] = [];
    for (const id of ids ?? []) {
      const fact = this.fact<T>(id);
      if (fact !== undefined) found.push(fact);
    }
    return found;
  }

  private evaluate(kind: string, id: string): StoredContribution[] {
    switch (kind) {
      case "call":
        return this.callUnit(id);
      case "delivery":
        return this.deliveryUnit(id);
      case "packet":
        return this.packetUnit(id);
      case "task":
        return this.taskUnit(id);
      case "snapshot": {
        const snapshot = this.byIdentity<TaskSnapshot>("snapshot", id);
        return snapshot === undefined || snapshot.tasks.length > 0
          ? []
          : [
              {
                g: groupKey("task-cohort-comparison-eligibility", snapshotScopeOf(id, snapshot.cutoff), NO_COHORT),
                f: 0,
                a: 0,
                t: snapshot.event_time,
              },
            ];
      }
      default:
        return [];
    }
  }

  private callUnit(callId: string): StoredContribution[] {
    const call = this.callOf(callId);
    if (call === undefined || !call.operational) return [];
    const costs = this.facts<Cost>(this.entity("call", callId).costs);
    const scope = windowScopeOf(call.event_time, DAY_MILLIS);
    const tuple = tupleOf(call);
    const all = CANDIDATE | COVERED | ELIGIBLE;
    const contributions: StoredContribution[] = [call, ...costs].map((fact) => ({
      g: groupKey("direct-evidence-basis-rate", windowScopeOf(fact.event_time, DAY_MILLIS), NO_COHORT),
      f: all | HIT,
      a: 0,
      t: fact.event_time,
    }));
    const money = costs.reduce((sum, cost) => sum + (cost.amount_minor ?? 0), 0);
    contributions.push(
      {
        g: groupKey("operational-latency-ms", scope, tuple),
        f: all,
        a: Math.round((call.span_duration_ms ?? 0) * 1000),
        t: call.event_time,
      },
      {
        g: groupKey(
          "operational-token-usage",
          scope,
          tuple === NO_COHORT ? tuple : cohortOf({ ...tuple, direction: "input" }),
        ),
        f: all,
        a: call.input_tokens ?? 0,
        t: call.event_time,
      },
      {
        g: groupKey(
          "operational-token-usage",
          scope,
          tuple === NO_COHORT ? tuple : cohortOf({ ...tuple, direction: "output" }),
        ),
        f: all,
        a: call.output_tokens ?? 0,
        t: call.event_time,
      },
      { g: groupKey("operational-attributable-cost", scope, tuple), f: all, a: money, t: call.event_time },
      { g: groupKey("operational-usage-availability", scope, tuple), f: all | HIT, a: 0, t: call.event_time },
    );
    return contributions;
  }

  /** Costs of a Delivery: direct, and through its calls (deliveryCosts). */
  private deliveryCosts(document: EntityDocument): Cost[] {
    const costs = this.facts<Cost>(document.costs);
    for (const callId of document.calls ?? []) costs.push(...this.facts<Cost>(this.entity("call", callId).costs));
    return costs;
  }

  private deliveryUnit(deliveryId: string): StoredContribution[] {
    const document = this.entity("delivery", deliveryId);
    const terminal = earliestTerminal(this.facts<DeliverySummary>(document.summaries));
    if (terminal === undefined) return [];
    const scope = windowScopeOf(terminal.event_time, DAY_MILLIS);
    const money = this.deliveryCosts(document).reduce((sum, cost) => sum + (cost.amount_minor ?? 0), 0);
    const all = CANDIDATE | COVERED | ELIGIBLE;
    const t = terminal.event_time;
    return [
      { g: groupKey("trajectory-partial-cost", scope, NO_COHORT), f: all, a: money, t },
      {
        g: groupKey("delivery-stage-reach", scope, NO_COHORT),
        f: all,
        a: 0,
        t,
        ...(terminal.stage_reached === undefined ? {} : { k: terminal.stage_reached }),
      },
      {
        g: groupKey("delivery-terminal-outcome-rate", scope, NO_COHORT),
        f: all,
        a: 0,
        t,
        ...(terminal.outcome === undefined ? {} : { k: terminal.outcome }),
      },
      { g: groupKey("delivery-cycle-time-ms", scope, NO_COHORT), f: all, a: (terminal.elapsed_ms ?? 0) * 1000, t },
    ];
  }

  private packetUnit(packetId: string): StoredContribution[] {
    const document = this.entity("packet", packetId);
    const packet = document.self === undefined ? undefined : this.fact<Packet>(document.self);
    if (packet === undefined) return [];
    const repairs = this.facts<Repair>(document.repairs);
    const repaired = repairs.some((repair) => repair.attributable);
    const asOf = repairs.reduce((latest, repair) => Math.max(latest, repair.event_time), packet.event_time);
    return [
      {
        g: groupKey("packet-rework-rate", windowScopeOf(packet.event_time, DAY_MILLIS), NO_COHORT),
        f: CANDIDATE | COVERED | ELIGIBLE | (repaired ? HIT : 0),
        a: 0,
        t: asOf,
      },
    ];
  }

  private taskUnit(unit: string): StoredContribution[] {
    const separator = unit.lastIndexOf(SEP);
    const snapshot = this.byIdentity<TaskSnapshot>("snapshot", unit.slice(0, separator));
    const task = snapshot?.tasks[Number(unit.slice(separator + 1))];
    if (snapshot === undefined || task === undefined) return [];
    const readable = (eventTime: number): boolean => eventTime <= snapshot.cutoff;
    const scope = snapshotScopeOf(snapshot.snapshot_id, snapshot.cutoff);
    const members = [...new Set(task.members ?? [])];
    const taskDocument = task.task_id === undefined ? {} : this.entity("task", task.task_id);
    const callIds = new Set(taskDocument.calls ?? []);
    const repairIds = new Set(taskDocument.repairs ?? []);
    const outcomes = new Set<string>();
    let money = 0;
    let asOf = snapshot.event_time;
    for (const member of members) {
      const document = this.entity("delivery", member);
      const terminal = earliestTerminal(
        this.facts<DeliverySummary>(document.summaries).filter((summary) => readable(summary.event_time)),
      );
      if (terminal?.outcome !== undefined) outcomes.add(terminal.outcome);
      for (const cost of this.deliveryCosts(document)) if (readable(cost.event_time)) money += cost.amount_minor ?? 0;
      for (const callId of document.calls ?? []) callIds.add(callId);
      for (const repairId of document.repairs ?? []) repairIds.add(repairId);
    }
    const repaired = this.facts<Repair>([...repairIds]).some(
      (repair) => readable(repair.event_time) && repair.attributable,
    );
    const tuples = new Map<string, Cohort>();
    for (const callId of callIds) {
      const call = this.callOf(callId);
      if (call === undefined || !call.operational || !readable(call.event_time)) continue;
      asOf = Math.max(asOf, call.event_time);
      const tuple = tupleOf(call);
      tuples.set(JSON.stringify(tuple), tuple);
    }
    const template = task.role_template === undefined ? NO_COHORT : cohortOf({ role_template: task.role_template });
    const eligible = outcomes.size === 1 ? CANDIDATE | COVERED | ELIGIBLE : CANDIDATE;
    const [outcome] = outcomes;
    const contributions: StoredContribution[] = [
      { g: groupKey("task-cohort-comparison-eligibility", scope, NO_COHORT), f: eligible | HIT, a: 0, t: asOf },
      { g: groupKey("role-template-rework-rate", scope, template), f: eligible | (repaired ? HIT : 0), a: 0, t: asOf },
      { g: groupKey("role-template-trajectory-partial-cost", scope, template), f: eligible, a: money, t: asOf },
    ];
    for (const tuple of tuples.values())
      contributions.push({
        g: groupKey("role-model-task-outcome-rate", scope, tuple),
        f: eligible,
        a: 0,
        t: asOf,
        ...(outcome === undefined ? {} : { k: outcome }),
      });
    return contributions;
  }
}

function groupKey(metricId: MetricId, scope: Scope, cohort: Cohort): string {
  return resultKey(metricId, scope, cohort);
}

function tupleOf(call: ModelCall): Cohort {
  const { provider, model, role, runtime } = call;
  return provider && model && role && runtime ? cohortOf({ provider, model, role, runtime }) : NO_COHORT;
}

function earliestTerminal(summaries: readonly DeliverySummary[]): DeliverySummary | undefined {
  let earliest: DeliverySummary | undefined;
  for (const summary of summaries) {
    if (summary.status !== "TERMINAL") continue;
    if (
      earliest === undefined ||
      summary.event_time < earliest.event_time ||
      (summary.event_time === earliest.event_time && summary.fact_id < earliest.fact_id)
    )
      earliest = summary;
  }
  return earliest;
}

function documentBytes(document: EntityDocument): number {
  let bytes = 16 + (document.self?.length ?? 0);
  for (const list of [document.calls, document.costs, document.summaries, document.repairs])
    for (const id of list ?? []) bytes += id.length + 3;
  return bytes;
}
