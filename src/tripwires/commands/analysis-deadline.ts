/*
 * The live hook's time bound on one analysis, apart from the parsing it bounds: the parser, the
 * analysis between commands and the hook's worker all consult the same deadline.
 */

/** Thrown once an analysis runs past the deadline of withinDeadline; a result it cut short is never cached. */
export class AnalysisDeadlineError extends Error {
  override readonly name = "AnalysisDeadlineError";
}

let deadlineAt: number | undefined;

/**
 * Runs an analysis that gives up (AnalysisDeadlineError) once `performance.now()` passes `at`: the
 * live hook's time bound, checked inside the WASM parse and between commands, so a worker stops on
 * its own. The run monitor sets none, so its results never depend on time.
 */
export function withinDeadline<T>(at: number, analyse: () => T): T {
  deadlineAt = at;
  try {
    return analyse();
  } finally {
    deadlineAt = undefined;
  }
}

export function checkDeadline(): void {
  if (deadlineAt !== undefined && performance.now() > deadlineAt)
    throw new AnalysisDeadlineError("the analysis ran past its deadline");
}

/** The `performance.now()` at which the running analysis gives up, or undefined (none set). */
export function currentDeadline(): number | undefined {
  return deadlineAt;
}
