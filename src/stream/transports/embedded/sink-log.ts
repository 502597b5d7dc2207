import { byUtf8 } from "../../../contract/code-point-order.ts";
import { openLmdbBackend, type StateBackend } from "../../../state/state-backend.ts";

/** The tables a replay's sinks keep until the output files are written. */
export type SinkTable = "results" | "alerts" | "runStates" | "deadLetters" | "conflicts" | "topicResults";

/** One byte per table, so every table is a contiguous key range on disk. */
const PREFIX: Readonly<Record<SinkTable, string>> = {
  results: "r",
  alerts: "a",
  runStates: "s",
  deadLetters: "d",
  conflicts: "c",
  // The audit's copy of the results topic, compared with the rebuild's results.
  topicResults: "t",
};

/** Buffered writes that make a spill: bounds the heap the buffer holds and the size of one LMDB transaction. */
const SPILL_ENTRIES = 20_000;
const SPILL_BYTES = 8 * 1024 * 1024;

/**
 * Keyed lines a replay's sinks collect (the latest value per key; null deletes), read back in
 * UTF-8 key order. In memory for small files; on disk for a replay whose state is on disk, where
 * the results, alerts, run summaries and dead letters of a large input do not fit the heap.
 */
export interface SinkLog {
  set(table: SinkTable, key: string, line: string | null): void;
  /** Writes the buffered entries to disk once enough of them have gathered. */
  spill(): Promise<void>;
  /** Writes every buffered entry; `sorted` reads only what is settled. */
  settle(): Promise<void>;
  /** The (key, line) pairs of a table in UTF-8 order of their keys. */
  sorted(table: SinkTable): Iterable<readonly [string, string]>;
  close(): Promise<void>;
}

export function memorySinkLog(): SinkLog {
  const tables = new Map<SinkTable, Map<string, string>>();
  const tableOf = (table: SinkTable): Map<string, string> => {
    let lines = tables.get(table);
    if (lines === undefined) tables.set(table, (lines = new Map()));
    return lines;
  };
  return {
    set: (table, key, line) => {
      if (line === null) tableOf(table).delete(key);
      else tableOf(table).set(key, line);
    },
    spill: () => Promise.resolve(),
    settle: () => Promise.resolve(),
    *sorted(table) {
      const lines = tableOf(table);
      for (const key of [...lines.keys()].sort(byUtf8)) yield [key, lines.get(key) as string] as const;
    },
    close: () => Promise.resolve(),
  };
}

/** A sink log in an LMDB store at `directory` (inside the replay's temporary state directory). */
export function diskSinkLog(directory: string): SinkLog {
  const backend: StateBackend = openLmdbBackend(directory);
  let buffered = new Map<string, string | null>();
  let bufferedBytes = 0;
  const write = async (): Promise<void> => {
    if (buffered.size === 0) return;
    const writes = [...buffered].map(([key, line]) => [key, line === null ? null : Buffer.from(line, "utf8")] as const);
    buffered = new Map();
    bufferedBytes = 0;
    await backend.commit(writes);
  };
  return {
    set: (table, key, line) => {
      buffered.set(PREFIX[table] + key, line);
      bufferedBytes += key.length + (line?.length ?? 0);
    },
    spill: () => (buffered.size >= SPILL_ENTRIES || bufferedBytes >= SPILL_BYTES ? write() : Promise.resolve()),
    settle: write,
    *sorted(table) {
      const prefix = PREFIX[table];
      for (const [key, bytes] of backend.scan(prefix))
        yield [key.slice(prefix.length), bytes.toString("utf8")] as const;
    },
    close: () => backend.close(),
  };
}

/**
 * A key whose UTF-8 order is the order of the tuple of its parts: strings escaped so that a 0
 * character sorts as itself and a part ends below any character, numbers as the hexadecimal of
 * their order-preserving 64-bit form.
 */
export function tupleKey(parts: readonly (string | number)[]): string {
  return parts.map((part) => (typeof part === "number" ? sortableNumber(part) : escapedPart(part))).join("");
}

function escapedPart(part: string): string {
  return `${part.replaceAll("\u0000", "\u0000\u0001")}\u0000\u0000`;
}

const numberView = new DataView(new ArrayBuffer(8));

/** IEEE 754 bits with the sign flipped (and every bit of a negative number), as 16 hex digits: sorts as the numbers do. */
function sortableNumber(value: number): string {
  numberView.setFloat64(0, value === 0 ? 0 : value);
  let high = numberView.getUint32(0);
  let low = numberView.getUint32(4);
  if (high >>> 31 === 1) {
    high = ~high >>> 0;
    low = ~low >>> 0;
  } else high = (high | 0x80000000) >>> 0;
  return high.toString(16).padStart(8, "0") + low.toString(16).padStart(8, "0");
}
