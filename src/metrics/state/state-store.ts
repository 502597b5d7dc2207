import type { StateBackend } from "./state-backend.ts";

/** How a table's values are stored on disk. */
export interface ValueCodec<V> {
  encode(value: V): Buffer;
  decode(bytes: Buffer): V;
  /** Called once a commit's writes are all encoded: a codec may reuse encodings within one commit, not across. */
  committed?(): void;
}

/**
 * Eviction after a commit goes down to this share of the budget, not to the budget itself: the
 * cache is over its budget again, and commits, only after that much has been read or written, not
 * after the next batch (a commit per batch wrote a busy entity's document at every batch).
 */
const EVICT_TO_FRACTION = 0.7;

/**
 * Entries a commit may write: past this many dirty entries the store is over its budget whatever
 * their bytes. LMDB allocates a page for every page a write transaction dirties and keeps the
 * pages it freed for later transactions, so the largest commit sets the process's native memory for
 * good. Bytes alone did not bound it: a member loading the contributions log sets units whose
 * size the cache can only guess until they are encoded, and its commits of 80,000 and more units
 * left about 550 MiB of native memory beside a 400 MiB heap (1M facts, 32 MiB cache). Live
 * commits write about 20,000 entries (bench/RESULTS.md).
 */
export const MAX_DIRTY_ENTRIES = 20_000;

/** Bookkeeping per cached entry (key, map slot, flags), added to its encoded size when counting the cache. */
const ENTRY_OVERHEAD_BYTES = 96;
/** A decoded value takes about this many times its encoded size in the V8 heap. */
const DECODED_PER_ENCODED_BYTE = 3;
/** A link key's member map, empty (measured: the Map and its first hash table). */
const MEMBER_MAP_BYTES = 200;
/** A cached link key without members: its entry, its slot in the table's map (measured). */
const LINK_ENTRY_OVERHEAD_BYTES = 200;

const ABSENT = Symbol("absent");
const NO_MEMBERS: ReadonlyMap<string, never> = new Map<string, never>();
/**
 * A link key's header member: written while the key has members, so that looking up a key with
 * none is one point read, not a range scan. No real member is empty (ids have at least one character).
 */
const HEADER = "";
const NO_BYTES = Buffer.alloc(0);

interface Entry<V> {
  readonly key: string;
  value: V | typeof ABSENT;
  /** Estimated heap bytes of the decoded value. */
  bytes: number;
  dirty: boolean;
  /** Read since the clock hand last passed (CLOCK eviction). */
  referenced: boolean;
}

interface LinkEntry<V> {
  readonly key: string;
  /**
   * Allocated with the first member: most keys an ingest looks up have none, and an empty Map and
   * Set cost about 400 heap bytes per cached key (measured), four times what the entry is counted at.
   */
  members: Map<string, V> | undefined;
  /** The key has members on disk (its header entry is written): see CachedLinkTable. */
  stored: boolean;
  bytes: number;
  /** Members written since the last commit; allocated with the first write. */
  dirtyMembers: Set<string> | undefined;
  referenced: boolean;
}

/** One table's share of the cache: what commit writes and eviction may drop. */
interface CacheShare {
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
    return { cachedBytes: this.cachedBytes, cacheBudgetBytes: this.budgetBytes, misses: this.misses, evictions: this.evictions, commits: this.commits, lastCommitWrites: this.lastCommitWrites };
  }

  private evictToBudget(): void {
    // From the table holding the most, a slice at a time: an equal slice from every table emptied
    // the small ones (ledger, index, groups) long before the largest (call contributions) shrank.
    const exhausted = new Set<CacheShare>();
    const target = this.budgetBytes * EVICT_TO_FRACTION;
    if (this.cachedBytes <= this.budgetBytes) return;
    while (this.cachedBytes > target) {
      let largest: CacheShare | undefined;
      for (const table of this.tables) if (!exhausted.has(table) && (largest === undefined || table.bytes > largest.bytes)) largest = table;
      if (largest === undefined) return;
      const excess = this.cachedBytes - target;
      const freed = largest.evict(Math.max(4096, Math.min(excess, Math.ceil(largest.bytes / 4))));
      this.cachedBytes -= freed;
      if (freed === 0) exhausted.add(largest);
    }
  }

  private claim(prefix: string): void {
    if ([...this.prefixes].some((known) => known.startsWith(prefix) || prefix.startsWith(known))) throw new Error(`state table prefix ${JSON.stringify(prefix)} overlaps another table's`);
    this.prefixes.add(prefix);
  }
}

