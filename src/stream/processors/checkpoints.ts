import type { LocalState } from "../../state/local-state.ts";

/** A flushed state is checkpointed at most this often (and whenever the cache is over its budget). */
export const CHECKPOINT_INTERVAL_MS = 1_000;

/**
 * When a task with local state checkpoints it (the engine and the stages): only acknowledged state,
 * at most every CHECKPOINT_INTERVAL_MS or when the cache is over budget, and once more on `close`.
 * `save` may decline (an unflushed state), and the next acknowledged batch tries again.
 */
export class TaskCheckpoints {
  private readonly local: LocalState | undefined;
  private readonly save: (local: LocalState, offset: string) => Promise<boolean>;
  /** The next source offset of the last batch whose writes were acknowledged. */
  private lastAcknowledged: string | undefined;
  /** A batch was processed after the last acknowledged one. */
  private unacknowledged = false;
  private closed = false;
  /** The checkpoint `committed` started last, which `close` lets land first. */
  private inFlight: Promise<void> | undefined;
  private lastSaved = performance.now();

  constructor(local: LocalState | undefined, save: (local: LocalState, offset: string) => Promise<boolean>) {
    this.local = local;
    this.save = save;
  }

  /** The next source offset of the last batch whose writes were acknowledged. */
  get acknowledged(): string | undefined {
    return this.lastAcknowledged;
  }

  /** A batch was applied to the state; its writes are not acknowledged yet. */
  processed(): void {
    this.unacknowledged = true;
  }

  async committed(nextOffset: string): Promise<void> {
    this.lastAcknowledged = nextOffset;
    this.unacknowledged = false;
    const local = this.local;
    if (local === undefined || this.closed) return;
    const due = performance.now() - this.lastSaved >= CHECKPOINT_INTERVAL_MS || local.state.overBudget;
    if (!due) return;
    this.inFlight = this.checkpoint(local, nextOffset);
    await this.inFlight;
  }

  async close(): Promise<void> {
    const local = this.local;
    if (local === undefined || this.closed) return;
    this.closed = true;
    try {
      await this.inFlight?.catch(() => undefined);
      // Stopping cleanly: the last acknowledged state is checkpointed, so a restart reads nothing again.
      if (this.lastAcknowledged !== undefined && !this.unacknowledged)
        await this.checkpoint(local, this.lastAcknowledged);
      await local.state.landed();
    } finally {
      await local.state.backend?.close();
      local.release();
    }
  }

  private async checkpoint(local: LocalState, offset: string): Promise<void> {
    const started = performance.now();
    if (await this.save(local, offset)) this.lastSaved = started;
  }
}
