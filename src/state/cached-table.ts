import type { Table } from "../metrics/tables.ts";
import { CachedSegment, DECODED_PER_ENCODED_BYTE, heapBytes } from "./cache-segment.ts";

const ABSENT = Symbol("absent");

interface Entry<V> {
  readonly key: string;
  value: V | typeof ABSENT;
  /** Estimated heap bytes of the decoded value. */
  bytes: number;
  dirty: boolean;
  /** Read since the clock hand last passed (CLOCK eviction). */
  referenced: boolean;
}

/** A table over the backend, through the record cache. */
export class CachedTable<V> extends CachedSegment<V, Entry<V>> implements Table<V> {
  /** Entries dirty since the last commit, each once (an entry is listed when it turns dirty). */
  private dirtyEntries: Entry<V>[] = [];

  protected isDirty(entry: Entry<V>): boolean {
    return entry.dirty;
  }

  get(key: string): V | undefined {
    const entry = this.cached(key) ?? this.load(key);
    entry.referenced = true;
    return entry.value === ABSENT ? undefined : entry.value;
  }

  update(key: string, grewByBytes = 0): V | undefined {
    const entry = this.cached(key) ?? this.load(key);
    entry.referenced = true;
    if (entry.value === ABSENT) return undefined;
    this.changed(entry, grewByBytes);
    return entry.value;
  }

  set(key: string, value: V, encodedBytesHint = 64): void {
    const entry = this.cached(key);
    if (entry === undefined) {
      const created: Entry<V> = {
        key,
        value,
        bytes: heapBytes(encodedBytesHint + key.length),
        dirty: true,
        referenced: true,
      };
      this.insert(created);
      this.dirtyEntries.push(created);
      this.store.dirtyEntries += 1;
      return;
    }
    entry.value = value;
    entry.referenced = true;
    this.changed(entry, 0);
  }

  /** Marks a value mutated in place as changed (the next commit writes it, and measures it again). */
  touch(key: string, grewByBytes = 0): void {
    const entry = this.cached(key);
    if (entry !== undefined) this.changed(entry, grewByBytes);
  }

  delete(key: string): void {
    // Kept as a dirty ABSENT entry until the commit writes the delete.
    const entry = this.cached(key);
    if (entry === undefined) {
      const created: Entry<V> = { key, value: ABSENT, bytes: heapBytes(key.length), dirty: true, referenced: false };
      this.insert(created);
      this.dirtyEntries.push(created);
      this.store.dirtyEntries += 1;
      return;
    }
    entry.value = ABSENT;
    this.changed(entry, 0);
  }

  /**
   * Every (key, value): the cache over what is on disk. Unordered. The cached keys are taken first,
   * so a read during the scan (which may cache a key the disk part then reaches) yields nothing twice.
   */
  *scan(): Generator<[string, V]> {
    const cached: [string, V][] = [];
    const seen = new Set<string>();
    for (const entry of this.cachedEntries()) {
      seen.add(entry.key);
      if (entry.value !== ABSENT) cached.push([entry.key, entry.value]);
    }
    yield* cached;
    for (const [storedKey, bytes] of this.backend.scan(this.prefix)) {
      const key = storedKey.slice(this.prefix.length);
      if (!seen.has(key)) yield [key, this.codec.decode(bytes)];
    }
  }

  drain(writes: [string, Buffer | null][]): void {
    const dirty = this.dirtyEntries;
    this.dirtyEntries = [];
    for (const entry of dirty) {
      // Evicted entries are never dirty, so every listed entry is still cached.
      if (!entry.dirty) continue;
      entry.dirty = false;
      if (entry.value === ABSENT) {
        writes.push([this.prefix + entry.key, null]);
        continue;
      }
      const bytes = this.codec.encode(entry.value);
      writes.push([this.prefix + entry.key, bytes]);
      const size = heapBytes(bytes.length + entry.key.length);
      this.account(size - entry.bytes);
      entry.bytes = size;
    }
  }

  override clear(): void {
    super.clear();
    this.dirtyEntries = [];
  }

  /** A key read through to the backend, cached (absent keys too: most keys an ingest looks up are new). */
  private load(key: string): Entry<V> {
    this.store.misses += 1;
    const bytes = this.backend.get(this.prefix + key);
    const entry: Entry<V> = {
      key,
      value: bytes === undefined ? ABSENT : this.codec.decode(bytes),
      bytes: heapBytes(bytes?.length ?? key.length),
      dirty: false,
      referenced: true,
    };
    this.insert(entry);
    return entry;
  }

  private changed(entry: Entry<V>, grewByBytes: number): void {
    if (grewByBytes > 0) {
      const grown = grewByBytes * DECODED_PER_ENCODED_BYTE;
      entry.bytes += grown;
      this.account(grown);
    }
    if (entry.dirty) return;
    entry.dirty = true;
    this.dirtyEntries.push(entry);
    this.store.dirtyEntries += 1;
  }
}