/** Encoded size to estimated heap size. */
function heapBytes(encodedBytes: number): number {
  return encodedBytes * DECODED_PER_ENCODED_BYTE + ENTRY_OVERHEAD_BYTES;
}

/**
 * Values by key. A value read from a table may be mutated in place (a group's sums) and then
 * `touch`ed, so it is written at the next commit; until then it stays cached.
 */
export interface Table<V> {
  readonly size: number;
  get(key: string): V | undefined;
  /**
   * The value to mutate in place: `get` and `touch` in one lookup (undefined, and nothing marked,
   * when the key has no value). `grewByBytes` as for `touch`.
   */
  update(key: string, grewByBytes?: number): V | undefined;
  /** `encodedBytesHint`: about how many bytes the value takes encoded (for the cache's count). */
  set(key: string, value: V, encodedBytesHint?: number): void;
  /** Marks a value mutated in place as changed; `grewByBytes` estimates how many encoded bytes the change added. */
  touch(key: string, grewByBytes?: number): void;
  delete(key: string): void;
  /** Every (key, value), unordered. */
  scan(): Iterable<[string, V]>;
}

/**
 * Sets of members by key (a Delivery's costs, a group's as-of times), read whole.
 */
export interface LinkTable<V> {
  readonly size: number;
  /** The members of `key` (a live view: do not hold it across writes). */
  members(key: string): ReadonlyMap<string, V>;
  /** The members' values. */
  get(key: string): Iterable<V>;
  member(key: string, member: string): V | undefined;
  /** A member's value to mutate in place, marked for the next commit (undefined, and nothing marked, when absent). */
  updateMember(key: string, member: string): V | undefined;
  add(key: string, member: string, value: V, encodedBytesHint?: number): void;
  delete(key: string, member: string): void;
  /** Every key with its members, unordered. */
  scan(): Iterable<[string, ReadonlyMap<string, V>]>;
}

/** A table of the state in memory: a plain map (file replay holds the whole state). */
class MemoryTable<V> implements Table<V> {
  private readonly values = new Map<string, V>();

  get size(): number {
    return this.values.size;
  }

  get(key: string): V | undefined {
    return this.values.get(key);
  }

  update(key: string): V | undefined {
    return this.values.get(key);
  }

  set(key: string, value: V): void {
    this.values.set(key, value);
  }

  touch(): void {
    // A mutated value is the stored value.
  }

  delete(key: string): void {
    this.values.delete(key);
  }

  scan(): Iterable<[string, V]> {
    return this.values.entries();
  }
}

/** A link table in memory: a map of maps, a key's entry dropped with its last member. */
class MemoryLinkTable<V> implements LinkTable<V> {
  private readonly keys = new Map<string, Map<string, V>>();

  get size(): number {
    return this.keys.size;
  }

  members(key: string): ReadonlyMap<string, V> {
    return this.keys.get(key) ?? NO_MEMBERS;
  }

  get(key: string): Iterable<V> {
    return (this.keys.get(key) ?? NO_MEMBERS).values();
  }

  member(key: string, member: string): V | undefined {
    return this.keys.get(key)?.get(member);
  }

  updateMember(key: string, member: string): V | undefined {
    return this.keys.get(key)?.get(member);
  }

