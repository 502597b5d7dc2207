import * as Effect from "effect/Effect";
import type { Kafka } from "kafkajs";
import { shippedCatalog } from "../catalog/metric-definitions.ts";
import type { EngineConfig } from "../metrics/engine-config.ts";
import type { EngineLineage } from "../metrics/metric-engine.ts";
import { rebuildFromEngineFacts } from "../stream/audit/audit-rebuild.ts";
import { EngineFactKeys } from "../stream/audit/engine-fact-keys.ts";
import { withReplayState, type ReplayStateKind } from "../stream/transports/embedded/replay-state.ts";
import { answer, type ExplainAnswer, type ExplainQuery } from "../lineage/query.ts";
import { InvariantError } from "../errors.ts";

export interface AuditExplainOptions {
  readonly engine: EngineConfig;
  readonly state: ReplayStateKind;
  readonly stateDir: string | undefined;
  readonly cacheMb: number;
}

/**
 * Rebuilds the engine from the compacted engine-facts topic as the audit does (`replay
 * --from-topic`: the whole history, each record validated again) and answers the query from the
 * rebuilt state as it closes. Its facts' origins are the facts-topic positions the engine-facts
 * records carry, as on a member.
 */
export async function explainAudit(
  kafka: Kafka,
  engineFactsTopic: string,
  options: AuditExplainOptions,
  query: ExplainQuery,
): Promise<ExplainAnswer> {
  let answered: { value: ExplainAnswer } | { error: unknown } | undefined;
  const engineObserver = {
    opened: () => undefined,
    closing: (_partition: number, lineage: EngineLineage) => {
      try {
        answered = { value: answer(lineage, query) };
      } catch (error) {
        answered = { error };
      }
    },
  };
  await withReplayState(options.state, options.stateDir, options.cacheMb, async (state) => {
    const keys = EngineFactKeys.open(state.directory, Math.floor(state.cacheBytes / 4));
    try {
      await Effect.runPromise(
        rebuildFromEngineFacts(kafka, engineFactsTopic, options.engine, shippedCatalog(), {
          keys,
          engineState: state.engineState,
          engineObserver,
          sinkLog: state.sinkLog,
        }),
      );
    } finally {
      await keys.close();
    }
  });
  if (answered === undefined) throw new InvariantError({ problem: "the rebuild closed no engine" });
  if ("error" in answered) throw answered.error;
  return answered.value;
}
