import { PROVENANCE_BASES } from "../contract/fact-schema.ts";
import type { MetricFact } from "../contract/facts.ts";

const READABLE_BASES: ReadonlySet<string> = new Set(PROVENANCE_BASES);
const DIRECT_BASES: ReadonlySet<string> = new Set(["DIRECT_HOST", "DIRECT_PROVIDER"]);

/** What a fact's provenance says about it as evidence (contract §1, §3 "Direct evidence"). */
export type EvidenceBasis = "DIRECT" | "NONDIRECT" | "UNREADABLE";

/**
 * DIRECT_HOST / DIRECT_PROVIDER are direct evidence; DERIVED, ESTIMATED and MANUAL are readable
 * but nondirect; null provenance or an unknown basis is unreadable: its basis is unavailable,
 * never assumed to be either (seed §6.5, direct-evidence-basis-rate).
 */
export function evidenceBasis(fact: MetricFact): EvidenceBasis {
  const basis = fact.provenance?.basis;
  if (basis === undefined || !READABLE_BASES.has(basis)) return "UNREADABLE";
  return DIRECT_BASES.has(basis) ? "DIRECT" : "NONDIRECT";
}

/** Seed §5 common eligibility "direct accepted host/provider evidence": the exclusion reason. */
export const NONDIRECT_EVIDENCE = "NONDIRECT_EVIDENCE";
