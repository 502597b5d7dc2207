import { InvariantError } from "../errors.ts";
/** The part of Map and WeakMap that memoisation needs. */
interface KeyedStore<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): unknown;
}

/**
 * The value stored under `key`, created (and stored) on first use. The engine interns scopes,
 * cohorts, result keys and money-slice keys through chains of these lookups, so that a million
 * facts share a few thousand objects and strings instead of building one per fact.
 */
export function memoized<K, V>(store: KeyedStore<K, V>, key: K, create: () => V): V {
  let value = store.get(key);
  if (value === undefined) {
    value = create();
    store.set(key, value);
  }
  return value;
}

/**
 * A memo that holds at most about twice `capacity` entries: when the current generation fills, it
 * becomes the old one and the previous old one is dropped; a hit in the old generation moves back
 * to the current one. For interning whose keys grow with time (windows, snapshots, result keys): a
 * process running for months would otherwise keep every one it ever saw. Dropping an entry only
 * costs creating an equal value again (interned values are compared by value, never by identity).
 */
export class BoundedMemo<K, V> implements KeyedStore<K, V> {
  private readonly capacity: number;
  private current = new Map<K, V>();
  private previous = new Map<K, V>();

  constructor(capacity: number) {
    if (!(capacity >= 1))
      throw new InvariantError({ problem: `a bounded memo needs a capacity of at least 1, not ${String(capacity)}` });
    this.capacity = capacity;
  }

  get size(): number {
    return this.current.size + this.previous.size;
  }

  get(key: K): V | undefined {
    const value = this.current.get(key);
    if (value !== undefined) return value;
    const old = this.previous.get(key);
    if (old !== undefined) {
      this.previous.delete(key);
      this.set(key, old);
    }
    return old;
  }

  set(key: K, value: V): void {
    if (this.current.size >= this.capacity && !this.current.has(key)) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
  }
}
