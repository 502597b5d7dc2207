import type { EngineLineage } from "../metrics/metric-engine.ts";

/**
 * Told when a partition's engine opens and before it closes, with the read-only view of its state:
 * explanations query it there, on a member's HTTP port or at the end of a replay.
 */
export interface EngineObserver {
  opened(partition: number, lineage: EngineLineage): void;
  /** Before the state closes (a replay explains here: a state on disk is gone after). */
  closing(partition: number, lineage: EngineLineage): void;
}

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
