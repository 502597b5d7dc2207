import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";

/**
 * Lines in a generated workload file. Counting a 5M-line file takes seconds, so the count is kept
 * in a `.lines` sidecar next to it; a sidecar older than the file is counted again. Every
 * benchmark that reports a workload's line count calls this, so none depends on another having
 * run first (on a fresh clone `bench:kafka` used to read a sidecar only `bench` wrote).
 */
export function workloadLineCount(path: string): number {
  const sidecar = `${path}.lines`;
  if (existsSync(sidecar) && statSync(sidecar).mtimeMs >= statSync(path).mtimeMs) return Number(readFileSync(sidecar, "utf8"));
  const buffer = readFileSync(path);
  let lines = 0;
  for (let at = buffer.indexOf(10); at !== -1; at = buffer.indexOf(10, at + 1)) lines += 1;
  writeFileSync(sidecar, String(lines));
  return lines;
}
