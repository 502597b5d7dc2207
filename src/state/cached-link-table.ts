import type { LinkTable } from "../metrics/tables.ts";
import { CachedSegment, heapBytes } from "./cache-segment.ts";

/** A link key's member map, empty: the Map and its first hash table. */
const MEMBER_MAP_BYTES = 200;
/** A cached link key without members: its entry, its slot in the table's map. */
const LINK_ENTRY_OVERHEAD_BYTES = 200;
const NO_MEMBERS: ReadonlyMap<string, never> = new Map<string, never>();
/**
 * A link key's header member: written while the key has members, so that looking up a key with
 * none is one point read, not a range scan. No real member is empty (ids have at least one character).
 */
const HEADER = "";
const NO_BYTES = Buffer.alloc(0);

interface LinkEntry<V> {
  readonly key: string;
  /**
   * Allocated with the first member: most keys an ingest looks up have none, and an empty Map and
   * Set per cached key would cost several times what the entry is counted at.
   */
  members: Map<string, V> | undefined;
  /** The key has members on disk (its header entry is written): see CachedLinkTable. */
  stored: boolean;
  bytes: number;
  /** Members written since the last commit; allocated with the first write. */
  dirtyMembers: Set<string> | undefined;
  referenced: boolean;
}

/**
 * A link table over the backend, through the record cache: the members of a
 * key are one prefix scan on disk, after a point read of its header (`prefix`, the key's length, the key, the member), as Kafka
 * Streams' foreign-key join prefix-scans its subscription store, so adding a member writes one small
 * entry and never rewrites a growing list.
 */
export class CachedLinkTable<V> extends CachedSegment<V, LinkEntry<V>> implements LinkTable<V> {
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
    // The header is a point read; the scan, much dearer even when empty, is only for keys that have
    // members (most keys an ingest looks up are new).
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
