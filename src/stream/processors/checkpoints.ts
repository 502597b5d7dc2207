import type { LocalState } from "../../state/local-state.ts";

/** A flushed state is checkpointed at most this often (and whenever the cache is over its budget). */
export const CHECKPOINT_INTERVAL_MS = 1_000;

/**
 * When a task with local state checkpoints it, shared by the single engine and the partitioned
 * engine's stages: after a batch's writes are acknowledged (`committed`), at most every
 * CHECKPOINT_INTERVAL_MS or when the cache is over budget; and on `close`, the last acknowledged
 * state, unless a batch was processed after it (its writes failed or were never sent), before the
 * store is closed. A checkpoint a batch started lands before the store closes, and a `committed`
 * that arrives after `close` (a batch of a revoked assignment) writes nothing.
 *
 * `save` writes the checkpoint for an offset and says true, or declines and says false (a state
 * not yet flushed is not checkpointed: the next acknowledged batch tries again); it runs only
 * while the store is open.
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
      if (this.lastAcknowledged !== undefined && !this.unacknowledged) await this.checkpoint(local, this.lastAcknowledged);
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
