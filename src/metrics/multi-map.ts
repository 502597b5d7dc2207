/**
 * A map from a key to a set of values. Most keys hold one value (one summary per Delivery, one
 * cost per call), so a single value is stored as itself and only a second one makes a Set: a
 * Set per key would be most of the index's memory.
 */
export class MultiMap<K, V> {
  private readonly entries = new Map<K, V | Set<V>>();

  add(key: K, value: V): void {
    const existing = this.entries.get(key);
    if (existing === undefined) this.entries.set(key, value);
    else if (existing instanceof Set) existing.add(value);
    else if (existing !== value) this.entries.set(key, new Set([existing, value]));
  }

  delete(key: K, value: V): void {
    const existing = this.entries.get(key);
    if (existing === undefined) return;
    if (!(existing instanceof Set)) {
      if (existing === value) this.entries.delete(key);
      return;
    }
    existing.delete(value);
    if (existing.size === 1) this.entries.set(key, existing.values().next().value as V);
  }

  /** The keys holding two values or more, with their values (a scan of the Sets only). */
  *withSeveral(): Generator<[K, Iterable<V>]> {
    for (const [key, existing] of this.entries) if (existing instanceof Set) yield [key, existing];
  }

  get(key: K): Iterable<V> {
    const existing = this.entries.get(key);
    if (existing === undefined) return EMPTY;
    return existing instanceof Set ? existing : [existing];
  }
}

const EMPTY: readonly never[] = [];
