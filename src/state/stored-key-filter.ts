import type { StateBackend } from "./state-backend.ts";

/** Bits of the filter's first segment; each later one has twice the bits of the one before. */
const FIRST_SEGMENT_BITS = 1 << 20;
/** Bits per key a segment is filled to before the next one is added (about 1% false positives). */
const BITS_PER_KEY = 10;
const PROBES = 7;
/**
 * A key's probes all fall in one block of 512 bits (16 words, one cache line): a filter of
 * megabytes probed at random would miss the CPU cache at every probe.
 */
const BLOCK_WORDS = 16;
/** The filter's memory bound: past it the filter stops answering (every read goes to the store) until the store is cleared. */
export const MAX_FILTER_BYTES = 16 * 1024 * 1024;

interface Segment {
  readonly words: Uint32Array;
  /** Blocks minus one (a power of two minus one). */
  readonly blockMask: number;
  readonly capacity: number;
  count: number;
}

/**
 * The keys a store may hold, as a scalable, blocked Bloom filter: "no" is certain, "maybe" is not.
 * A rebuild looks up mostly keys that are in no store yet (a new fact's identities, a new entity),
 * and the filter answers those without a B-tree search. The filter knows only the keys written
 * since the store was empty: a store opened with data, or one whose keys outgrew the filter's
 * memory bound, gets "maybe" for every key until it is cleared.
 */
export class StoredKeyFilter {
  private segments: Segment[] = [];
  private knows: boolean;

  constructor(storeIsEmpty: boolean) {
    this.knows = storeIsEmpty;
  }

  /** False only when the key was certainly never written since the store was last empty. */
  mayHold(key: string): boolean {
    if (!this.knows) return true;
    hash(key);
    for (const segment of this.segments) if (probe(segment, false)) return true;
    return false;
  }

  add(key: string): void {
    if (!this.knows) return;
    let segment = this.segments.at(-1);
    if (segment === undefined || segment.count >= segment.capacity) {
      const bits = segment === undefined ? FIRST_SEGMENT_BITS : segment.words.length * 32 * 2;
      if (this.bytes() + bits / 8 > MAX_FILTER_BYTES) {
        this.forget();
        return;
      }
      const words = new Uint32Array(bits / 32);
      segment = { words, blockMask: words.length / BLOCK_WORDS - 1, capacity: bits / BITS_PER_KEY, count: 0 };
      this.segments.push(segment);
    }
    hash(key);
    probe(segment, true);
    segment.count += 1;
  }

  /** The store is empty again: the filter knows every key from here. */
  reset(): void {
    this.segments = [];
    this.knows = true;
  }

  /** Stops answering: every key may be held. */
  forget(): void {
    this.segments = [];
    this.knows = false;
  }

  /** Bytes the filter's bits take. */
  bytes(): number {
    return this.segments.reduce((sum, segment) => sum + segment.words.byteLength, 0);
  }
}

/** The last key's two hashes (hash): the block, and the bits within it. */
let blockHash = 0;
let bitHash = 0;

/** Two independent 32-bit hashes of a key's UTF-16 code units (FNV-1a, and a multiplicative one). */
function hash(key: string): void {
  let first = 0x811c9dc5;
  let second = 0x9747b28c;
  for (let index = 0; index < key.length; index++) {
    const unit = key.charCodeAt(index);
    first = Math.imul(first ^ unit, 0x01000193);
    second = Math.imul(second ^ unit, 0x5bd1e995);
    second ^= second >>> 15;
  }
  blockHash = first ^ (first >>> 16);
  bitHash = second;
}

/** Sets (or, with set false, tests) the last hashed key's bits in its block of the segment. */
function probe(segment: Segment, set: boolean): boolean {
  const base = (blockHash & segment.blockMask) * BLOCK_WORDS;
  const step = (bitHash >>> 9) | 1;
  let bits = bitHash;
  for (let index = 0; index < PROBES; index++) {
    const bit = bits & 511;
    const word = base + (bit >>> 5);
    const mask = 1 << (bit & 31);
    if (set) segment.words[word] = (segment.words[word] as number) | mask;
    else if (((segment.words[word] as number) & mask) === 0) return false;
    bits = (bits + step) | 0;
  }
  return true;
}

/**
 * A backend whose point reads of keys never written since it was empty are answered by a
 * StoredKeyFilter without reading the store. Writes add their keys; clearing the store resets the
 * filter; scans go to the store.
 */
export function withStoredKeyFilter(backend: StateBackend): StateBackend {
  const filter = new StoredKeyFilter(isEmpty(backend));
  const noted = (writes: Iterable<readonly [string, Buffer | null]>): Iterable<readonly [string, Buffer | null]> => {
    const listed = Array.isArray(writes) ? (writes as readonly (readonly [string, Buffer | null])[]) : [...writes];
    for (const write of listed) if (write[1] !== null) filter.add(write[0]);
    return listed;
  };
  return {
    get: (key) => (filter.mayHold(key) ? backend.get(key) : undefined),
    scan: (prefix) => backend.scan(prefix),
    // Keys are added before the write lands: a read meanwhile may go to the store, never miss a key.
    commit: (writes) => backend.commit(noted(writes)),
    ...(backend.commitNow === undefined ? {} : { commitNow: (writes) => backend.commitNow?.(noted(writes)) }),
    clear: () => {
      backend.clear();
      filter.reset();
    },
    close: () => backend.close(),
  };
}

function isEmpty(backend: StateBackend): boolean {
  const entries = backend.scan("")[Symbol.iterator]();
  const empty = entries.next().done === true;
  entries.return?.();
  return empty;
}
