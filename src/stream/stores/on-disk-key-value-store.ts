import { bytesCodec } from "../../state/codecs/values.ts";
import type { Table } from "../../metrics/tables.ts";
import type { StateStore } from "../../state/state-store.ts";
import type { KeyValueStore, RestoreStart } from "./key-value-store.ts";
import { FileIoError } from "../../errors.ts";

/** Changelog offsets by partition: a store reflects every record of its changelog before them. */
export type ChangelogOffsets = ReadonlyMap<number, bigint>;

/** The layout of the values table and the marker; contents of another layout are not trusted. */
const LAYOUT = 1;
/** The marker's key: the values table's prefix ("v\0") never starts with a 0 byte. */
const MARKER_KEY = "\u0000changelog-offsets";

interface Marker {
  readonly layout: number;
  /** Changelog partition → the offset up to which the contents reflect it. */
  readonly offsets: Readonly<Record<string, string>>;
  /** Keys held (the store's size, without scanning it). */
  readonly size: number;
  /** The form the values were written in (a schema version), as the runtime named it. */
  readonly format?: string;
}

/**
 * A store of encoded values on disk behind a bounded cache, the table of a compacted topic (the
 * published results), which grows with time beyond what memory or a full read per assignment holds.
 * `checkpoint(ends)` commits the contents with the topic's offsets, so a restart reads only from
 * there; a commit forced by the cache budget drops that marker, since it may hold unsent values.
 */
export class OnDiskKeyValueStore implements KeyValueStore<Buffer> {
  readonly name: string;
  private readonly state: StateStore;
  private readonly values: Table<Buffer>;
  private readonly closeState: () => Promise<void>;
  private readonly marker: Marker | undefined;
  private count = 0;
  /** A put or delete since the last checkpoint: a commit now must delete the marker. */
  private written = false;
  private committing: Promise<void> | undefined;
  private failure: unknown;

  constructor(name: string, opened: { readonly state: StateStore; close(): Promise<void> }) {
    this.name = name;
    this.state = opened.state;
    this.closeState = () => opened.close();
    this.values = this.state.table("v\u0000", bytesCodec);
    this.marker = readMarker(this.state);
    if (this.marker === undefined) this.state.clear();
    else this.count = this.marker.size;
  }

  get size(): number {
    return this.count;
  }

  /**
   * Where the runtime reads the changelog from, given its end offsets now: from the marker's
   * offsets if they are within the topic, else (no marker, a topic shorter than the marker says:
   * recreated) from the beginning, into an emptied store.
   */
  restoreStart(ends: ChangelogOffsets, format?: string): RestoreStart {
    const offsets = this.marker?.offsets;
    const trusted =
      offsets !== undefined &&
      Object.entries(offsets).every(([partition, offset]) => BigInt(offset) <= (ends.get(Number(partition)) ?? 0n));
    if (!trusted) {
      if (this.count > 0 || offsets !== undefined) {
        this.state.clear();
        this.count = 0;
      }
      return { from: new Map([...ends.keys()].map((partition) => [partition, 0n] as const)), resumed: false };
    }
    // A partition the marker does not name (the topic gained partitions) is read from its beginning.
    // Values checkpointed in another form (a new schema version) are still what the topic holds up
    // to the marker, so it is read from there; but the writer must compare them all.
    return {
      from: new Map(
        [...ends.keys()].map((partition) => [partition, BigInt(offsets[String(partition)] ?? "0")] as const),
      ),
      resumed: this.marker?.format === format,
    };
  }

  /** Commits the contents with the changelog's end offsets: only when every write the store holds is acknowledged there. */
  async checkpoint(ends: ChangelogOffsets, format?: string): Promise<void> {
    await this.settled();
    const marker: Marker = {
      layout: LAYOUT,
      offsets: Object.fromEntries([...ends].map(([partition, offset]) => [String(partition), offset.toString()])),
      size: this.count,
      ...(format === undefined ? {} : { format }),
    };
    this.written = false;
    await this.state.commit([[MARKER_KEY, Buffer.from(JSON.stringify(marker), "utf8")]]);
    await this.state.landed();
  }

  get(key: string): Buffer | undefined {
    this.rethrow();
    return this.values.get(key);
  }

  put(key: string, value: Buffer): void {
    if (this.get(key) === undefined) this.count += 1;
    this.values.set(key, value, value.length);
    this.written = true;
    this.commitIfOverBudget();
  }

  delete(key: string): void {
    if (this.get(key) === undefined) return;
    this.count -= 1;
    this.values.delete(key);
    this.written = true;
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

  /** Waits for the commits in flight, then closes the store and releases its directory (what is not committed is dropped). */
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
    // Values written since the checkpoint may not be in the topic yet: the marker goes with them.
    const extra: [string, null][] = this.written ? [[MARKER_KEY, null]] : [];
    this.committing = this.state
      .commit(extra)
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
    if (this.failure !== undefined)
      throw new FileIoError({ path: `the ${this.name} store on disk`, operation: "write", cause: this.failure });
  }
}

function readMarker(state: StateStore): Marker | undefined {
  const stored = state.backend?.get(MARKER_KEY);
  if (stored === undefined) return undefined;
  const marker = JSON.parse(stored.toString("utf8")) as Partial<Marker>;
  if (marker.layout !== LAYOUT || marker.offsets === undefined || typeof marker.size !== "number") return undefined;
  return marker as Marker;
}