  add(key: string, member: string, value: V): void {
    let members = this.keys.get(key);
    if (members === undefined) {
      members = new Map();
      this.keys.set(key, members);
    }
    members.set(member, value);
  }

  delete(key: string, member: string): void {
    const members = this.keys.get(key);
    if (members === undefined || !members.delete(member)) return;
    if (members.size === 0) this.keys.delete(key);
  }

  scan(): Iterable<[string, ReadonlyMap<string, V>]> {
    return this.keys.entries();
  }
}

/**
 * What both cached tables share: their entries by key, their share of the store's byte count,
 * and CLOCK eviction of clean entries (`isDirty` says which an entry is).
 */
abstract class CachedSegment<V, E extends { readonly key: string; bytes: number; referenced: boolean }> implements CacheShare {
  readonly name: string;
  /** Estimated heap bytes of this table's cached entries (its share of the store's count). */
  bytes = 0;
  protected readonly store: StateStore;
  protected readonly backend: StateBackend;
  protected readonly prefix: string;
  protected readonly codec: ValueCodec<V>;
  private readonly entries = new Map<string, E>();
  /**
   * The cached entries in CLOCK order, and the clock's hand. An array, not an iterator over the map:
   * each step of a map iterator allocates its result and a [key, entry] pair, and eviction steps
   * through every entry of the cache (a tenth of all the engine allocated, measured).
   */
  private ring: E[] = [];
  private hand = 0;

