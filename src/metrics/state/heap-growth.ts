import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the heap grow past what the last full collection left live, for an engine whose
 * state is on disk: a factor of 2 (`--heap-growing-percent=100`).
 *
 * Why: V8 sizes its old generation from the live heap and the allocation rate, up to 4× live. The
 * engine's live heap is its record cache and the current commit (about 130 MiB at a 64 MiB
 * cache, the default when this was measured), but every commit encodes and discards its writes, so V8 let the heap reach about
 * 2.7× that before collecting: 320–370 MiB of heap, 560–620 MiB of anonymous RSS, flat with history
 * but above the 512 MiB an operator budgets (bench/RESULTS.md, "Engine state on disk"). A factor of
 * 2 collects sooner: about 440 MiB of anonymous RSS for about 6% of the engine's throughput,
 * measured; a factor of 1.5 saved little more and cost 13%.
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
export function boundEngineHeapGrowth(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ""): number | undefined {
  if ([...execArgv, ...nodeOptions.split(/\s+/)].some((argument) => FLAG.test(argument))) return undefined;
  // A GC heuristic read at every full collection, so setting it after start takes effect (measured:
  // the same heap figures as the command-line flag).
  setFlagsFromString(`--heap-growing-percent=${String(ENGINE_HEAP_GROWING_PERCENT)}`);
  return ENGINE_HEAP_GROWING_PERCENT;
}
