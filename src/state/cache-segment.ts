import type { StateBackend } from "./state-backend.ts";
import type { ValueCodec } from "./value-codec.ts";

/** Bookkeeping per cached entry (key, map slot, flags), added to its encoded size when counting the cache. */
const ENTRY_OVERHEAD_BYTES = 96;
/** A decoded value takes about this many times its encoded size in the V8 heap. */
export const DECODED_PER_ENCODED_BYTE = 3;

/** One table's share of the cache: what commit writes and eviction may drop. */
export interface CacheShare {
  readonly name: string;
  /** Appends this table's dirty writes (backend key, bytes or null) and marks them clean. */
  drain(writes: [string, Buffer | null][]): void;
  /** Drops clean entries in CLOCK order until `bytes` are freed; returns the bytes freed. */
  evict(bytes: number): number;
  /** Entries cached, for telemetry. */
  readonly size: number;
  /** Estimated heap bytes of its cached entries. */
  readonly bytes: number;
  clear(): void;
}

/** The store's counters every cached table adds to (StateStore). */
export interface CacheCounts {
  misses: number;
  evictions: number;
  dirtyEntries: number;
  /** Bytes a table entry grew or shrank by. */
  account(delta: number): void;
}

/** Encoded size to estimated heap size. */
export function heapBytes(encodedBytes: number): number {
  return encodedBytes * DECODED_PER_ENCODED_BYTE + ENTRY_OVERHEAD_BYTES;
}

/**
 * What both cached tables share: their entries by key, their share of the store's byte count,
 * and CLOCK eviction of clean entries (`isDirty` says which an entry is).
 */
export abstract class CachedSegment<
  V,
  E extends { readonly key: string; bytes: number; referenced: boolean },
> implements CacheShare {
  readonly name: string;
  /** Estimated heap bytes of this table's cached entries (its share of the store's count). */
  bytes = 0;
  protected readonly store: CacheCounts;
  protected readonly backend: StateBackend;
  protected readonly prefix: string;
  protected readonly codec: ValueCodec<V>;
  private readonly entries = new Map<string, E>();
  /**
   * The cached entries in CLOCK order, and the clock's hand. An array, not an iterator over the map:
   * each step of a map iterator allocates its result and a [key, entry] pair, and eviction steps
   * through every entry of the cache.
   */
  private ring: E[] = [];
  private hand = 0;

  constructor(store: CacheCounts, backend: StateBackend, prefix: string, codec: ValueCodec<V>) {
    this.store = store;
    this.backend = backend;
    this.name = prefix;
    this.prefix = prefix;
    this.codec = codec;
  }

  get size(): number {
    return this.entries.size;
  }

  abstract drain(writes: [string, Buffer | null][]): void;

  /** An entry the next commit must write: never evicted. */
  protected abstract isDirty(entry: E): boolean;

  protected account(delta: number): void {
    this.bytes += delta;
    this.store.account(delta);
  }

  /** The cached entry of a key. */
  protected cached(key: string): E | undefined {
    return this.entries.get(key);
  }

  /** Caches a new entry (the key has none). */
  protected insert(entry: E): void {
    this.entries.set(entry.key, entry);
    this.ring.push(entry);
    this.account(entry.bytes);
  }

  /** The cached entries (for scans). */
  protected cachedEntries(): IterableIterator<E> {
    return this.entries.values();
  }

  evict(bytes: number): number {
    const ring = this.ring;
    let freed = 0;
    let visited = 0;
    const limit = ring.length * 2;
    while (freed < bytes && visited < limit && ring.length > 0) {
      if (this.hand >= ring.length) this.hand = 0;
      const entry = ring[this.hand] as E;
      visited += 1;
      if (this.isDirty(entry)) {
        this.hand += 1;
        continue;
      }
      if (entry.referenced) {
        entry.referenced = false;
        this.hand += 1;
        continue;
      }
      this.entries.delete(entry.key);
      // The last entry takes the evicted one's place and is looked at next.
      const last = ring.pop() as E;
      if (this.hand < ring.length) ring[this.hand] = last;
      freed += entry.bytes;
      this.bytes -= entry.bytes;
      this.store.evictions += 1;
    }
    return freed;
  }

  clear(): void {
    this.entries.clear();
    this.ring = [];
    this.hand = 0;
    this.bytes = 0;
  }
}
