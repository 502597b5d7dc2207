import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, writeFileSync } from "node:fs";

/**
 * Lines in a generated workload file. Counting a 5M-line file takes seconds, so the count is kept
 * in a `.lines` sidecar next to it; a sidecar older than the file is counted again. Every
 * benchmark that reports a workload's line count calls this, so none depends on another having
 * run first (on a fresh clone `bench:kafka` used to read a sidecar only `bench` wrote).
 */
export function workloadLineCount(path: string): number {
  const sidecar = `${path}.lines`;
  if (existsSync(sidecar) && statSync(sidecar).mtimeMs >= statSync(path).mtimeMs) return Number(readFileSync(sidecar, "utf8"));
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
