import type { CatalogSummary } from "../catalog/metric-definitions.ts";
import type { MetricFact } from "../contract/facts.ts";
import type { Contribution } from "./contribution.ts";
import type { EngineConfig } from "./engine-config.ts";
import { memoryEngineTables, type EngineTables } from "./engine-tables.ts";
import { terminalSummaries } from "./delivery-reading.ts";
import { FactLedger, type Conflict, type FactOrigin, type LedgerOutcome, type StoredVersion } from "./fact-ledger.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import type { MetricResult, ResultChange } from "../contract/result-record.ts";
import { ResultPublisher } from "./result-publisher.ts";
import { UnitState } from "./unit-state.ts";
import type { FactIndex } from "./fact-index.ts";
import type { UnitKind } from "./unit-key.ts";

/**
 * A read-only view of the state behind the figures, for explanations (src/explain): the units'
 * stored contributions, the index of admitted facts, and the ledger's versions with their origins.
 * Nothing in it computes a figure.
 */
export interface EngineLineage {
  readonly config: EngineConfig;
  readonly index: FactIndex;
  /** Every unit of a kind with its stored contributions (a scan). */
  units(kind: UnitKind): Iterable<[string, readonly Contribution[]]>;
  /** Where an admitted fact was read: a file's line, or topic/partition/offset. */
  origin(fact: MetricFact): FactOrigin | undefined;
  /** Every version recorded under a fact_id (a quarantined one included), with its origin. */
  versions(factId: string): readonly StoredVersion[];
  /** Identity conflicts and later TERMINAL summaries (a scan of the ledger). */
  conflicts(): Conflict[];
  /** The published record under a result key (null: none). */
  result(key: string): MetricResult | null;
  /** Every published result key, sorted (a scan of the result table). */
  resultKeys(): string[];
  /** No unit is left to recompute: the stored contributions are what the published figures sum. */
  readonly settled: boolean;
}

/**
 * The metric engine: a pure, incremental function from a set of observation facts to metric
 * results. `ingest` records a fact (accepting, ignoring a redelivery, or quarantining a conflict)
 * and marks the units that read it; `flush` recomputes those units, swaps each one's old
 * contributions for its new ones in the group sums, and returns the result keys that changed.
 * Because every unit is a function of the accepted fact set and every group is a sum of units,
 * results do not depend on arrival order, batching or how often flush is called.
 */
export class MetricEngine {
  private readonly ledger: FactLedger;
  private readonly units: UnitState;
  private readonly publisher: ResultPublisher;
  private readonly config: EngineConfig;

  /**
   * `tables` default to memory (a replay of a file); a Kafka member passes tables on disk (the state
   * room's `engineTables`). `layout.inlineMembers` is for tests: entity documents spill their lists sooner (FactIndex).
   */
  constructor(
    config: EngineConfig,
    catalog: CatalogSummary,
    tables: EngineTables = memoryEngineTables(),
    layout: { readonly inlineMembers?: number } = {},
  ) {
    this.config = config;
    this.ledger = new FactLedger(tables.ledger);
    this.units = new UnitState(config, tables.units, layout);
    this.publisher = new ResultPublisher(tables.published, catalog, config);
  }

  /**
   * Set while replaying input the state's checkpoint did not reflect (a restart's silent replay, a
   * rebuild): every unit recomputed meanwhile goes to the contributions changelog, changed or not
   * (UnitState.replaying).
   */
  set replaying(replaying: boolean) {
    this.units.replaying = replaying;
  }

  /** Groups a flush would render now (a log load marks every group it restores). */
  get dirtyGroupCount(): number {
    return this.units.dirtyGroupCount;
  }

  /** True when flush has nothing left to recompute (a checkpoint may then be taken). */
  get settled(): boolean {
    return this.units.settled;
  }

