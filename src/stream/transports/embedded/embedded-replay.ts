import * as Effect from "effect/Effect";
import type { CatalogSummary } from "../../../catalog/metric-definitions.ts";
import type { TransportError } from "../../../errors.ts";
import { runTopology, Telemetry, type TopologyConfig } from "../../runtime/services.ts";
import { embeddedTransport, type EmbeddedSinks } from "./embedded-transport.ts";
import { fileSource, type EmbeddedOptions, type TopologySource } from "./topology-sources.ts";
import type { SinkLog } from "./sink-log.ts";

/** The summary counts of an embedded run, read from its telemetry (the names /metrics uses). */
export interface ReplayCounts {
  readonly records: number;
  readonly accepted: number;
  /** Redeliveries and re-reports of a domain identity under another fact_id: no-ops. */
  readonly redeliveries: number;
  readonly invalidMeasures: number;
  readonly quarantined: number;
  readonly agentEvents: number;
  readonly rejected: ReadonlyMap<string, number>;
}

export interface ReplayOutcome {
  readonly sinks: EmbeddedSinks;
  readonly counts: ReplayCounts;
}

/** Runs the whole topology over a facts file on the embedded transport. */
export function replayFile(
  options: EmbeddedOptions,
  config: Omit<TopologyConfig, "roles">,
  catalog: CatalogSummary,
  sinkLog?: SinkLog,
): Effect.Effect<ReplayOutcome, TransportError> {
  return replaySource(
    { into: "ingest", read: fileSource(options) },
    options.input,
    { ...config, roles: ["ingest", "engine", "run-monitor"] },
    catalog,
    sinkLog,
  );
}

/** Runs the configured roles of the topology over a facts or engine-facts source on the embedded transport. */
export function replaySource(
  source: TopologySource,
  input: string,
  config: TopologyConfig,
  catalog: CatalogSummary,
  sinkLog?: SinkLog,
): Effect.Effect<ReplayOutcome, TransportError> {
  const embedded = embeddedTransport(source, input, config, catalog, sinkLog);
  return Effect.gen(function* () {
    yield* Effect.scoped(runTopology);
    const telemetry = yield* Telemetry;
    const outcomes = telemetry.byLabel("agentops_engine_facts_total", "outcome");
    const processed = telemetry.byLabel("agentops_records_processed_total", "processor");
    const counts: ReplayCounts = {
      records: processed.get("ingest") ?? 0,
      accepted: outcomes.get("accepted") ?? 0,
      redeliveries: (outcomes.get("redelivery") ?? 0) + (outcomes.get("re-report") ?? 0),
      invalidMeasures: telemetry.total("agentops_invalid_measures_total"),
      quarantined: outcomes.get("quarantined") ?? 0,
      agentEvents: processed.get("run-monitor") ?? 0,
      rejected: telemetry.byLabel("agentops_records_rejected_total", "reason"),
    };
    return { sinks: embedded.sinks, counts };
  }).pipe(Effect.provide(embedded.layer));
}
