import { mkdirSync } from "node:fs";
import { open as openLmdb, type RootDatabase } from "lmdb";
import { InvariantError } from "../errors.ts";

/**
 * What the engine's state needs from an embedded key-value store (docs/engine-state.md §1): a
 * synchronous point read and prefix scan (unit recomputation is synchronous code; an await per
 * cache miss would dominate it), and an atomic batch of writes, so that a commit's state and its
 * checkpoint land together or not at all.
 */
export interface StateBackend {
  /** The stored bytes, copied (the caller may keep them). */
  get(key: string): Buffer | undefined;
  /** Every entry whose key starts with `prefix`, in key order. */
  scan(prefix: string): Iterable<readonly [string, Buffer]>;
  /**
   * Applies the writes (null deletes the key) as one atomic transaction, off the caller's thread:
   * the promise settles when they are written. Reads see them only then.
   */
  commit(writes: Iterable<readonly [string, Buffer | null]>): Promise<void>;
  /**
   * The same transaction written on the caller's thread, done when it returns (optional): for a restore, which
   * publishes nothing meanwhile, so the writes need not be kept alive for another thread.
   */
  commitNow?(writes: Iterable<readonly [string, Buffer | null]>): void;
  /** Deletes everything (a checkpoint that does not match this build's layout or configuration). */
  clear(): void;
  close(): Promise<void>;
}

/**
 * LMDB (lmdb-js), chosen by `npm run bench:stores` (docs/engine-state.md §1): a memory-mapped
 * B+tree whose reads are synchronous lookups in mapped pages and which opens in milliseconds at any
 * size (no log to replay), which is what a restart in seconds needs. noSync: a process crash loses
 * nothing committed; a machine crash may lose the last commits, and then the checkpoint is older
 * and the engine re-reads its input from there (or rebuilds when the store is damaged).
 */
/** Keys removed per transaction when a store is wiped. */
const CLEAR_CHUNK = 10_000;

export function openLmdbBackend(directory: string): StateBackend {
  mkdirSync(directory, { recursive: true });
  // Binary keys (UTF-8 bytes), not lmdb's ordered-binary strings: that encoding reads a 0 byte as
  // the boundary of an array key, and identifiers may contain any character.
  const keyScratch = Buffer.allocUnsafe(8192);
  /** A key in the scratch buffer (lmdb copies a key as it queues a write, so the buffer may be reused at once). */
  const encodedKey = (key: string): Buffer =>
    key.length * 3 > keyScratch.length
      ? Buffer.from(key, "utf8")
      : keyScratch.subarray(0, keyScratch.write(key, 0, "utf8"));
  const db: RootDatabase<Buffer, Buffer> = openLmdb<Buffer, Buffer>({
    path: directory,
    encoding: "binary",
    keyEncoding: "binary",
    compression: false,
    noSync: true,
  });
  // A store used after it is closed crashes the process in native code (SIGSEGV), with no stack
  // and no log line; every entry point checks first, so a late caller gets an error naming it.
  let closed = false;
  const open = (operation: string): void => {
    if (closed)
      throw new InvariantError({ problem: `engine state store ${directory} used after it was closed (${operation})` });
  };
  return {
    get: (key) => {
      open("get");
      // Encoded into a reused buffer: a Buffer per lookup cost more than the lookup itself.
      return db.getBinary(encodedKey(key));
    },
    *scan(prefix) {
      open("scan");
      const start = Buffer.from(prefix, "utf8");
      // Every key with the prefix sorts below the prefix followed by 0xFF (no UTF-8 byte is 0xFF).
      const end = Buffer.concat([start, Buffer.from([0xff])]);
      for (const { key, value } of db.getRange({ start, end })) yield [key.toString("utf8"), value] as const;
    },
    commit: async (writes) => {
      open("commit");
      // One batch is one transaction, written by lmdb's writer thread: this thread only queues the writes.
      await db.batch(() => {
        for (const write of writes) {
          const value = write[1];
          if (value === null) void db.remove(encodedKey(write[0]));
          else void db.put(encodedKey(write[0]), value);
        }
      });
    },
    commitNow: (writes) => {
      open("commit");
      db.transactionSync(() => {
        for (const write of writes) {
          const value = write[1];
          if (value === null) db.removeSync(encodedKey(write[0]));
          else db.putSync(encodedKey(write[0]), value);
        }
      });
    },
    clear: () => {
      open("clear");
      // Key by key, in transactions of CLEAR_CHUNK keys, not clearSync (mdb_drop): after a
      // clearSync, later writes have failed inside LMDB's page allocator (kriszyp/lmdb-js#317, open),
      // and a wipe is rare (another layout or configuration, a store without a checkpoint).
      for (;;) {
        const keys = [...db.getKeys({ limit: CLEAR_CHUNK })];
        if (keys.length === 0) return;
        db.transactionSync(() => {
          for (const key of keys) db.removeSync(key);
        });
      }
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await db.close();
    },
  };
}
