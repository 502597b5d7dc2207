import type { CoverageResult, CoverageState } from "../contract/result-record.ts";

/**
 * Seed §6.4. The state follows from the two counts alone; the alert compares integers
 * (100 × numerator < T × denominator), so no rounded ratio ever decides it and equality never alerts.
 * Coverage never gates anything: it is computed and published beside the value, not before it.
 */
export function coverageState(numerator: number, denominator: number): CoverageState {
  if (denominator === 0) return "NO_POPULATION";
  if (numerator === 0) return "NO_COVERAGE";
  return numerator < denominator ? "PARTIAL" : "FULL";
}

export function coverageAlert(numerator: number, denominator: number, thresholdHundredths: number): boolean {
  if (thresholdHundredths === 0 || denominator === 0) return false;
  return 100 * numerator < thresholdHundredths * denominator;
}

export function coverageResult(numerator: number, denominator: number, thresholdHundredths: number): CoverageResult {
  return {
    numerator,
    denominator,
    raw_ratio: denominator === 0 ? null : numerator / denominator,
    state: coverageState(numerator, denominator),
    alert: coverageAlert(numerator, denominator, thresholdHundredths),
    threshold_hundredths: thresholdHundredths,
  };
}
