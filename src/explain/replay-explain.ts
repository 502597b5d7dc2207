import * as Effect from "effect/Effect";
import { shippedCatalog } from "../catalog/metric-definitions.ts";
import type { EngineConfig } from "../metrics/engine-config.ts";
import { replayFile } from "../stream/transports/embedded/embedded-replay.ts";
import { withReplayState, type ReplayStateKind } from "../stream/transports/embedded/replay-state.ts";
import type { DeadLetterInput } from "../lineage/explanation.ts";
import { withRefusedRecords } from "../lineage/dead-letters.ts";
import { answer, type ExplainAnswer, type ExplainQuery } from "../lineage/query.ts";
import { InvariantError } from "../errors.ts";

export interface ReplayExplainOptions {
  readonly input: string;
  readonly engine: EngineConfig;
  readonly state: ReplayStateKind;
  readonly stateDir: string | undefined;
  readonly cacheMb: number;
}

/**
 * Replays a facts file as `agentops replay` does (same ingest, engine and state) and answers the
 * query from the engine's state when the replay ends, before the state closes (a state on disk is
 * removed with the replay). The replay's dead letters for rejected records are added to the
 * explanation: the engine's state holds only the quarantined versions.
 */
export async function explainReplay(options: ReplayExplainOptions, query: ExplainQuery): Promise<ExplainAnswer> {
  let answered: { value: ExplainAnswer } | { error: unknown } | undefined;
  const engineObserver = {
    opened: () => undefined,
    closing: (_partition: number, lineage: Parameters<typeof answer>[0]) => {
      try {
        answered = { value: answer(lineage, query) };
      } catch (error) {
        answered = { error };
      }
    },
  };
  // The dead letters are read before the replay's state (where its sink log is) is removed.
  const deadLetters = await withReplayState(options.state, options.stateDir, options.cacheMb, async (state) => {
    const onDisk = state.engineState === undefined ? {} : { engineState: state.engineState };
    const outcome = await Effect.runPromise(
      replayFile(
        { input: options.input },
        { engine: options.engine, tripwires: {}, engineObserver, ...onDisk },
        shippedCatalog(),
        state.sinkLog,
      ),
    );
    return Array.from(outcome.sinks.deadLetterLines(), deadLetterInput);
  });
  if (answered === undefined) throw new InvariantError({ problem: "the replay closed no engine" });
  if ("error" in answered) throw answered.error;
  const result = answered.value;
  if (result.kind !== "explained") return result;
  return {
    kind: "explained",
    explanation: withRefusedRecords(result.explanation, deadLetters),
  };
}

/** A line of the replay's dead-letter output (file-dead-letters.ts), with the rejected line's fields when it was an object. */
function deadLetterInput(line: string): DeadLetterInput {
  const letter = JSON.parse(line) as {
    reason: string;
    detail: string;
    source: { line?: number; topic?: string; partition?: number; offset?: string };
    raw: string | null;
  };
  let record: Record<string, unknown> | null = null;
  try {
    const parsed = letter.raw === null ? null : (JSON.parse(letter.raw) as unknown);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      record = parsed as Record<string, unknown>;
  } catch {
    record = null;
  }
  const { source } = letter;
  const origin =
    source.line !== undefined
      ? { line: source.line }
      : source.topic !== undefined
        ? { topic: source.topic, partition: source.partition ?? 0, offset: source.offset ?? "" }
        : null;
  return {
    reason: letter.reason,
    detail: letter.detail,
    fact_id: typeof record?.fact_id === "string" ? record.fact_id : null,
    record,
    origin,
  };
}
