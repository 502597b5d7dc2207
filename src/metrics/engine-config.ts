import { z } from "zod";

export const DAY_MILLIS = 86_400_000;

/**
 * What a deployment may choose. Windows are aligned to the Unix epoch, which is UTC midnight for
 * every size that divides a day; other sizes would straddle days, so they are refused.
 */
export const engineConfigSchema = z.strictObject({
  windowMillis: z
    .number()
    .int()
    .positive()
    .refine((size) => DAY_MILLIS % size === 0 || size % DAY_MILLIS === 0, {
      message: "window size must divide one day (e.g. 1h, 15m) or be whole days",
    }),
  coverageThresholdHundredths: z.number().int().min(0).max(99),
});

export type EngineConfig = z.output<typeof engineConfigSchema>;

/** The default window as a user writes it (flags, environment); parseWindowSize(DEFAULT_WINDOW) is DAY_MILLIS. */
export const DEFAULT_WINDOW = "1d";

export const DEFAULT_ENGINE_CONFIG: EngineConfig = { windowMillis: DAY_MILLIS, coverageThresholdHundredths: 10 };

const UNIT_MILLIS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: DAY_MILLIS };

/** Parses a window size such as `1d`, `6h`, `15m`, `30s`; undefined when it is not one. */
export function parseWindowSize(text: string): number | undefined {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (match === null) return undefined;
  const [, amount, unit] = match;
  const millis = Number(amount) * (UNIT_MILLIS[unit ?? ""] ?? Number.NaN);
  return Number.isSafeInteger(millis) && millis > 0 ? millis : undefined;
}
