import { RocksLevel } from "@nxtedition/rocksdb";
import { ClassicLevel } from "classic-level";
import { open as openLmdb } from "lmdb";

/** Hands each write of a commit to `write`: a value, or null to delete the key. */
export type CommitWrites = (write: (key: string, value: Buffer | null) => void) => void;

/**
 * The least an engine state store needs from an embedded key-value store: a synchronous point read
 * (the engine's unit recomputation is synchronous; an await per cache miss would dominate) and an
 * atomic batch of writes (state and checkpoint commit together). Nothing here fsyncs per commit:
 * the changelog topic is the durable copy, as with Kafka Streams' RocksDB stores.
 */
export interface StateBackend {
  /** The stored bytes, valid only until the next call (lmdb reuses one buffer): decode at once. */
  get(key: string): Buffer | undefined;
  /** Applies the writes as one atomic batch; they are produced while the batch is built, never all held encoded. */
  write(writes: CommitWrites): Promise<void>;
  close(): Promise<void>;
}

export const BACKEND_NAMES = ["lmdb", "classic-level", "rocksdb"] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

export function isBackendName(name: string): name is BackendName {
  return (BACKEND_NAMES as readonly string[]).includes(name);
}

/** Opens (creating if missing) the store of this kind in `directory`. */
export async function openBackend(name: BackendName, directory: string): Promise<StateBackend> {
  switch (name) {
    case "lmdb":
      return openLmdbBackend(directory);
    case "classic-level":
      return openClassicLevelBackend(directory);
    case "rocksdb":
      return openRocksBackend(directory);
  }
}

/**
 * LMDB (lmdb-js): a memory-mapped B+tree. Reads are synchronous lookups in mapped pages
 * (getBinaryFast returns a reused buffer: the caller decodes it at once); a commit is one write
 * transaction. noSync: the OS writes the pages back; a process crash loses nothing committed, a
 * machine crash may, and the store is then restored from its changelog.
 */
function openLmdbBackend(directory: string): StateBackend {
  const db = openLmdb<Buffer, string>({ path: directory, encoding: "binary", compression: false, noSync: true });
  return {
    get: (key) => db.getBinaryFast(key),
    write: (writes) => {
      db.transactionSync(() => writes((key, value) => (value === null ? db.removeSync(key) : db.putSync(key, value))));
      return Promise.resolve();
    },
    close: () => db.close(),
  };
}

/** LevelDB (classic-level 3): an LSM tree with its defaults (8 MiB block cache, snappy compression). */
async function openClassicLevelBackend(directory: string): Promise<StateBackend> {
  const db = new ClassicLevel<string, Buffer>(directory, { keyEncoding: "utf8", valueEncoding: "buffer" });
  await db.open();
  return {
    get: (key) => db.getSync(key),
    write: (writes) => {
      const batch = db.batch();
      writes((key, value) => (value === null ? batch.del(key) : batch.put(key, value)));
      return batch.write();
    },
    close: () => db.close(),
  };
}

/** The synchronous multi-get @nxtedition/rocksdb has but does not declare (abstract-level 1 types). */
interface RocksSyncReads {
  _getManySync(keys: readonly string[], options: object): (Buffer | undefined)[];
}

/** RocksDB (@nxtedition/rocksdb 12): an LSM tree with its defaults. */
async function openRocksBackend(directory: string): Promise<StateBackend> {
  const db = new RocksLevel(directory, { keyEncoding: "utf8", valueEncoding: "buffer" });
  await db.open();
  const reads = db as unknown as RocksSyncReads;
  const noOptions = {};
  return {
    get: (key) => reads._getManySync([key], noOptions)[0],
    write: (writes) => {
      const batch = db.batch();
      writes((key, value) => (value === null ? batch.del(key) : batch.put(key, value)));
      return batch.write();
    },
    close: () => db.close(),
  };
}
