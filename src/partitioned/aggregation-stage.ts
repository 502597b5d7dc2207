import type { CatalogSummary } from "../catalog/metric-definitions.ts";
import type { EngineConfig } from "../metrics/engine-config.ts";
import { GroupAggregate } from "../metrics/group-aggregate.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import { ResultPublisher } from "../metrics/result-publisher.ts";
import type { MetricResult, ResultChange } from "../contract/result-record.ts";
import { detachedBytes } from "../codec/binary-form.ts";
import type { LinkTable } from "../metrics/tables.ts";
import { groupCodec } from "../state/codecs/contributions.ts";
import { bytesCodec } from "../state/codecs/values.ts";
import { publishedTables } from "../state/engine-tables.ts";
import { StateStore } from "../state/state-store.ts";
import { splitKey } from "./stage-records.ts";

const GROUPS = groupCodec();

/**
 * One partition of the final stage, keyed by result group: it keeps each entity partition's
 * latest partial sums of a group, renders their sum (integers: exact, whatever the partitioning)
 * and publishes a record only when it changed, as the single engine does.
 */
export class AggregationPartition {
  /** group key → entity partition → its partial sums (held encoded: the partial record's bytes). */
  private readonly partials: LinkTable<Buffer>;
  /** Groups changed since the last flush (flushed before any commit). */
  private readonly dirty = new Set<string>();
  private readonly publisher: ResultPublisher;

  constructor(catalog: CatalogSummary, config: EngineConfig, state: StateStore = new StateStore(undefined)) {
    this.partials = state.links("Ap\u0000", bytesCodec);
    this.publisher = new ResultPublisher(publishedTables(state), catalog, config);
  }

  receive(key: string, value: Buffer | null): void {
    const [groupKey, source] = splitKey(key) as [string, string];
    if (value === null) this.partials.delete(groupKey, source);
    // Kept as its bytes (decoded when the group is rendered), copied out of the buffer it arrived in.
    else this.partials.add(groupKey, source, detachedBytes(value), value.length);
    this.dirty.add(groupKey);
  }

  get settled(): boolean {
    return this.dirty.size === 0;
  }

  /** The result keys whose record changed (or vanished) since the last flush, sorted. */
  flush(): ResultChange[] {
    const groups = [...this.dirty].sort(byUtf8);
    this.dirty.clear();
    return this.publisher.publish(groups, (groupKey) =>
      GroupAggregate.sum([...this.partials.get(groupKey)].map((bytes) => GROUPS.decode(bytes))),
    );
  }

  current(key: string): MetricResult | null {
    return this.publisher.current(key);
  }

  results(): { key: string; json: string; result: MetricResult }[] {
    return this.publisher.results();
  }
}
