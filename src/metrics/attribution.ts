import type { ModelCall } from "../contract/facts.ts";
import type { Cohort } from "../contract/result-record.ts";
import { cohortOf } from "./scope.ts";

/**
 * The attribution tuple (provider, C57 model, C30 role, C06 runtime) is complete only when all four
 * are present and non-empty (contract §2). Nothing else may complete it: no display name, alias or
 * inference. Undefined means the call enters no tuple slice.
 */
export function attributionCohort(call: ModelCall): Cohort | undefined {
  const { provider, model, role, runtime } = call;
  if (!provider || !model || !role || !runtime) return undefined;
  // Nested maps keyed by the coordinates themselves: no key string is built per call, and (a
  // lookup per call and per read of a call) no closure either.
  let byModel = tuples.get(provider);
  if (byModel === undefined) tuples.set(provider, (byModel = new Map()));
  let byRole = byModel.get(model);
  if (byRole === undefined) byModel.set(model, (byRole = new Map()));
  let byRuntime = byRole.get(role);
  if (byRuntime === undefined) byRole.set(role, (byRuntime = new Map()));
  let tuple = byRuntime.get(runtime);
  if (tuple === undefined) byRuntime.set(runtime, (tuple = cohortOf({ provider, model, role, runtime })));
  return tuple;
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
