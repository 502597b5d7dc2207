import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, writeFileSync } from "node:fs";

/**
 * Lines in a generated workload file. Counting a 5M-line file takes seconds, so the count is kept
 * in a `.lines` sidecar next to it; a sidecar older than the file is counted again. Every
 * benchmark that reports a workload's line count calls this, so none depends on another having
 * run first (on a fresh clone `bench:kafka` used to read a sidecar only `bench` wrote).
 */
export function workloadLineCount(path: string): number {
  const sidecar = `${path}.lines`;
  if (existsSync(sidecar) && statSync(sidecar).mtimeMs >= statSync(path).mtimeMs)
    return Number(readFileSync(sidecar, "utf8"));
  // Read in chunks: a 20M-line workload is 8 GB, past what one Buffer (readFileSync) can hold.
  const chunk = Buffer.allocUnsafe(16 * 1024 * 1024);
  const descriptor = openSync(path, "r");
  let lines = 0;
  try {
    for (let read = readSync(descriptor, chunk); read > 0; read = readSync(descriptor, chunk)) {
      const filled = chunk.subarray(0, read);
      for (let at = filled.indexOf(10); at !== -1; at = filled.indexOf(10, at + 1)) lines += 1;
    }
  } finally {
    closeSync(descriptor);
  }
  writeFileSync(sidecar, String(lines));
  return lines;
}

export interface WorkloadLine {
  readonly text: string;
  /** Byte offset just past the line's newline. */
  readonly end: number;
}

/** Lines of a file from byte `from`, with their end offsets, read in 4 MiB chunks (readline is slower and hides offsets). */
export function* linesFrom(path: string, from: number): Generator<WorkloadLine> {
  const fd = openSync(path, "r");
  let buffer = Buffer.allocUnsafe(4 << 20);
  let filled = 0;
  /** File offset of buffer[0]. */
  let base = from;
  try {
    for (;;) {
      if (filled === buffer.length) {
        // A line longer than the buffer: grow it rather than split the line.
        const larger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(larger, 0, 0, filled);
        buffer = larger;
      }
      const read = readSync(fd, buffer, filled, buffer.length - filled, base + filled);
      if (read === 0) {
        if (filled > 0) yield { text: buffer.toString("utf8", 0, filled), end: base + filled };
        return;
      }
      const view = buffer.subarray(0, filled + read);
      let start = 0;
      for (let newline = view.indexOf(10, start); newline !== -1; newline = view.indexOf(10, start)) {
        yield { text: view.toString("utf8", start, newline), end: base + newline + 1 };
        start = newline + 1;
      }
      view.copy(buffer, 0, start);
      filled = view.length - start;
      base += start;
    }
  } finally {
    closeSync(fd);
  }
}
