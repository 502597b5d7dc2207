import type { StateBackend } from "./backends.ts";

/** Per-entry bookkeeping (Map slot, key string, entry object) counted against the bound. */
const ENTRY_OVERHEAD_BYTES = 96;
/** A decoded JSON value takes about twice its encoded size on the V8 heap (objects, string headers). */
const DECODED_FACTOR = 2;

interface CacheEntry {
  /** The decoded value; undefined when the store has no such key (a cached miss). */
  value: unknown;
  /** Changed since the last commit: must be written. */
  dirty: boolean;
  /** Approximate bytes: the encoded size when last read or written, or the writer's estimate. */
  bytes: number;
  /** Read since the eviction sweep last passed it: it gets a second chance (CLOCK). */
  referenced: boolean;
}

/** An eviction sweep frees down to this fraction of the bound, so sweeps are rare and long. */
const LOW_WATER = 0.9;

export interface CacheCounters {
  hits: number;
  misses: number;
  /** Point reads that reached the store, and the time they took. */
  storeGets: number;
  storeGetMillis: number;
  /** Writes sent to the store (after coalescing), commits, and the time commits took (encoding included). */
  storeWrites: number;
  commits: number;
  commitMillis: number[];
  /** Dirty entries written early because the bound evicted them before the commit. */
  evictedDirty: number;
}

/**
 * A bounded write-back record cache in front of a store, as Kafka Streams' caching layer: decoded
 * values by key, evicted in CLOCK order (the oldest entry not read since the last sweep goes
 * first; a read one moves to the back once). A true LRU's delete-and-reinsert on every hit costs
 * several microseconds per read in a V8 Map of a million keys. Writes stay in the cache until the commit, so a
 * key written many times between two commits reaches the store once. A dirty entry evicted before
 * the commit moves to a pending batch (read before the store, written at the commit). Values are
 * JSON-encoded at the commit.
 */
export class RecordCache {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly pending = new Map<string, Buffer | null>();
  private bytes = 0;
  readonly counters: CacheCounters = {
    hits: 0,
    misses: 0,
    storeGets: 0,
    storeGetMillis: 0,
    storeWrites: 0,
    commits: 0,
    commitMillis: [],
    evictedDirty: 0,
  };
  private readonly backend: StateBackend;
  private readonly maxBytes: number;

  constructor(backend: StateBackend, maxBytes: number) {
    this.backend = backend;
    this.maxBytes = maxBytes;
  }

  get<T>(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      this.counters.hits += 1;
      entry.referenced = true;
      return entry.value as T | undefined;
    }
    this.counters.misses += 1;
    const pending = this.pending.get(key);
    const encoded = this.pending.has(key)
      ? pending === null || pending === undefined
        ? undefined
        : pending.toString("utf8")
      : this.readStore(key);
    const value = encoded === undefined ? undefined : (JSON.parse(encoded) as T);
    this.insert(key, {
      value,
      dirty: false,
      bytes: key.length + DECODED_FACTOR * (encoded?.length ?? 0) + ENTRY_OVERHEAD_BYTES,
      referenced: false,
    });
    return value;
  }

  /** Replaces a value (undefined deletes it); `bytesHint` sizes it until the commit measures it. */
  put(key: string, value: unknown, bytesHint: number): void {
    const bytes = key.length + DECODED_FACTOR * bytesHint + ENTRY_OVERHEAD_BYTES;
    const known = this.entries.get(key);
    if (known === undefined) {
      this.insert(key, { value, dirty: true, bytes, referenced: false });
      return;
    }
    known.value = value;
    known.dirty = true;
    known.referenced = true;
    this.bytes += bytes - known.bytes;
    known.bytes = bytes;
    if (this.bytes > this.maxBytes) this.evict();
  }

  /** Writes every dirty entry and `extra` (the checkpoint) in one atomic batch. */
  async commit(extra: { readonly key: string; readonly value: Buffer }): Promise<void> {
    let writes = 0;
    const started = performance.now();
    await this.backend.write((write) => {
      for (const [key, value] of this.pending) write(key, value);
      writes += this.pending.size;
      this.pending.clear();
      for (const [key, entry] of this.entries) {
        if (!entry.dirty) continue;
        const value = encode(entry.value);
        write(key, value);
        writes += 1;
        entry.dirty = false;
        const bytes = key.length + DECODED_FACTOR * (value?.length ?? 0) + ENTRY_OVERHEAD_BYTES;
        this.bytes += bytes - entry.bytes;
        entry.bytes = bytes;
      }
      write(extra.key, extra.value);
    });
    this.counters.commitMillis.push(performance.now() - started);
    this.counters.storeWrites += writes + 1;
    this.counters.commits += 1;
    if (this.bytes > this.maxBytes) this.evict();
  }

  get sizeBytes(): number {
    return this.bytes;
  }

  /** The stored text: decoded at once, because lmdb's getBinaryFast buffer is reused by the next read. */
  private readStore(key: string): string | undefined {
    const started = performance.now();
    const value = this.backend.get(key);
    const text = value === undefined ? undefined : value.toString("utf8", 0, value.length);
    this.counters.storeGetMillis += performance.now() - started;
    this.counters.storeGets += 1;
    return text;
  }

  private insert(key: string, entry: CacheEntry): void {
    this.entries.set(key, entry);
    this.bytes += entry.bytes;
    if (this.bytes > this.maxBytes) this.evict();
  }

  private evict(): void {
    const target = this.maxBytes * LOW_WATER;
    for (const [key, entry] of this.entries) {
      if (this.bytes <= target) return;
      if (entry.referenced) {
        // Second chance: to the back of the order (the sweep reaches it again only after the rest).
        entry.referenced = false;
        this.entries.delete(key);
        this.entries.set(key, entry);
        continue;
      }
      if (entry.dirty) {
        this.pending.set(key, encode(entry.value));
        this.counters.evictedDirty += 1;
      }
      this.entries.delete(key);
      this.bytes -= entry.bytes;
    }
  }
}

function encode(value: unknown): Buffer | null {
  return value === undefined ? null : Buffer.from(JSON.stringify(value), "utf8");
}
