import { shippedCatalog, type CatalogSummary } from "../../src/catalog/metric-definitions.ts";
import type { MetricFact } from "../../src/contract/facts.ts";
import { DEFAULT_ENGINE_CONFIG, type EngineConfig } from "../../src/metrics/engine-config.ts";
import type { Conflict } from "../../src/metrics/fact-ledger.ts";
import { MetricEngine } from "../../src/metrics/metric-engine.ts";

export interface Evaluation {
  /** One canonical JSON line per result key, sorted by key: the byte-comparable output. */
  readonly lines: readonly string[];
  readonly conflicts: readonly Conflict[];
}

/** Runs a whole fact set through a fresh engine and returns the final results (the tests' expected answer; nothing in src/ needs it). */
export function evaluateFacts(
  facts: Iterable<MetricFact>,
  config: EngineConfig = DEFAULT_ENGINE_CONFIG,
  catalog: CatalogSummary = shippedCatalog(),
): Evaluation {
  const engine = new MetricEngine(config, catalog);
  for (const fact of facts) engine.ingest(fact);
  return { lines: engine.results().map((entry) => entry.json), conflicts: engine.conflicts() };
}
