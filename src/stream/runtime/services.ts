import * as Context from "effect/Context";
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import type { CatalogSummary } from "../../catalog/metric-definitions.ts";
import type { TopicSerde as TopicSerdeShape } from "../../kafka/serde/topic-serde.ts";
import type { EngineConfig } from "../../metrics/engine-config.ts";
import type { TripwireConfigInput } from "../../tripwires/index.ts";
import type { Processor } from "../processor.ts";
import { engineProcessor, type EngineStateOptions } from "../processors/engine.ts";
import type { EngineObserver } from "../../lineage/engine-directory.ts";
import { stageProcessor } from "../processors/engine-stages.ts";
import { ingestTo } from "../processors/ingest.ts";
import { ENGINE_STAGES, type RoleName } from "../topology.ts";
import type { TransportError } from "../../errors.ts";
import type { Telemetry as TelemetryShape } from "./telemetry.ts";

/**
 * The services a topology runs on. Each transport is a Layer providing all of them: Kafka
 * (kafkajs, the registry, /metrics; runtime/processor-runtime.ts) and embedded (an in-process log over
 * files; transports/embedded/). The program that runs the topology (`runTopology`) is the same.
 */

/** What the topology is configured with, whatever the transport. */
export interface TopologyConfig {
  readonly roles: readonly RoleName[];
  readonly engine: EngineConfig;
  /**
   * The engine role's topology: the single engine on one partition, or the partitioned engine's
   * four stages on `enginePartitions` partitions (docs/engine-state.md §4). Absent: single.
   */
  readonly engineTopology?: { readonly kind: "single" } | { readonly kind: "stages"; readonly partitions: number };
  /** The engine's state on disk (Kafka members); absent, it is in memory (file replay). */
  readonly engineState?: EngineStateOptions;
  /** Told of the single engine's partitions as they open and close (explanations query them). */
  readonly engineObserver?: EngineObserver;
  readonly tripwires: TripwireConfigInput;
}

export class Config extends Context.Tag("agentops/Config")<Config, TopologyConfig>() {}
export class Catalog extends Context.Tag("agentops/Catalog")<Catalog, CatalogSummary>() {}
export class Telemetry extends Context.Tag("agentops/Telemetry")<Telemetry, TelemetryShape>() {}
/** The encodings of the public topics (Avro through the registry on Kafka, JSON lines on files). */
export class TopicSerde extends Context.Tag("agentops/TopicSerde")<TopicSerde, TopicSerdeShape>() {}

export interface TransportShape {
  /**
   * Attaches a member for the processor for the life of the scope: it reads the processor's
   * source (topology.ts), restores its stores, runs its tasks, writes its sinks and changelogs,
   * and commits. The source's records are decoded for the processor by the transport.
   */
  readonly member: (processor: Processor<never>) => Effect.Effect<void, TransportError, Scope.Scope>;
  /** Runs the attached members: to the end of the input (embedded), or until the scope closes (Kafka). */
  readonly run: Effect.Effect<void, TransportError>;
}

export class Transport extends Context.Tag("agentops/Transport")<Transport, TransportShape>() {}

/**
 * The processors of a role, configured: one, but the partitioned engine's role runs its four stages.
 * The run monitor's module is loaded only for its role, since its WebAssembly shell parser costs memory.
 */
export async function processorsFor(
  role: RoleName,
  config: TopologyConfig,
  catalog: CatalogSummary,
): Promise<Processor<never>[]> {
  const topology = config.engineTopology ?? { kind: "single" };
  switch (role) {
    case "ingest":
      return [ingestTo(topology.kind === "stages" ? "stageFacts" : "engineFacts") as Processor<never>];
    case "engine":
      if (topology.kind === "stages")
        return ENGINE_STAGES.map(
          (name) =>
            stageProcessor(name, config.engine, catalog, topology.partitions, config.engineState) as Processor<never>,
        );
      return [
        engineProcessor(config.engine, catalog, config.engineState, {}, config.engineObserver) as Processor<never>,
      ];
    case "run-monitor": {
      const { runMonitorProcessor } = await import("../processors/run-monitor.ts");
      return [runMonitorProcessor(config.tripwires) as Processor<never>];
    }
  }
}

/** The topology: one member per configured role, on whatever transport is provided. */
export const runTopology: Effect.Effect<void, TransportError, Config | Catalog | Transport | Scope.Scope> = Effect.gen(
  function* () {
    const config = yield* Config;
    const catalog = yield* Catalog;
    const transport = yield* Transport;
    for (const role of config.roles) {
      for (const processor of yield* Effect.promise(() => processorsFor(role, config, catalog)))
        yield* transport.member(processor);
    }
    yield* transport.run;
  },
);