  constructor(store: StateStore, backend: StateBackend, prefix: string, codec: ValueCodec<V>) {
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

/** A table over the backend, through the record cache. */
class CachedTable<V> extends CachedSegment<V, Entry<V>> implements Table<V> {
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
      const created: Entry<V> = { key, value, bytes: heapBytes(encodedBytesHint + key.length), dirty: true, referenced: true };
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
    const entry: Entry<V> = { key, value: bytes === undefined ? ABSENT : this.codec.decode(bytes), bytes: heapBytes(bytes?.length ?? key.length), dirty: false, referenced: true };
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

/**
 * A link table over the backend, through the record cache: the members of a
 * key are one prefix scan on disk, after a point read of its header (`prefix`, the key's length, the key, the member), as Kafka
 * Streams' foreign-key join prefix-scans its subscription store, so adding a member writes one small
 * entry and never rewrites a growing list.
 */
class CachedLinkTable<V> extends CachedSegment<V, LinkEntry<V>> implements LinkTable<V> {
  /** Entries with dirty members since the last commit, each once. */
  private dirtyEntries: LinkEntry<V>[] = [];

  protected isDirty(entry: LinkEntry<V>): boolean {
    // The set exists only while it holds a member (markDirty creates it, drain drops it).
    return entry.dirtyMembers !== undefined;
  }

  /** The members of `key` (a live view: do not hold it across writes). */
  members(key: string): ReadonlyMap<string, V> {
    return this.load(key).members ?? NO_MEMBERS;
  }

  get(key: string): Iterable<V> {
    return this.members(key).values();
  }

  member(key: string, member: string): V | undefined {
    return this.load(key).members?.get(member);
  }

  updateMember(key: string, member: string): V | undefined {
    const entry = this.load(key);
    const value = entry.members?.get(member);
    if (value !== undefined) this.markDirty(entry, member);
    return value;
  }

  add(key: string, member: string, value: V, encodedBytesHint = 32): void {
    const entry = this.load(key);
    entry.members ??= new Map();
    if (!entry.members.has(member)) {
      const size = heapBytes(encodedBytesHint + member.length) + (entry.members.size === 0 ? MEMBER_MAP_BYTES : 0);
      entry.bytes += size;
      this.account(size);
    }
    entry.members.set(member, value);
    this.markDirty(entry, member);
  }

  delete(key: string, member: string): void {
    const entry = this.load(key);
    if (entry.members?.delete(member) !== true) return;
    this.markDirty(entry, member);
  }

  /** Every key with its members: the cache over what is on disk. Unordered. */
  *scan(): Generator<[string, ReadonlyMap<string, V>]> {
    // Cached keys first, as Table.scan does.
    const cached: [string, ReadonlyMap<string, V>][] = [];
    const seen = new Set<string>();
    for (const entry of this.cachedEntries()) {
      seen.add(entry.key);
      if (entry.members !== undefined && entry.members.size > 0) cached.push([entry.key, new Map(entry.members)]);
    }
    yield* cached;
    let current: { key: string; members: Map<string, V> } | undefined;
    for (const [storedKey, bytes] of this.backend.scan(this.prefix)) {
      const { key, member } = this.parse(storedKey);
      if (seen.has(key) || member === HEADER) continue;
      if (current?.key !== key) {
        if (current !== undefined) yield [current.key, current.members];
        current = { key, members: new Map() };
      }
      current.members.set(member, this.codec.decode(bytes));
    }
    if (current !== undefined) yield [current.key, current.members];
  }

  drain(writes: [string, Buffer | null][]): void {
    const dirty = this.dirtyEntries;
    this.dirtyEntries = [];
    for (const entry of dirty) {
      if (entry.dirtyMembers === undefined) continue;
      const base = this.keyPrefix(entry.key);
      for (const member of entry.dirtyMembers) {
        const value = entry.members?.get(member);
        writes.push([base + member, value === undefined ? null : this.codec.encode(value)]);
      }
      entry.dirtyMembers = undefined;
      const hasMembers = entry.members !== undefined && entry.members.size > 0;
      if (hasMembers !== entry.stored) {
        writes.push([base + HEADER, hasMembers ? NO_BYTES : null]);
        entry.stored = hasMembers;
      }
    }
  }

  override clear(): void {
    super.clear();
    this.dirtyEntries = [];
  }


  private load(key: string): LinkEntry<V> {
    let entry = this.cached(key);
    if (entry !== undefined) {
      entry.referenced = true;
      return entry;
    }
    let members: Map<string, V> | undefined;
    let bytes = LINK_ENTRY_OVERHEAD_BYTES + key.length;
    this.store.misses += 1;
    const base = this.keyPrefix(key);
    // The header is a point read (half a microsecond); the scan is only for keys that have members
    // (a range read costs 8 µs even when empty, and most keys an ingest looks up are new).
    const stored = this.backend.get(base + HEADER) !== undefined;
    if (stored) {
      members = new Map();
      bytes += MEMBER_MAP_BYTES;
      for (const [storedKey, value] of this.backend.scan(base)) {
        const member = storedKey.slice(base.length);
        if (member === HEADER) continue;
        members.set(member, this.codec.decode(value));
        bytes += heapBytes(value.length + storedKey.length - base.length);
      }
    }
    entry = { key, members, stored, bytes, dirtyMembers: undefined, referenced: true };
    this.insert(entry);
    return entry;
  }

  private markDirty(entry: LinkEntry<V>, member: string): void {
    if (entry.dirtyMembers === undefined) {
      entry.dirtyMembers = new Set();
      this.dirtyEntries.push(entry);
    }
    // Every member is a write of its own.
    const dirtyBefore = entry.dirtyMembers.size;
    entry.dirtyMembers.add(member);
    this.store.dirtyEntries += entry.dirtyMembers.size - dirtyBefore;
  }

  /** The key's length makes the prefix exact: no key's members are read as another key's. */
  private keyPrefix(key: string): string {
    return `${this.prefix}${key.length}\u0000${key}\u0000`;
  }

  private parse(storedKey: string): { key: string; member: string } {
    const lengthEnd = storedKey.indexOf("\u0000", this.prefix.length);
    const length = Number(storedKey.slice(this.prefix.length, lengthEnd));
    const key = storedKey.slice(lengthEnd + 1, lengthEnd + 1 + length);
    return { key, member: storedKey.slice(lengthEnd + 2 + length) };
  }
}
