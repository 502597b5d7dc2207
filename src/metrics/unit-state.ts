import type { MetricFact } from "../contract/facts.ts";
import type { Contribution, ContributionDraft } from "./contribution.ts";
import type { EngineConfig } from "./engine-config.ts";
import { FactIndex } from "./fact-index.ts";
import { GroupAggregate } from "./group-aggregate.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import type { Table } from "./tables.ts";
import { inDocuments, sameContributions, type UnitContributions } from "./unit-contributions.ts";
import { GroupAsOfTimes } from "./as-of-times.ts";
import { evidenceContributions } from "./units/evidence-unit.ts";
import { finalizeContribution } from "./units/finalize.ts";
import { indexTaskInputs, type TaskInputs } from "./task-inputs.ts";
import { evaluateUnit } from "./unit-evaluation.ts";
import { markUnitsReading, taskUnitId, UNIT_KINDS, type UnitKind, type UnitReaders } from "./unit-key.ts";
import type { UnitOwnership, UnitStateOptions, UnitTables } from "./unit-tables.ts";
import { InvariantError } from "../errors.ts";

const NO_CONTRIBUTIONS: readonly Contribution[] = [];

const OWNS_ALL: UnitOwnership = () => true;

/**
 * The unit/contribution/group seam, shared by the single engine (`MetricEngine`, which puts its
 * fact ledger in front) and by each partition of the partitioned engine (`src/partitioned`,
 * whose ledger is a stage of its own): the index of admitted facts, the units that read them, each
 * unit's contributions, and the exact sums of the groups they contribute to.
 *
 * `admit` and `withdraw` mark the units reading the fact; `recomputeUnits` evaluates the marked
 * ones this state owns and swaps each one's old contributions for its new ones in the group sums.
 * Because every unit is a function of the admitted fact set and every group a sum of units, the
 * sums depend on the set of admitted facts, never on their order or on when units are recomputed.
 */
export class UnitState {
  readonly index: FactIndex;
  /** What task units read of their members and task_id: from the index, or (a partition) from join responses. */
  private readonly taskInputs: TaskInputs;
  private readonly readers: UnitReaders;
  private readonly dirtyUnits: Record<UnitKind, Set<string>> = {
    call: new Set(),
    delivery: new Set(),
    packet: new Set(),
    task: new Set(),
    snapshot: new Set(),
  };
  /** Each kind's contributions: in its entity's document, except task units' (a table of their own). */
  private readonly contributions: Record<UnitKind, UnitContributions>;
  private readonly groupMade: (groupKey: string) => void;
  private readonly markDirty: (kind: UnitKind, id: string) => void;
  private readonly groups: Table<GroupAggregate>;
  /** The as_of multiset of the group being applied (group key → hour → time → count). */
  private readonly times: GroupAsOfTimes;
  private readonly dirtyGroups = new Set<string>();
  /**
   * Units whose contributions changed since `unitChanges` (state on disk only). They are part of
   * the state, so that a member resuming from its checkpoint still writes to the changelog what it
   * had not: the ones still pending at a commit are written to this table then (see spillChanged).
   */
  private readonly changedUnits: Table<true> | undefined;
  /**
   * Changed units not yet in `changedUnits`. Live, `unitChanges` takes them before every commit,
   * so the table is never written (it was two writes per changed unit: a set, then a delete).
   */
  private readonly changedKeys = new Set<string>();
  /** `changedUnits` may hold keys (a commit spilled some, or an earlier process left some): `unitChanges` reads it. */
  private changedOnDisk = true;
  /** While true, readers are not marked (their contributions are restored, not recomputed). */
  loading = false;
  /**
   * While true (replaying input the state's checkpoint did not reflect), every recomputed unit is
   * kept for `unitChanges`, changed or not: a member that crashed after sending changelog records
   * and before checkpointing restarts from an older state, and a unit that the replay recomputes to
   * what that older state held would otherwise never be written again, leaving the changelog with
   * what the lost state had sent (found by the on-disk property test: a call sent, then
   * quarantined by a conflicting version arriving during the replay).
   */
  replaying = false;
  private readonly config: EngineConfig;

