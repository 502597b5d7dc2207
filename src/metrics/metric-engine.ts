import type { CatalogSummary } from "../catalog/metric-definitions.ts";
import type { MetricFact } from "../contract/facts.ts";
import type { Contribution } from "./contribution.ts";
import type { EngineConfig } from "./engine-config.ts";
import { FactIndex } from "./fact-index.ts";
import { terminalSummaries } from "./delivery-reading.ts";
import { FactLedger, type Conflict, type FactOrigin, type LedgerOutcome } from "./fact-ledger.ts";
import { GroupAggregate } from "./group-aggregate.ts";
import { byUtf8 } from "./key-order.ts";
import { MultiMap } from "./multi-map.ts";
import { renderGroup } from "./render-result.ts";
import type { MetricResult, ResultChange } from "./result-record.ts";
import { callContributions } from "./units/call-unit.ts";
import { deliveryContributions } from "./units/delivery-unit.ts";
import { evidenceContributions } from "./units/evidence-unit.ts";
import { finalizeContribution } from "./units/finalize.ts";
import { packetContributions } from "./units/packet-unit.ts";
import { emptySnapshotContributions, taskContributions } from "./units/task-unit.ts";
import { markUnitsReading, taskUnitId, UNIT_KINDS, type TaskUnitIndex, type UnitKind } from "./unit-key.ts";

const NO_CONTRIBUTIONS: readonly Contribution[] = [];

/**
 * The metric engine: a pure, incremental function from a set of observation facts to metric
 * results. `ingest` records a fact (accepting, ignoring a redelivery, or quarantining a conflict)
 * and marks the units that read it; `flush` recomputes those units, swaps each one's old
 * contributions for its new ones in the group sums, and returns the result keys that changed.
 * Because every unit is a function of the accepted fact set and every group is a sum of units,
 * results do not depend on arrival order, batching or how often flush is called.
 */
export class MetricEngine {
  private readonly ledger = new FactLedger();
  private readonly index = new FactIndex();
  private readonly tasks: TaskUnitIndex = { byTaskId: new MultiMap(), byMember: new MultiMap() };
  private readonly dirtyUnits: Record<UnitKind, Set<string>> = { call: new Set(), delivery: new Set(), packet: new Set(), task: new Set(), snapshot: new Set() };
  private readonly contributions: Record<UnitKind, Map<string, readonly Contribution[]>> = { call: new Map(), delivery: new Map(), packet: new Map(), task: new Map(), snapshot: new Map() };
  private readonly markDirty = (kind: UnitKind, id: string): void => {
    this.dirtyUnits[kind].add(id);
  };
  private readonly groups = new Map<string, GroupAggregate>();
  private readonly dirtyGroups = new Set<string>();
  /** group key → the result keys it published last (money groups publish one per slice). */
  private readonly publishedKeys = new Map<string, readonly string[]>();
  private readonly published = new Map<string, { json: string; result: MetricResult }>();
  private readonly config: EngineConfig;
  private readonly catalog: CatalogSummary;

  constructor(config: EngineConfig, catalog: CatalogSummary) {
    this.config = config;
    this.catalog = catalog;
  }

  /** `origin` (a file line, a topic offset) is named in conflict reports for every version. */
  ingest(fact: MetricFact, origin?: FactOrigin): LedgerOutcome {
    const outcome = this.ledger.record(fact, origin);
    for (const earlier of outcome.retracted) this.withdraw(earlier);
    for (const admitted of outcome.admitted) this.admit(admitted);
    return outcome;
  }

  /**
   * Contract §2, revision 2 §3: when an accepted TERMINAL summary leaves its Delivery with more than
   * one, the later ones are a conflict to report (LATER_TERMINAL_SUMMARY); the earliest is read.
   */
  laterTerminalConflict(fact: MetricFact): Conflict | undefined {
    if (fact.type !== "delivery_summary" || fact.status !== "TERMINAL") return undefined;
    const terminal = terminalSummaries(this.index.summariesByDelivery.get(fact.delivery_id));
    return terminal.length > 1 && terminal.includes(fact) ? this.ledger.laterTerminalConflict(fact.delivery_id, terminal) : undefined;
  }

  /** Recomputes dirty units and returns every result key whose record changed (or vanished). */
  flush(): ResultChange[] {
    for (const kind of UNIT_KINDS) {
      for (const id of this.dirtyUnits[kind]) this.recompute(kind, id);
      this.dirtyUnits[kind].clear();
    }
    const changes: ResultChange[] = [];
    for (const groupKey of [...this.dirtyGroups].sort(byUtf8)) {
      const group = this.groups.get(groupKey);
      const rendered = group === undefined || group.isEmpty ? [] : renderGroup(group, this.catalog, this.config.coverageThresholdHundredths);
      if (group !== undefined && group.isEmpty) this.groups.delete(groupKey);
      const keys = rendered.map((entry) => entry.key);
      for (const stale of this.publishedKeys.get(groupKey) ?? []) {
        if (keys.includes(stale)) continue;
        this.published.delete(stale);
        changes.push({ key: stale, result: null });
      }
      for (const { key, result } of rendered) {
        const json = JSON.stringify(result);
        if (this.published.get(key)?.json === json) continue;
        this.published.set(key, { json, result });
        changes.push({ key, result });
      }
      if (keys.length === 0) this.publishedKeys.delete(groupKey);
      else this.publishedKeys.set(groupKey, keys);
    }
    this.dirtyGroups.clear();
    return changes.sort((a, b) => byUtf8(a.key, b.key));
  }

