/** A map from a key to a set of values, dropping a key when its set empties (state stays small). */
export class MultiMap<K, V> {
  private readonly entries = new Map<K, Set<V>>();

  add(key: K, value: V): void {
    const existing = this.entries.get(key);
    if (existing === undefined) this.entries.set(key, new Set([value]));
    else existing.add(value);
  }

  delete(key: K, value: V): void {
    const existing = this.entries.get(key);
    if (existing === undefined) return;
    existing.delete(value);
    if (existing.size === 0) this.entries.delete(key);
  }

  get(key: K): ReadonlySet<V> {
    return this.entries.get(key) ?? EMPTY;
  }
}

const EMPTY: ReadonlySet<never> = new Set<never>();
