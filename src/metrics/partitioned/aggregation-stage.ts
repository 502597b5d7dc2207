import type { CatalogSummary } from "../../catalog/metric-definitions.ts";
import type { EngineConfig } from "../engine-config.ts";
import { GroupAggregate } from "../group-aggregate.ts";
import { byUtf8 } from "../key-order.ts";
import { ResultPublisher } from "../result-publisher.ts";
import type { MetricResult, ResultChange } from "../result-record.ts";
import { groupCodec } from "../state/codecs.ts";
import { StateStore } from "../state/state-store.ts";
import { splitKey } from "./stage-records.ts";

const GROUPS = groupCodec();

/**
 * One partition of the final stage, keyed by result group: it keeps each entity partition's
 * latest partial sums of a group, renders their sum (integers: exact, whatever the partitioning)
 * and publishes a record only when it changed, as the single engine does.
 */
export class AggregationPartition {
  /** group key → entity partition → its partial sums. */
  private readonly partials = new Map<string, Map<string, GroupAggregate>>();
  private readonly dirty = new Set<string>();
  private readonly publisher: ResultPublisher;

  constructor(catalog: CatalogSummary, config: EngineConfig) {
    this.publisher = new ResultPublisher(new StateStore(undefined), catalog, config);
  }

  receive(key: string, value: Buffer | null): void {
    const [groupKey, source] = splitKey(key) as [string, string];
    const parts = this.partials.get(groupKey) ?? new Map<string, GroupAggregate>();
    if (value === null) parts.delete(source);
    else parts.set(source, GROUPS.decode(value));
    if (parts.size === 0) this.partials.delete(groupKey);
    else this.partials.set(groupKey, parts);
    this.dirty.add(groupKey);
  }

  get settled(): boolean {
    return this.dirty.size === 0;
  }

  /** The result keys whose record changed (or vanished) since the last flush, sorted. */
  flush(): ResultChange[] {
    const groups = [...this.dirty].sort(byUtf8);
    this.dirty.clear();
    return this.publisher.publish(groups, (groupKey) => GroupAggregate.sum(this.partials.get(groupKey)?.values() ?? []));
  }

  results(): { key: string; json: string; result: MetricResult }[] {
    return this.publisher.results();
  }
}
