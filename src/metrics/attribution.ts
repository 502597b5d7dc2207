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
  return cohortOf({ provider, model, role, runtime });
}

export const INCOMPLETE_ATTRIBUTION = "INCOMPLETE_ATTRIBUTION";
