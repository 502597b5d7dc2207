/**
 * A processor's keyed state. Reads and writes are synchronous within a batch: the runtime restores
 * a store before the first batch of an assignment and drains its changelog after every batch, so
 * a processor never waits on I/O. A store on disk (issue #13) keeps this shape: it restores and
 * checkpoints around batches the same way, and a batch's keys are read through `get`.
 */
export interface KeyValueStore<V> {
  readonly name: string;
  get(key: string): V | undefined;
  put(key: string, value: V): void;
  delete(key: string): void;
  keys(): IterableIterator<string>;
  entries(): IterableIterator<[string, V]>;
  readonly size: number;
  /** Releases what the store holds outside memory (a store on disk); the store is not used after. */
  close?(): Promise<void>;
  /**
   * A store that keeps its contents across restarts (on disk) says where its changelog is to be
   * read from, given the changelog's end offsets by partition: it already reflects what lies before.
   * Without it the changelog is read from its beginning. `format` names the form its values are
   * written in now (a schema version): contents checkpointed in another form are kept, but the
   * store does not count as resumed (its writer compares everything, rewriting it in the new form).
   */
  restoreStart?(ends: ReadonlyMap<number, bigint>, format?: string): RestoreStart;
  /** Records that the contents reflect the changelog up to `ends`, in `format`: called only when every write the store holds is acknowledged there. */
  checkpoint?(ends: ReadonlyMap<number, bigint>, format?: string): Promise<void>;
  /**
   * The keys the changelog's records after the store's checkpoint set or deleted (once; later calls
   * give undefined). Undefined when the store did not resume from a checkpoint: it was restored
   * whole into an empty store, so whatever it holds may differ from what its writer holds.
   */
  takeKeysSinceCheckpoint?(): ReadonlySet<string> | undefined;
}

/**
 * Where a store's changelog is read from, and whether the store resumed from its checkpoint in the
 * current format (else it was emptied, or its values are in another form).
 */
export interface RestoreStart {
  readonly from: ReadonlyMap<number, bigint>;
  readonly resumed: boolean;
}

export class InMemoryKeyValueStore<V> implements KeyValueStore<V> {
  readonly name: string;
  private readonly values = new Map<string, V>();

  constructor(name: string) {
    this.name = name;
  }

  get(key: string): V | undefined {
    return this.values.get(key);
  }

  put(key: string, value: V): void {
    this.values.set(key, value);
  }

  delete(key: string): void {
    this.values.delete(key);
  }

  keys(): IterableIterator<string> {
    return this.values.keys();
  }

  entries(): IterableIterator<[string, V]> {
    return this.values.entries();
  }

  get size(): number {
    return this.values.size;
  }
}
