import { makeAlert, type TripwireAlert } from "../alert.ts";
import type { TripwireConfig } from "../config.ts";
import { RUN_RULES } from "../rules/run-rules.ts";

/**
 * Stuck in messages: an agent that answers with the same malformed message, or a harness that
 * replies with the same error, again and again, with no tool call at all. Message steps never
 * form actions, so the loop rules cannot see this; here the messages since the last tool call
 * are counted by observation digest. A tool call is progress and ends the streak.
 */
export interface MessageState {
  /** Digests of the messages since the last tool call, with their count and first seq (bounded). */
  digests: number[];
  counts: number[];
  firstSeqs: number[];
  /** The digest already alerted in this streak (0 = none): one alert per streak. */
  alerted: number;
}

export function emptyMessageState(): MessageState {
  return { digests: [], counts: [], firstSeqs: [], alerted: 0 };
}

export function endMessageStreak(state: MessageState): void {
  if (state.digests.length === 0 && state.alerted === 0) return;
  state.digests.length = 0;
  state.counts.length = 0;
  state.firstSeqs.length = 0;
  state.alerted = 0;
}

export interface MessageObservation {
  readonly runId: string;
  readonly seq: number;
  readonly eventTime: number;
  readonly actor: string | undefined;
  readonly digest: number;
}

export function observeMessage(
  state: MessageState,
  message: MessageObservation,
  config: TripwireConfig["messages"],
): TripwireAlert[] {
  if (message.actor !== undefined && config.ignoredActors.includes(message.actor)) return [];
  let index = state.digests.indexOf(message.digest);
  if (index === -1) {
    state.digests.push(message.digest);
    state.counts.push(0);
    state.firstSeqs.push(message.seq);
    if (state.digests.length > config.memory) {
      state.digests.shift();
      state.counts.shift();
      state.firstSeqs.shift();
    }
    index = state.digests.length - 1;
  }
  const count = (state.counts[index] ?? 0) + 1;
  state.counts[index] = count;
  state.firstSeqs[index] = Math.min(state.firstSeqs[index] ?? message.seq, message.seq);
  if (count < config.minRepeats || state.alerted !== 0) return [];
  state.alerted = message.digest;
  const seqFrom = state.firstSeqs[index] ?? message.seq;
  const rule = RUN_RULES["loop-repeated-message"];
  return [
    makeAlert(rule, {
      run_id: message.runId,
      event_time: message.eventTime,
      evidence: {
        seq_from: seqFrom,
        seq_to: message.seq,
        repetitions: count,
        detail: `${message.actor ?? "agent"} message`,
      },
      message: `the same ${message.actor ?? "agent"} message was repeated ${count} times (seq ${seqFrom}..${message.seq}) with no tool call in between`,
    }),
  ];
}
