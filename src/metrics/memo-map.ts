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
