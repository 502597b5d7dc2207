import type { KeyValueStore } from "./key-value-store.ts";

/** One write of a store, as its changelog records it: a value, or null for a delete (a tombstone). */
export type ChangelogEntry<V> = readonly [key: string, value: V | null];

/**
 * Records every put and delete of the store it wraps, as Kafka Streams'
 * ChangeLoggingKeyValueBytesStore does, so the runtime (not the processor) writes the changelog.
 * Within a batch only a key's last write matters: the runtime drains one entry per key after the
 * batch, before the batch's offsets are committed. `restore` fills the store from its changelog
 * without logging.
 */
export class ChangeLoggingKeyValueStore<V> implements KeyValueStore<V> {
  private readonly inner: KeyValueStore<V>;
  private readonly pending = new Map<string, V | null>();

  constructor(inner: KeyValueStore<V>) {
    this.inner = inner;
  }

  get name(): string {
    return this.inner.name;
  }

  get size(): number {
    return this.inner.size;
  }

  get(key: string): V | undefined {
    return this.inner.get(key);
  }

  put(key: string, value: V): void {
    this.inner.put(key, value);
    this.pending.set(key, value);
  }

  delete(key: string): void {
    this.inner.delete(key);
    this.pending.set(key, null);
  }

  keys(): IterableIterator<string> {
    return this.inner.keys();
  }

  entries(): IterableIterator<[string, V]> {
    return this.inner.entries();
  }

  /** A changelog record read back on assignment: applied to the store, not logged again. */
  restore(key: string, value: V | null): void {
    if (value === null) this.inner.delete(key);
    else this.inner.put(key, value);
  }

  /** The writes since the last drain, one per key, in the order keys were first written. */
  drain(): ChangelogEntry<V>[] {
    const entries = [...this.pending];
    this.pending.clear();
    return entries;
  }
}

/**
 * Writes a keyed table through a changelogged store of encoded values, dropping writes equal to
 * what the store holds: an upsert whose encoding equals the held value, a delete of an absent key.
 * Restored from a compacted topic, the store holds what the topic holds, so writing a rebuilt
 * table through it logs exactly the difference (upserts of changed values, tombstones of keys
 * gone) and a restart with nothing new logs nothing. Encodings are compared, not values, so a new
 * schema version rewrites every value once in the new form.
 */
export async function writeChanged<V, E extends { equals(other: E): boolean }>(store: ChangeLoggingKeyValueStore<E>, writes: Iterable<readonly [string, V | null]>, encode: (value: V) => E | Promise<E>): Promise<void> {
  for (const [key, value] of writes) {
    const held = store.get(key);
    if (value === null) {
      if (held !== undefined) store.delete(key);
      continue;
    }
    const encoded = await encode(value);
    if (held === undefined || !held.equals(encoded)) store.put(key, encoded);
  }
}
