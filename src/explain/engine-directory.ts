import type { EngineLineage } from "../metrics/metric-engine.ts";
import type { EngineObserver } from "../stream/processors/engine.ts";

/** The engine partitions this process holds open, for explanations (a member's /explain route). */
export class EngineDirectory implements EngineObserver {
  private readonly open = new Map<number, EngineLineage>();

  opened(partition: number, lineage: EngineLineage): void {
    this.open.set(partition, lineage);
  }

  closing(partition: number, lineage: EngineLineage): void {
    // A partition reassigned here before the old task closed keeps its new lineage.
    if (this.open.get(partition) === lineage) this.open.delete(partition);
  }

  /** The partition's engine state, if this process holds it. */
  lineage(partition: number): EngineLineage | undefined {
    return this.open.get(partition);
  }
}
