import { detachedBytes } from "../../codec/binary-form.ts";
import type { KeyValueStore } from "./key-value-store.ts";

/** One write of a store, as its changelog records it: the encoded value, or null for a delete (a tombstone). */
export type ChangelogEntry = readonly [key: string, value: Buffer | string | null];

/** How a store's values are held in its changelog topic. */
export interface StoreCodec<V> {
  encode(value: V): Buffer | string;
  decode(bytes: Buffer | string): V;
}

/**
 * For a store that already holds its values encoded (the published results). A value restored from
 * its changelog is copied: kafkajs hands over slices of whole fetch responses, and a store holding
 * one value of each would keep every response of the restore alive.
 */
export const BYTES_CODEC: StoreCodec<Buffer> = {
  encode: (value) => value,
  decode: (bytes) => (typeof bytes === "string" ? Buffer.from(bytes) : detachedBytes(bytes)),
};

/**
 * Records which keys were put or deleted in the store it wraps, as Kafka Streams'
 * ChangeLoggingKeyValueBytesStore does, so the runtime (not the processor) writes the changelog.
 * It keeps only the key: the value is read and encoded when the runtime drains the log after the
 * batch, before the batch's offsets are committed, so a store of live values (a run monitor's
 * states, mutated in place) holds each value once, and within a batch only a key's last write is
 * logged. `restore` fills the store from its changelog without logging.
 */
export class ChangeLoggingKeyValueStore<V> implements KeyValueStore<V> {
  private readonly inner: KeyValueStore<V>;
  private readonly codec: StoreCodec<V>;
  private readonly dirty = new Set<string>();
  /** Keys restored from changelog records after the inner store's checkpoint (only when it resumed from one). */
  private sinceCheckpoint: Set<string> | undefined;

  constructor(inner: KeyValueStore<V>, codec: StoreCodec<V>) {
    this.inner = inner;
    this.codec = codec;
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
    this.dirty.add(key);
  }

  delete(key: string): void {
    this.inner.delete(key);
    this.dirty.add(key);
  }

  keys(): IterableIterator<string> {
    return this.inner.keys();
  }

  entries(): IterableIterator<[string, V]> {
    return this.inner.entries();
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }

  /** Where the changelog is read from on assignment (the inner store's say; from the beginning if it keeps nothing). */
  changelogStart(ends: ReadonlyMap<number, bigint>, format?: string): ReadonlyMap<number, bigint> {
    const start = this.inner.restoreStart?.(ends, format);
    this.sinceCheckpoint = start?.resumed === true ? new Set() : undefined;
    return start?.from ?? new Map([...ends.keys()].map((partition) => [partition, 0n] as const));
  }

  /** See KeyValueStore.takeKeysSinceCheckpoint. */
  takeKeysSinceCheckpoint(): ReadonlySet<string> | undefined {
    const keys = this.sinceCheckpoint;
    this.sinceCheckpoint = undefined;
    return keys;
  }

  /** True when the inner store keeps its contents across restarts with the changelog offsets they reflect. */
  get checkpointed(): boolean {
    return this.inner.checkpoint !== undefined;
  }

  /** Checkpoints the inner store (see KeyValueStore.checkpoint); nothing to do for a store in memory. */
  async checkpoint(ends: ReadonlyMap<number, bigint>, format?: string): Promise<void> {
    await this.inner.checkpoint?.(ends, format);
  }

  /** A changelog record read back on assignment (encoded, or null for a tombstone): applied, not logged again. */
  restore(key: string, encoded: Buffer | string | null): void {
    this.sinceCheckpoint?.add(key);
    if (encoded === null) this.inner.delete(key);
    else this.inner.put(key, this.codec.decode(encoded));
  }

  /** The keys written since the last drain with their current values encoded, in the order keys were first written. */
  drain(): ChangelogEntry[] {
    const entries: ChangelogEntry[] = [];
    for (const key of this.dirty) {
      const value = this.inner.get(key);
      entries.push([key, value === undefined ? null : this.codec.encode(value)]);
    }
    this.dirty.clear();
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
export async function writeChanged<V, E extends { equals(other: E): boolean }>(
  store: ChangeLoggingKeyValueStore<E>,
  writes: Iterable<readonly [string, V | null]>,
  encode: (value: V) => E | Promise<E>,
): Promise<void> {
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
