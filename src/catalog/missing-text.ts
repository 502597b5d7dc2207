/**
 * The never-zero rule for value_semantics.missing (seed §3, §7): the text states an N/A condition
 * and never says that unavailability is a zero. Negated phrasing ("is never zero", "not a zero",
 * "never 0") is the rule itself and is allowed.
 */

export const MISSING_PREFIX = "N/A when";

export function startsWithNaWhen(text: string): boolean {
  return text.startsWith(`${MISSING_PREFIX} `);
}

/** Phrases that deny a zero: "never zero", "is never a zero", "not 0", "never substitute zero". */
const NEGATED_ZERO =
  /\b(?:never|not|no)\s+(?:(?:a|as|be|been|reported|treated|substituted?|shown|read|given|an?)\s+){0,3}(?:zero|0(?![\d.]*\d))\b/gi;

/** A zero stated as the value: the word zero, a bare 0 (not part of 0.2 or C05), or "= 0". */
const STATED_ZERO = /\bzero(?:es|s)?\b|(?<![\w.])0(?!\.?\d)(?!\w)/i;

/** True when the missing text states a zero outside an explicit negation. */
export function statesZero(text: string): boolean {
  return STATED_ZERO.test(text.replace(NEGATED_ZERO, " "));
}
