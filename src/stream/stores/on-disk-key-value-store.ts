import { bytesCodec } from "../../metrics/state/codecs.ts";
import type { StateStore, Table } from "../../metrics/state/state-store.ts";
import type { KeyValueStore } from "./key-value-store.ts";

/**
 * A store of encoded values on disk, behind the state store's bounded record cache: what a store
 * restored whole from a compacted topic (the published results) needs when the topic grows with
 * time. Its contents are rebuilt at every assignment, so its commits are not checkpoints: they are
 * what lets the cache evict (only written entries may leave memory). It commits whenever the cache
 * is over its budget, and again after a commit lands while it still is; a commit runs on LMDB's writer thread while the store goes on, and a failed
 * commit is thrown by the next call.
 */
export class OnDiskKeyValueStore implements KeyValueStore<Buffer> {
  readonly name: string;
  private readonly state: StateStore;
  private readonly values: Table<Buffer>;
  private readonly closeState: () => Promise<void>;
  private count = 0;
  private committing: Promise<void> | undefined;
  private failure: unknown;

  constructor(name: string, scratch: { readonly state: StateStore; close(): Promise<void> }) {
    this.name = name;
    this.state = scratch.state;
    this.closeState = () => scratch.close();
    this.values = this.state.table("v\u0000", bytesCodec);
  }

  get size(): number {
    return this.count;
  }

  get(key: string): Buffer | undefined {
    this.rethrow();
    return this.values.get(key);
  }

  put(key: string, value: Buffer): void {
    if (this.get(key) === undefined) this.count += 1;
    this.values.set(key, value, value.length);
    this.commitIfOverBudget();
  }

  delete(key: string): void {
    if (this.get(key) === undefined) return;
    this.count -= 1;
    this.values.delete(key);
    this.commitIfOverBudget();
  }

  keys(): IterableIterator<string> {
    return this.keysOf(this.values.scan());
  }

  entries(): IterableIterator<[string, Buffer]> {
    this.rethrow();
    return this.values.scan()[Symbol.iterator]() as IterableIterator<[string, Buffer]>;
  }

  /** Settles when no commit is in flight and none is due (the cache is within its budget, or nothing is left to write). */
  async settled(): Promise<void> {
    while (this.committing !== undefined) await this.committing;
    this.rethrow();
  }

  /** Waits for the commits in flight, then closes the store and releases its directory. */
  async close(): Promise<void> {
    try {
      while (this.committing !== undefined) await this.committing;
      await this.state.landed();
    } finally {
      await this.closeState();
    }
  }

  private *keysOf(entries: Iterable<[string, Buffer]>): IterableIterator<string> {
    this.rethrow();
    for (const [key] of entries) yield key;
  }

  private commitIfOverBudget(): void {
    if (this.committing !== undefined || !this.state.overBudget) return;
    this.committing = this.state
      .commit()
      .then(() => this.state.landed())
      .catch((error: unknown) => {
        this.failure ??= error;
      })
      .finally(() => {
        this.committing = undefined;
        // Writes that came while it landed are still dirty, and may keep the cache over its budget
        // with no later write to start a commit: commit them too (never when nothing was written).
        if (this.failure === undefined && this.state.lastCommitWrites > 0) this.commitIfOverBudget();
      });
  }

  private rethrow(): void {
    if (this.failure !== undefined) throw new Error(`the ${this.name} store on disk failed to write`, { cause: this.failure });
  }
}
