import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { CatalogSummary } from "../catalog/metric-definitions.ts";
import type { EngineConfig } from "../metrics/engine-config.ts";
import { openLmdbBackend } from "./state-backend.ts";
import { withStoredKeyFilter } from "./stored-key-filter.ts";
import { StateStore } from "./state-store.ts";

/**
 * The layout of the engine's tables on disk (prefixes, keys, codecs). A store of another layout is
 * not read: it is wiped and rebuilt from the engine-facts topic. Raise it with any change of
 * src/state/codecs/, of engine-tables.ts or of a table's key.
 */
export const STATE_LAYOUT_VERSION = 5;

/** The checkpoint's key: no table's prefix starts with a 0 byte. */
const CHECKPOINT_KEY = "\u0000checkpoint";

/** What a checkpoint says: the state reflects every source record before `offset`. */
export interface Checkpoint {
  readonly offset: string;
  /** The layout, engine configuration and catalog the state was computed under (stateIdentity). */
  readonly identity: string;
  /** Source records before this offset are loaded, not evaluated (their units came from the contributions changelog). */
  readonly loadUntil?: string;
  /**
   * A partitioned engine stage's output topics' end offsets when the checkpoint was taken (role →
   * partition → offset): what it wrote after the checkpoint lies beyond them.
   */
  readonly sinkEnds?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/**
 * What the stored state depends on besides the facts: the layout, the window size and coverage
 * threshold, and the catalog (rendered results and minimum samples). A state computed under
 * another identity is not resumed.
 */
export function stateIdentity(config: EngineConfig, catalog: CatalogSummary): string {
  const described = JSON.stringify({
    layout: STATE_LAYOUT_VERSION,
    config,
    catalog: { ...catalog, metrics: [...catalog.metrics] },
  });
  return createHash("sha256").update(described).digest("hex").slice(0, 32);
}

export function checkpointWrite(checkpoint: Checkpoint): readonly [string, Buffer] {
  return [CHECKPOINT_KEY, Buffer.from(JSON.stringify(checkpoint), "utf8")];
}

export interface LocalState {
  readonly state: StateStore;
  /** The checkpoint found on opening, if it was written under this identity. */
  readonly checkpoint: Checkpoint | undefined;
  /** Releases the directory's lock (after the backend is closed). */
  readonly release: () => void;
}

/** Another live process holds the state directory. */
export class StateDirectoryLockedError extends Error {
  readonly directory: string;
  readonly holder: number;

  constructor(directory: string, holder: number) {
    super(
      `state directory ${directory} is in use by process ${String(holder)}: give each instance on one machine its own --state-dir (or --instance-id)`,
    );
    this.directory = directory;
    this.holder = holder;
  }
}

/**
 * Opens one partition's state: locks its directory (one process per store: LMDB would let two
 * processes write the same state), opens LMDB, and reads the checkpoint. A checkpoint of another
 * identity (layout, configuration, catalog) means the store is wiped: it cannot be resumed.
 */
export function openLocalState(
  options: { readonly directory: (partition: number) => string; readonly cacheBytes: number },
  partition: number,
  identity: string,
): LocalState {
  const directory = options.directory(partition);
  mkdirSync(directory, { recursive: true });
  const release = lockDirectory(directory);
  try {
    const backend = withStoredKeyFilter(openLmdbBackend(join(directory, "lmdb")));
    const state = new StateStore(backend, options.cacheBytes);
    const stored = backend.get(CHECKPOINT_KEY);
    let checkpoint = stored === undefined ? undefined : (JSON.parse(stored.toString("utf8")) as Checkpoint);
    if (checkpoint !== undefined && checkpoint.identity !== identity) {
      state.clear();
      checkpoint = undefined;
    }
    return { state, checkpoint, release };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * A store on disk that is not the engine's state (the published results, a table kept in step with
 * a compacted topic, too large to hold in memory over months): its directory is locked like a
 * partition's state, and its contents are kept across openings; the store itself decides whether
 * they can be trusted (OnDiskKeyValueStore reads its marker). `close` closes it and releases the lock.
 */
export function openStoreDirectory(
  directory: string,
  cacheBytes: number,
): { readonly state: StateStore; close(): Promise<void> } {
  mkdirSync(directory, { recursive: true });
  const release = lockDirectory(directory);
  try {
    const backend = withStoredKeyFilter(openLmdbBackend(join(directory, "lmdb")));
    return {
      state: new StateStore(backend, cacheBytes),
      close: async () => {
        try {
          await backend.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

/** A lock file naming the holder's pid; a lock whose holder is gone (a killed process) is taken over. */
function lockDirectory(directory: string): () => void {
  const lock = join(directory, "LOCK.pid");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const descriptor = openSync(lock, "wx");
      writeSync(descriptor, String(process.pid));
      closeSync(descriptor);
      return () => rmSync(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(lock, "utf8").trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder))
        throw new StateDirectoryLockedError(directory, holder);
      rmSync(lock, { force: true });
    }
  }
  throw new StateDirectoryLockedError(directory, -1);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