  /** Every current result, sorted by key, as canonical JSON lines (flushes first). */
  results(): { key: string; json: string; result: MetricResult }[] {
    this.flush();
    return [...this.published.entries()].sort(([a], [b]) => byUtf8(a, b)).map(([key, entry]) => ({ key, ...entry }));
  }

  /** Identity conflicts and Deliveries with later TERMINAL summaries, sorted by identity. */
  conflicts(): Conflict[] {
    const found = this.ledger.conflicts();
    for (const [deliveryId, summaries] of this.index.summariesByDelivery.withSeveral()) {
      const terminal = terminalSummaries(summaries);
      if (terminal.length > 1) found.push(this.ledger.laterTerminalConflict(deliveryId, terminal));
    }
    return found.sort((a, b) => byUtf8(a.identity, b.identity));
  }

  private admit(fact: MetricFact): void {
    this.applyEvidence(fact, 1);
    this.index.add(fact);
    if (fact.type === "task_snapshot") this.indexTasks(fact, true);
    this.markReaders(fact);
  }

  private withdraw(fact: MetricFact): void {
    // Mark before removing: the links that find the readers go away with the fact.
    this.markReaders(fact);
    this.applyEvidence(fact, -1);
    this.index.remove(fact);
    if (fact.type === "task_snapshot") this.indexTasks(fact, false);
  }

  /**
   * direct-evidence-basis-rate: a summary or a Delivery's cost reads nothing but itself, so its unit is never recomputed:
   * the contribution is added on acceptance and the same contribution subtracted on quarantine.
   * Not keeping a million per-fact contributions is most of the engine's memory saving.
   */
  private applyEvidence(fact: MetricFact, sign: 1 | -1): void {
    if (fact.type !== "cost" && fact.type !== "delivery_summary") return;
    for (const draft of evidenceContributions(fact, this.config)) this.applyToGroup(finalizeContribution(draft), sign);
  }

  private markReaders(fact: MetricFact): void {
    markUnitsReading(fact, this.index, this.tasks, this.markDirty);
  }

  private indexTasks(snapshot: Extract<MetricFact, { type: "task_snapshot" }>, adding: boolean): void {
    snapshot.tasks.forEach((task, position) => {
      const unit = taskUnitId(snapshot.snapshot_id, position);
      const update = (index: MultiMap<string, string>, key: string): void => (adding ? index.add(key, unit) : index.delete(key, unit));
      if (task.task_id !== undefined) update(this.tasks.byTaskId, task.task_id);
      for (const member of task.members ?? []) update(this.tasks.byMember, member);
    });
  }

  private recompute(kind: UnitKind, id: string): void {
    const next = this.evaluate(kind, id).map(finalizeContribution);
    const contributions = this.contributions[kind];
    const previous = contributions.get(id) ?? NO_CONTRIBUTIONS;
    for (const contribution of previous) this.applyToGroup(contribution, -1);
    for (const contribution of next) this.applyToGroup(contribution, 1);
    if (next.length === 0) contributions.delete(id);
    else contributions.set(id, next);
  }

  private applyToGroup(contribution: Contribution, sign: 1 | -1): void {
    let group = this.groups.get(contribution.groupKey);
    if (group === undefined) {
      group = new GroupAggregate(contribution);
      this.groups.set(contribution.groupKey, group);
    }
    group.apply(contribution, sign);
    this.dirtyGroups.add(contribution.groupKey);
  }

  private evaluate(kind: UnitKind, id: string) {
    switch (kind) {
      case "call": {
        const call = this.index.calls.get(id);
        return call === undefined ? [] : callContributions(call, this.index, this.config);
      }
      case "delivery":
        return deliveryContributions(id, this.index, this.config);
      case "packet": {
        const packet = this.index.packets.get(id);
        return packet === undefined ? [] : packetContributions(packet, this.index, this.config);
      }
      case "snapshot": {
        const snapshot = this.index.snapshots.get(id);
        return snapshot === undefined ? [] : emptySnapshotContributions(snapshot);
      }
      case "task": {
        const separator = id.lastIndexOf("\u0000");
        const snapshot = this.index.snapshots.get(id.slice(0, separator));
        const task = snapshot?.tasks[Number(id.slice(separator + 1))];
        return snapshot === undefined || task === undefined ? [] : taskContributions(snapshot, task, this.index);
      }
    }
  }
}
