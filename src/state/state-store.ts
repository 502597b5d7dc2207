import { MemoryLinkTable, MemoryTable, type LinkTable, type Table } from "../metrics/tables.ts";
import type { CacheShare } from "./cache-segment.ts";
import { CachedLinkTable } from "./cached-link-table.ts";
import { CachedTable } from "./cached-table.ts";
import type { StateBackend } from "./state-backend.ts";
import type { ValueCodec } from "./value-codec.ts";
import { InvariantError } from "../errors.ts";

/**
 * Eviction after a commit goes down to this share of the budget, not to the budget itself: the
 * cache is over its budget again, and commits, only after that much has been read or written, not
 * after the next batch (a commit per batch wrote a busy entity's document at every batch).
 */
const EVICT_TO_FRACTION = 0.7;

/**
 * Entries a commit may write: past this many dirty entries the store is over its budget whatever
 * their bytes. LMDB keeps the pages a write transaction dirtied, so the largest commit sets the
 * process's native memory for good, and bytes alone cannot bound it while sizes are guesses.
 */
export const MAX_DIRTY_ENTRIES = 20_000;

export interface StateStoreStats {
  readonly cachedBytes: number;
  readonly cacheBudgetBytes: number;
  readonly misses: number;
  readonly evictions: number;
  readonly commits: number;
  readonly lastCommitWrites: number;
}

/**
 * The engine's keyed state (docs/engine-state.md §2): tables of values by key and link tables (a
 * key's set of members), in front of an optional on-disk backend.
 *
 * Without a backend (file replay, tests) the tables are plain maps that are never evicted: the
 * whole state is in memory, as a replay of one file needs. With a backend the tables are a record
 * cache over it, as Kafka Streams' record cache sits over RocksDB: values are read through on a
 * miss, written back at `commit` (a key written many times between commits is written once), and
 * clean entries beyond the budget are evicted in CLOCK order after each commit, so the process holds
 * the cache and the current commit's writes, never the history.
 */
export class StateStore {
  readonly backend: StateBackend | undefined;
  readonly budgetBytes: number;
  private readonly tables: CacheShare[] = [];
  private readonly codecs = new Set<ValueCodec<unknown>>();
  private readonly prefixes = new Set<string>();
  /** Estimated heap bytes of every cached entry, dirty or clean. */
  cachedBytes = 0;
  /** Entries turned dirty since the last commit took them (what the next commit writes, about). */
  dirtyEntries = 0;
  misses = 0;
  evictions = 0;
  commits = 0;
  lastCommitWrites = 0;
  /**
   * Commits write on this thread and are done when `commit` returns (StateBackend.commitNow): set
   * while the engine restores, when nothing waits on it and the async writer's per-write promises
   * and buffers, kept alive until its thread is done, cost more than the wait (bench/RESULTS.md).
   */
  commitsOnThisThread = false;
  /** The commit being written, if any. */
  private pending: Promise<void> | undefined;
  /** Called at the start of every commit, before the dirty entries are taken (see beforeCommit). */
  private readonly preparers: (() => void)[] = [];

  constructor(backend: StateBackend | undefined, budgetBytes = Number.POSITIVE_INFINITY) {
    this.backend = backend;
    this.budgetBytes = budgetBytes;
  }

  /** True when the state is on disk and `commit` writes it. */
  get persistent(): boolean {
    return this.backend !== undefined;
  }

  /**
   * The cache holds more than its budget, or more dirty entries than a commit should write: only a
   * commit (after a flush) lets it evict. Never in memory.
   */
  get overBudget(): boolean {
    return this.persistent && (this.cachedBytes > this.budgetBytes || this.dirtyEntries > MAX_DIRTY_ENTRIES);
  }

  /** A table of values by key; `prefix` names it on disk and must be unique. */
  table<V>(prefix: string, codec: ValueCodec<V>): Table<V> {
    this.claim(prefix);
    if (this.backend === undefined) return new MemoryTable<V>();
    const table = new CachedTable<V>(this, this.backend, prefix, codec);
    this.tables.push(table);
    this.codecs.add(codec);
    return table;
  }

