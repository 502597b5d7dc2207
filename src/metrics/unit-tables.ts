import type { Contribution } from "./contribution.ts";
import type { StoredContributions } from "./entity-docs.ts";
import type { FactIndex, IndexTables } from "./fact-index.ts";
import type { GroupAggregate } from "./group-aggregate.ts";
import type { LinkTable, Table } from "./tables.ts";
import type { TaskInputs } from "./task-inputs.ts";
import type { UnitKind } from "./unit-key.ts";

/** Which units this state evaluates (a partition of the partitioned engine owns some of them). */
export type UnitOwnership = (kind: UnitKind, id: string) => boolean;

/** The tables UnitState keeps (the index's among them), and what it needs of the store that holds them. */
export interface UnitTables {
  readonly index: IndexTables;
  /** task unit → its contributions (the other units keep theirs in their entity's document). */
  readonly taskUnits: Table<readonly Contribution[]>;
  readonly groups: Table<GroupAggregate>;
  /** group key → hour of as_of time → time → how many of its contributions have it (see as-of-times.ts). */
  readonly asOfTimes: LinkTable<Map<number, number>>;
  /**
   * Units changed since `unitChanges` took them, when the state is on disk and feeds a
   * contributions changelog (the single engine's); undefined otherwise.
   */
  readonly changedUnits: Table<true> | undefined;
  /** `prepare` runs at the start of every commit and may still write to the tables. */
  beforeCommit(prepare: () => void): void;
  /** A group was made: stored contributions may name it from now on (on disk they name it by an id given now). */
  groupMade(groupKey: string): void;
  /** Contributions encoded as a document stores them (a store on disk); undefined keeps them decoded. */
  readonly storedContributions?: (contributions: readonly Contribution[]) => StoredContributions;
}

export interface UnitStateOptions {
  /** Which units this state evaluates (default: all). */
  readonly owns?: UnitOwnership;
  /** What task units read of their members and task_id: from the index (default), or (a partition) from join responses. */
  readonly taskInputs?: (index: FactIndex) => TaskInputs;
  /** How many members an entity document's list holds itself (FactIndex; tests spill with fewer). */
  readonly inlineMembers?: number;
}
