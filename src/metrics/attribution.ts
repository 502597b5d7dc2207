import type { ModelCall } from "../contract/facts.ts";
import type { Cohort } from "./result-record.ts";
import { cohortOf } from "./scope.ts";

/**
 * The attribution tuple (provider, C57 model, C30 role, C06 runtime) is complete only when all four
 * are present and non-empty (contract §2). Nothing else may complete it: no display name, alias or
 * inference. Undefined means the call enters no tuple slice.
 */
export function attributionCohort(call: ModelCall): Cohort | undefined {
  const { provider, model, role, runtime } = call;
  if (!provider || !model || !role || !runtime) return undefined;
  const identity = `${provider}\u0000${model}\u0000${role}\u0000${runtime}`;
  let cohort = tuples.get(identity);
  if (cohort === undefined) {
    cohort = cohortOf({ provider, model, role, runtime });
    tuples.set(identity, cohort);
  }
  return cohort;
}

/** Tuple cohorts by their four coordinates: one lookup per call instead of a sort. */
const tuples = new Map<string, Cohort>();

const directed = new WeakMap<Cohort, { readonly input: Cohort; readonly output: Cohort }>();

/** The token-usage cohort: the tuple plus the direction (input or output), shared per tuple. */
export function directedCohort(tuple: Cohort, direction: "input" | "output"): Cohort {
  let pair = directed.get(tuple);
  if (pair === undefined) {
    pair = { input: cohortOf({ ...tuple, direction: "input" }), output: cohortOf({ ...tuple, direction: "output" }) };
    directed.set(tuple, pair);
  }
  return pair[direction];
}

export const INCOMPLETE_ATTRIBUTION = "INCOMPLETE_ATTRIBUTION";
