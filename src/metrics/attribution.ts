import type { ModelCall } from "../contract/facts.ts";
import { memoized } from "./memo-map.ts";
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
  // Nested maps keyed by the coordinates themselves: no key string is built per call.
  const byModel = memoized(tuples, provider, () => new Map<string, Map<string, Map<string, Cohort>>>());
  const byRole = memoized(byModel, model, () => new Map<string, Map<string, Cohort>>());
  const byRuntime = memoized(byRole, role, () => new Map<string, Cohort>());
  return memoized(byRuntime, runtime, () => cohortOf({ provider, model, role, runtime }));
}

/** Tuple cohorts by provider, model, role and runtime: four small lookups per call instead of a sort. */
const tuples = new Map<string, Map<string, Map<string, Map<string, Cohort>>>>();

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