  /** `origin` (a file line, a topic offset) is named in conflict reports for every version. */
  ingest(fact: MetricFact, origin?: FactOrigin): LedgerOutcome {
    const outcome = this.ledger.record(fact, origin);
    const { retracted, admitted } = outcome;
    for (let index = 0; index < retracted.length; index++) this.units.withdraw(retracted[index] as MetricFact);
    for (let index = 0; index < admitted.length; index++) this.units.admit(admitted[index] as MetricFact);
    return outcome;
  }

  /**
   * Records a fact whose units' contributions are already known (restored with `restoreUnit` from
   * the contributions changelog, which reflects every fact before its marker): the ledger and the
   * index learn it, evidence facts add to their groups, and no unit is marked for recomputation.
   */
  load(fact: MetricFact, origin?: FactOrigin): void {
    this.units.loading = true;
    try {
      this.ingest(fact, origin);
    } finally {
      this.units.loading = false;
    }
  }

  /** See UnitState.restoreUnit. */
  restoreUnit(unitKey: string, contributions: readonly Contribution[]): void {
    this.units.restoreUnit(unitKey, contributions);
  }

  /** See UnitState.unitChanges. */
  unitChanges(): [string, readonly Contribution[]][] {
    return this.units.unitChanges();
  }

  /**
   * Contract §2, revision 2 §3: when an accepted TERMINAL summary leaves its Delivery with more than
   * one, the later ones are a conflict to report (LATER_TERMINAL_SUMMARY); the earliest is read.
   */
  laterTerminalConflict(fact: MetricFact): Conflict | undefined {
    if (fact.type !== "delivery_summary" || fact.status !== "TERMINAL") return undefined;
    const terminal = terminalSummaries(this.units.index.summariesByDelivery.get(fact.delivery_id));
    return terminal.length > 1 && terminal.some((summary) => summary.fact_id === fact.fact_id)
      ? this.ledger.laterTerminalConflict(fact.delivery_id, terminal)
      : undefined;
  }

  /** Recomputes dirty units and returns every result key whose record changed (or vanished). */
  flush(): ResultChange[] {
    this.units.recomputeUnits();
    const groups = this.units.takeDirtyGroups();
    const changes = this.publisher.publish(groups, (groupKey) => this.units.group(groupKey));
    for (const groupKey of groups) if (this.units.group(groupKey)?.isEmpty === true) this.units.dropGroup(groupKey);
    return changes;
  }

  /** Every current result, sorted by key, as canonical JSON lines (flushes first; a scan of the whole table). */
  results(): { key: string; json: string; result: MetricResult }[] {
    this.flush();
    return this.publisher.results();
  }

  /** Every current result key, sorted (flushes first): `result(key)` gives each, a page at a time. */
  resultKeys(): string[] {
    this.flush();
    return this.publisher.keys();
  }

  /** Whether a result was last flushed under a key. */
  hasResult(key: string): boolean {
    return this.publisher.has(key);
  }

  /** The result last flushed under a key (null: none). */
  result(key: string): MetricResult | null {
    return this.publisher.current(key);
  }

  /** The read-only view explanations read (see EngineLineage); it never flushes. */
  lineage(): EngineLineage {
    const units = this.units;
    return {
      config: this.config,
      index: this.units.index,
      units: (kind) => this.units.unitsOf(kind),
      origin: (fact) => this.ledger.originOf(fact),
      versions: (factId) => this.ledger.versionsOf(factId),
      conflicts: () => this.conflicts(),
      result: (key) => this.publisher.current(key),
      resultKeys: () => this.publisher.keys(),
      get settled() {
        return units.settled;
      },
    };
  }

  /** Identity conflicts and Deliveries with later TERMINAL summaries, sorted by identity. */
  conflicts(): Conflict[] {
    const found = this.ledger.conflicts();
    for (const [deliveryId, summaries] of this.units.index.deliverySummaries()) {
      if (summaries.length < 2) continue;
      const terminal = terminalSummaries(summaries);
      if (terminal.length > 1) found.push(this.ledger.laterTerminalConflict(deliveryId, terminal));
    }
    return found.sort((a, b) => byUtf8(a.identity, b.identity));
  }
}
