/*
 * The keyed maps the engine keeps its state in. The engine names what it needs (FactLedger's
 * LedgerTables, FactIndex's IndexTables, ...); memory backs them here, the state room on disk.
 */

const NO_MEMBERS: ReadonlyMap<string, never> = new Map<string, never>();

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
export class MemoryTable<V> implements Table<V> {
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
export class MemoryLinkTable<V> implements LinkTable<V> {
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
