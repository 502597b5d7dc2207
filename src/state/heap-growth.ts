import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the heap grow past what the last full collection left live, for an engine whose
 * state is on disk: a factor of 2 (`--heap-growing-percent=100`).
 *
 * V8 lets the old generation grow up to 4× the live heap, and every commit encodes and discards
 * its writes, so the heap settled far above the live cache; a factor of 2 collects sooner for a
 * few percent of throughput (bench/RESULTS.md, "Engine memory: the cache's accounting and the
 * heap's growth").
 *
 * A replay with `--state memory` holds its whole state in the heap and keeps V8's own heuristics:
 * only a process that runs the engine over its on-disk state (a Kafka engine, a replay on disk)
 * calls this.
 */
export const ENGINE_HEAP_GROWING_PERCENT = 100;

const FLAG = /^--heap[-_]growing[-_]percent\b/;

/**
 * Sets the engine's heap growth unless the operator chose one (`node --heap-growing-percent=N`, or
 * in NODE_OPTIONS); returns the percent in force, or undefined when the operator's is kept.
 */
export function boundEngineHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? "",
): number | undefined {
  if ([...execArgv, ...nodeOptions.split(/\s+/)].some((argument) => FLAG.test(argument))) return undefined;
  // A GC heuristic read at every full collection, so setting it after start takes effect.
  setFlagsFromString(`--heap-growing-percent=${String(ENGINE_HEAP_GROWING_PERCENT)}`);
  return ENGINE_HEAP_GROWING_PERCENT;
}