  /** A table of member sets by key; `prefix` names it on disk and must be unique. */
  links<V>(prefix: string, codec: ValueCodec<V>): LinkTable<V> {
    this.claim(prefix);
    if (this.backend === undefined) return new MemoryLinkTable<V>();
    const table = new CachedLinkTable<V>(this, this.backend, prefix, codec);
    this.tables.push(table);
    this.codecs.add(codec);
    return table;
  }

  /** `prepare` runs at the start of every commit, and may still write to the tables: what it writes is in that commit. */
  beforeCommit(prepare: () => void): void {
    this.preparers.push(prepare);
  }

  /**
   * Starts writing every dirty entry, and `extra` (the checkpoint), in one transaction, on the
   * store's own writer thread, so the engine goes on meanwhile; `landed` settles when it is on disk.
   * Until then the written entries stay cached (a read must not go to disk for a value still being
   * written); once it lands, the clean entries beyond the budget are evicted. A commit first waits
   * for the one before it to land, so commits land in order and at most one is in flight. Without
   * a backend it does nothing: memory is the state.
   */
  async commit(extra: readonly (readonly [string, Buffer | null])[] = []): Promise<void> {
    const backend = this.backend;
    if (backend === undefined) return;
    await this.landed();
    for (const prepare of this.preparers) prepare();
    const writes: [string, Buffer | null][] = [];
    for (const table of this.tables) table.drain(writes);
    this.dirtyEntries = 0;
    for (const codec of this.codecs) codec.committed?.();
    for (const write of extra) writes.push([write[0], write[1]]);
    this.commits += 1;
    this.lastCommitWrites = writes.length;
    if (this.commitsOnThisThread && backend.commitNow !== undefined) {
      backend.commitNow(writes);
      this.evictToBudget();
      return;
    }
    const landing = backend.commit(writes).then(() => this.evictToBudget());
    // Observed by the next `landed` (which rethrows); never an unhandled rejection meanwhile.
    landing.catch(() => undefined);
    this.pending = landing;
  }

  /** Settles when the last commit is on disk (rejects with its error, once). */
  async landed(): Promise<void> {
    const pending = this.pending;
    this.pending = undefined;
    await pending;
  }
  /** Bytes a table entry grew or shrank by. */
  account(delta: number): void {
    this.cachedBytes += delta;
  }

  /** Forgets the cache and deletes everything on disk (a checkpoint of another layout). */
  clear(): void {
    for (const table of this.tables) table.clear();
    this.cachedBytes = 0;
    this.dirtyEntries = 0;
    this.backend?.clear();
  }

  stats(): StateStoreStats {
    return {
      cachedBytes: this.cachedBytes,
      cacheBudgetBytes: this.budgetBytes,
      misses: this.misses,
      evictions: this.evictions,
      commits: this.commits,
      lastCommitWrites: this.lastCommitWrites,
    };
  }

  private evictToBudget(): void {
    // From the table holding the most, a slice at a time: an equal slice from every table emptied
    // the small ones (ledger, index, groups) long before the largest (call contributions) shrank.
    const exhausted = new Set<CacheShare>();
    const target = this.budgetBytes * EVICT_TO_FRACTION;
    if (this.cachedBytes <= this.budgetBytes) return;
    while (this.cachedBytes > target) {
      let largest: CacheShare | undefined;
      for (const table of this.tables)
        if (!exhausted.has(table) && (largest === undefined || table.bytes > largest.bytes)) largest = table;
      if (largest === undefined) return;
      const excess = this.cachedBytes - target;
      const freed = largest.evict(Math.max(4096, Math.min(excess, Math.ceil(largest.bytes / 4))));
      this.cachedBytes -= freed;
      if (freed === 0) exhausted.add(largest);
    }
  }

  private claim(prefix: string): void {
    if ([...this.prefixes].some((known) => known.startsWith(prefix) || prefix.startsWith(known)))
      throw new InvariantError({ problem: `state table prefix ${JSON.stringify(prefix)} overlaps another table's` });
    this.prefixes.add(prefix);
  }
}
