import type { CatalogSummary } from "../catalog/metric-definitions.ts";
import type { EngineConfig } from "./engine-config.ts";
import type { GroupAggregate } from "./group-aggregate.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import { renderGroup } from "./render-result.ts";
import type { MetricResult, ResultChange } from "../contract/result-record.ts";
import type { Table } from "./tables.ts";

/** What the publisher keeps of the results it last published. */
export interface PublishedTables {
  /** group key → the result keys it published last (money groups publish one per slice). */
  readonly keys: Table<readonly string[]>;
  /** result key → its canonical JSON as last published. */
  readonly records: Table<string>;
}

/**
 * The published side of the engine: renders changed groups and keeps what was last published, so
 * only records that changed (or vanished) are emitted. Shared by the single engine and by the
 * partitioned engine's aggregation stage, which renders the sum of the partitions' partial groups.
 */
export class ResultPublisher {
  /** group key → the result keys it published last (money groups publish one per slice). */
  private readonly publishedKeys: Table<readonly string[]>;
  /** result key → its canonical JSON as last published. */
  private readonly published: Table<string>;
  private readonly catalog: CatalogSummary;
  private readonly thresholdHundredths: number;

  constructor(tables: PublishedTables, catalog: CatalogSummary, config: EngineConfig) {
    this.publishedKeys = tables.keys;
    this.published = tables.records;
    this.catalog = catalog;
    this.thresholdHundredths = config.coverageThresholdHundredths;
  }

  /**
   * Renders each group (in the order given; undefined or empty: its records are withdrawn) and
   * returns every result key whose record changed or vanished, sorted by key.
   */
  publish(groupKeys: Iterable<string>, groupOf: (groupKey: string) => GroupAggregate | undefined): ResultChange[] {
    const changes: ResultChange[] = [];
    for (const groupKey of groupKeys) {
      const group = groupOf(groupKey);
      const rendered =
        group === undefined || group.isEmpty ? [] : renderGroup(group, this.catalog, this.thresholdHundredths);
      const keys = rendered.map((entry) => entry.key);
      const previous = this.publishedKeys.get(groupKey) ?? [];
      for (const stale of previous) {
        if (keys.includes(stale)) continue;
        this.published.delete(stale);
        changes.push({ key: stale, result: null });
      }
      for (const { key, result } of rendered) {
        const json = JSON.stringify(result);
        if (this.published.get(key) === json) continue;
        this.published.set(key, json, json.length);
        changes.push({ key, result });
      }
      if (keys.length === 0) {
        if (previous.length > 0) this.publishedKeys.delete(groupKey);
      } else if (keys.length !== previous.length || keys.some((key, position) => previous[position] !== key))
        this.publishedKeys.set(groupKey, keys);
    }
    return changes.sort((a, b) => byUtf8(a.key, b.key));
  }

  /** The result last published under a key (null: none). */
  current(key: string): MetricResult | null {
    const json = this.published.get(key);
    return json === undefined ? null : (JSON.parse(json) as MetricResult);
  }

  /** Whether a result is published under a key. */
  has(key: string): boolean {
    return this.published.get(key) !== undefined;
  }

  /** Every current result key, sorted (a scan of the whole table that keeps only the keys). */
  keys(): string[] {
    const keys: string[] = [];
    for (const [key] of this.published.scan()) keys.push(key);
    return keys.sort(byUtf8);
  }

  /** Every current result, sorted by key, as canonical JSON lines (a scan of the whole table). */
  results(): { key: string; json: string; result: MetricResult }[] {
    return [...this.published.scan()]
      .sort(([a], [b]) => byUtf8(a, b))
      .map(([key, json]) => ({ key, json, result: JSON.parse(json) as MetricResult }));
  }
}
