import { join } from "node:path";
import { presenceCodec } from "../../state/codecs/values.ts";
import { openStoreDirectory } from "../../state/local-state.ts";
import type { Table } from "../../metrics/tables.ts";
import type { StateStore, StateStoreStats } from "../../state/state-store.ts";

/** What the ingest check looks up: the engine-facts keys the rebuild read. */
export interface EngineFactKeyLookup {
  has(key: string): Promise<boolean>;
}

/**
 * The key of every engine-facts record the audit read. The topic holds one record per accepted
 * fact version for ever, so the set grows with the history: in a directory, it is a table on disk
 * behind a bounded record cache; without one, a Set in memory.
 */
export class EngineFactKeys implements EngineFactKeyLookup {
  private readonly memory: Set<string> | undefined;
  private readonly disk: { readonly state: StateStore; readonly keys: Table<true>; close(): Promise<void> } | undefined;

  private constructor(directory: string | undefined, cacheBytes: number) {
    if (directory === undefined) {
      this.memory = new Set();
      return;
    }
    const opened = openStoreDirectory(join(directory, "engine-fact-keys"), cacheBytes);
    const keys = opened.state.table("k\u0000", presenceCodec);
    this.disk = { state: opened.state, keys, close: () => opened.close() };
  }

  /** A key set in `directory` (a replay's temporary state directory), or in memory when undefined. */
  static open(directory: string | undefined, cacheBytes: number): EngineFactKeys {
    return new EngineFactKeys(directory, cacheBytes);
  }

  async add(key: string): Promise<void> {
    if (this.disk === undefined) {
      this.memory?.add(key);
      return;
    }
    this.disk.keys.set(key, true, key.length);
    // Only a commit lets the cache evict what it wrote.
    if (this.disk.state.overBudget) await this.disk.state.commit();
  }

  async has(key: string): Promise<boolean> {
    if (this.disk === undefined) return this.memory?.has(key) === true;
    const present = this.disk.keys.get(key) === true;
    // A read caches the key too: the cache evicts only after a commit, even one with nothing to write.
    if (this.disk.state.overBudget) await this.disk.state.commit();
    return present;
  }

  /** The on-disk set's record cache (undefined in memory). */
  cacheStats(): StateStoreStats | undefined {
    return this.disk?.state.stats();
  }

  /** Writes what is left, then closes the store and releases its directory. */
  async close(): Promise<void> {
    if (this.disk === undefined) return;
    try {
      await this.disk.state.landed();
    } finally {
      await this.disk.close();
    }
  }
}
