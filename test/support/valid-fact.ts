import type { Fact } from "../../src/contract/facts.ts";
import { parseFactJson } from "../../src/contract/parse-fact.ts";

/** A fact in the contract's JSON form, validated, so a test cannot send an accidental reject. */
export function validFact(json: Record<string, unknown>): Fact {
  const parsed = parseFactJson(JSON.stringify(json));
  if (!parsed.ok) throw new Error(`test fact is invalid: ${parsed.rejection.detail}`);
  return parsed.fact;
}
