import type { TelemetrySample } from "./telemetry.ts";

/** What the engine thread tells the instance that started it. */
export type EngineThreadReport =
  | { readonly type: "started" }
  | { readonly type: "telemetry"; readonly samples: readonly TelemetrySample[] }
  | { readonly type: "failed"; readonly reason: string };

/** What the instance tells its engine thread. */
export type EngineThreadCommand = { readonly type: "stop" };

/** How often the engine thread sends its telemetry to the instance's /metrics. */
export const TELEMETRY_INTERVAL_MS = 250;