  constructor(config: EngineConfig, tables: UnitTables, options: UnitStateOptions = {}) {
    const { owns = OWNS_ALL, taskInputs, inlineMembers } = options;
    this.config = config;
    this.index = new FactIndex(tables.index, inlineMembers);
    this.taskInputs = (taskInputs ?? indexTaskInputs)(this.index);
    const { index } = this;
    this.readers = {
      callOf: (callId) => index.calls.get(callId),
      tasksNaming: (taskId) => index.tasksNaming(taskId),
      tasksListing: (deliveryId) => index.tasksListing(deliveryId),
    };
    this.markDirty =
      owns === OWNS_ALL
        ? (kind, id) => {
            this.dirtyUnits[kind].add(id);
          }
        : (kind, id) => {
            if (owns(kind, id)) this.dirtyUnits[kind].add(id);
          };
    this.groupMade = (groupKey) => tables.groupMade(groupKey);
    const { taskUnits } = tables;
    const setTaskUnit = (id: string, next: readonly Contribution[]): void => {
      if (next.length === 0) taskUnits.delete(id);
      else taskUnits.set(id, next, next.length * 48);
    };
    this.contributions = {
      call: inDocuments(index.callDocs, tables.storedContributions),
      delivery: inDocuments(index.deliveryDocs, tables.storedContributions),
      packet: inDocuments(index.packetDocs, tables.storedContributions),
      snapshot: inDocuments(index.snapshotDocs, tables.storedContributions),
      task: {
        get: (id) => taskUnits.get(id),
        scan: () => taskUnits.scan(),
        set: setTaskUnit,
        restore: setTaskUnit,
      },
    };
    this.groups = tables.groups;
    this.times = new GroupAsOfTimes(tables.asOfTimes);
    this.changedUnits = tables.changedUnits;
    if (this.changedUnits !== undefined) tables.beforeCommit(() => this.spillChanged());
  }

  /**
   * Every unit of a kind that contributes, with its contributions as stored: a scan of the kind's
   * documents, for explanations (src/explain), which read the figures' units and never recompute them.
   */
  *unitsOf(kind: UnitKind): Iterable<[string, readonly Contribution[]]> {
    for (const [id, contributions] of this.contributions[kind].scan())
      if (contributions.length > 0) yield [id, contributions];
  }

  /** Groups whose sums changed since they were last rendered. */
  get dirtyGroupCount(): number {
    return this.dirtyGroups.size;
  }

  /** True when no unit is left to recompute and no group left to take. */
  get settled(): boolean {
    return this.dirtyGroups.size === 0 && UNIT_KINDS.every((kind) => this.dirtyUnits[kind].size === 0);
  }

  /**
   * A fact starts counting: it is indexed and the units reading it are marked. `evidence` adds its
   * own direct-evidence contribution (an OPEN summary, a Delivery's cost): false where another partition
   * is the fact's home and adds it.
   */
  admit(fact: MetricFact, evidence = true): void {
    if (evidence) this.applyEvidence(fact, 1);
    this.index.add(fact);
    if (fact.type === "task_snapshot") this.indexTasks(fact, true);
    this.markReaders(fact);
  }

  /** A fact stops counting (quarantined, or no longer held): the reverse of `admit`. */
  withdraw(fact: MetricFact, evidence = true): void {
    // Mark before removing: the links that find the readers go away with the fact.
    this.markReaders(fact);
    if (evidence) this.applyEvidence(fact, -1);
    this.index.remove(fact);
    if (fact.type === "task_snapshot") this.indexTasks(fact, false);
  }

  /**
   * Sets a unit's contributions as the contributions changelog holds them (`unitKey` as
   * `unitChanges` names it), adjusting the group sums: what `recomputeUnits` would have found.
   * The unit is not marked changed: the changelog already holds this value, and writing every
   * restored unit back would double the log at each restore.
   */
  restoreUnit(unitKey: string, contributions: readonly Contribution[]): void {
    const separator = unitKey.indexOf("\u0000");
    const kind = unitKey.slice(0, separator) as UnitKind;
    if (!UNIT_KINDS.includes(kind))
      throw new InvariantError({
        problem: `contributions changelog key ${JSON.stringify(unitKey)} names no unit kind`,
      });
    this.replaceContributions(kind, unitKey.slice(separator + 1), contributions, true);
  }

  /**
   * The units whose contributions changed since the last call (a state with `changedUnits` only), with their
   * contributions now (empty: none), keyed `kind \0 id`: the contributions changelog's records.
   */
  unitChanges(): [string, readonly Contribution[]][] {
    const pending = this.changedUnits;
    if (pending === undefined) return [];
    if (this.changedOnDisk) {
      const spilled = [...pending.scan()].map(([unitKey]) => unitKey);
      for (const unitKey of spilled) {
        this.changedKeys.add(unitKey);
        pending.delete(unitKey);
      }
      this.changedOnDisk = false;
    }
    const changes: [string, readonly Contribution[]][] = [];
    for (const unitKey of this.changedKeys) {
      const separator = unitKey.indexOf("\u0000");
      changes.push([
        unitKey,
        this.contributions[unitKey.slice(0, separator) as UnitKind].get(unitKey.slice(separator + 1)) ??
          NO_CONTRIBUTIONS,
      ]);
    }
    this.changedKeys.clear();
    return changes.sort(([a], [b]) => byUtf8(a, b));
  }

  /**
   * Before a commit: the changed units no `unitChanges` took yet go to the table, so the checkpoint
   * covers them, and leave memory (a member replaying old input, which writes no changelog until it
   * is past its end, would otherwise hold every unit the replay changed).
   */
  private spillChanged(): void {
    const pending = this.changedUnits;
    if (pending === undefined || this.changedKeys.size === 0) return;
    for (const unitKey of this.changedKeys) pending.set(unitKey, true, 0);
    this.changedKeys.clear();
    this.changedOnDisk = true;
  }

  /** Marks the task units that list a Delivery as a member, or name a task_id (a join response about it changed). */
  markTasksReading(link: { readonly deliveryId?: string; readonly taskId?: string }): void {
    if (link.deliveryId !== undefined)
      for (const { unit } of this.readers.tasksListing(link.deliveryId)) this.markDirty("task", unit);
    if (link.taskId !== undefined)
      for (const { unit } of this.readers.tasksNaming(link.taskId)) this.markDirty("task", unit);
  }

  /** Recomputes the marked units. */
  recomputeUnits(): void {
    for (const kind of UNIT_KINDS) {
      for (const id of this.dirtyUnits[kind]) this.recompute(kind, id);
      this.dirtyUnits[kind].clear();
    }
  }

  /** The groups whose sums changed since the last call, sorted by key. */
  takeDirtyGroups(): string[] {
    const keys = [...this.dirtyGroups].sort(byUtf8);
    this.dirtyGroups.clear();
    return keys;
  }

  /** A group's sums (undefined: no contribution ever reached it, or it was dropped when empty). */
  group(groupKey: string): GroupAggregate | undefined {
    return this.groups.get(groupKey);
  }

  /** Forgets a group left without units. */
  dropGroup(groupKey: string): void {
    this.groups.delete(groupKey);
  }

  /**
   * direct-evidence-basis-rate: an OPEN summary or a Delivery's cost reads nothing but itself, so
   * its unit is never recomputed: the contribution is added on acceptance and the same contribution
   * subtracted on quarantine. (A TERMINAL summary counts only while earliest: its Delivery's unit.)
   * Not keeping a million per-fact contributions is most of the engine's memory saving.
   */
  applyEvidence(fact: MetricFact, sign: 1 | -1): void {
    if (fact.type !== "cost" && fact.type !== "delivery_summary") return;
    const drafts = evidenceContributions(fact, this.config);
    for (let index = 0; index < drafts.length; index++)
      this.applyToGroup(finalizeContribution(drafts[index] as ContributionDraft), sign);
  }

  private markReaders(fact: MetricFact): void {
    if (this.loading) return;
    markUnitsReading(fact, this.readers, this.markDirty);
  }

  private indexTasks(snapshot: Extract<MetricFact, { type: "task_snapshot" }>, adding: boolean): void {
    snapshot.tasks.forEach((task, position) => {
      const reader = { unit: taskUnitId(snapshot.snapshot_id, position), cutoff: snapshot.cutoff };
      if (task.task_id !== undefined) this.index.listTask({ taskId: task.task_id }, reader, adding);
      for (const member of task.members ?? []) this.index.listTask({ deliveryId: member }, reader, adding);
    });
  }

  private recompute(kind: UnitKind, id: string): void {
    const drafts = evaluateUnit(kind, id, this.index, this.config, this.taskInputs);
    const next: Contribution[] = [];
    for (let index = 0; index < drafts.length; index++)
      next.push(finalizeContribution(drafts[index] as ContributionDraft));
    this.replaceContributions(kind, id, next);
  }

  /** `logged`: the contributions come from the changelog, which needs them no more. */
  private replaceContributions(kind: UnitKind, id: string, next: readonly Contribution[], logged = false): void {
    const contributions = this.contributions[kind];
    const previous = contributions.get(id) ?? NO_CONTRIBUTIONS;
    const changelogged = this.changedUnits !== undefined && !logged;
    // Most recomputations find what the unit already contributed: nothing to retract, add or write
    // (but the changelog, while replaying: see `replaying`).
    if (sameContributions(previous, next)) {
      if (this.replaying && changelogged) this.changedKeys.add(`${kind}\u0000${id}`);
      return;
    }
    for (let index = 0; index < previous.length; index++) this.applyToGroup(previous[index] as Contribution, -1);
    for (let index = 0; index < next.length; index++) this.applyToGroup(next[index] as Contribution, 1);
    if (logged) contributions.restore(id, next);
    else contributions.set(id, next);
    if (changelogged) this.changedKeys.add(`${kind}\u0000${id}`);
  }

  private applyToGroup(contribution: Contribution, sign: 1 | -1): void {
    const groupKey = contribution.groupKey;
    let group = this.groups.update(groupKey);
    if (group === undefined) {
      group = new GroupAggregate(contribution);
      this.groups.set(groupKey, group, 256);
      // Every stored contribution was added to its group first: the group is known before it is named.
      this.groupMade(groupKey);
    }
    this.times.group = groupKey;
    group.apply(contribution, sign, this.times);
    this.dirtyGroups.add(groupKey);
  }
}
