import { emptyCredentialState, type CredentialState } from "./detectors/credential-egress-detector.ts";
import type { DeletionEpisode } from "./detectors/deletion-episodes.ts";
import { emptyLoopState, type LoopState } from "./detectors/loop-detector.ts";
import { emptyMirrorMemory, type MirrorMemory } from "./detectors/action-mirror.ts";
import { emptyMessageState, type MessageState } from "./detectors/message-repeat-detector.ts";
import { emptyRedundancyState, windowFigures, type RedundancyState } from "./detectors/redundancy-detector.ts";
import { emptySeenSeqs, type SeenSeqs } from "./seen-seqs.ts";

/**
 * Everything the monitor remembers about one run: a plain JSON-safe value with bounded arrays, so
 * the Kafka processor can write it to a compacted changelog topic (key = run_id) and restore it
 * (serializeRunState / restoreRunState in run-state-changelog.ts).
 */
export interface RunState {
  runId: string;
  firstEventTime: number;
  lastEventTime: number;
  lastSeq: number;
  stepsSeen: number;
  sandboxEventsSeen: number;
  duplicatesIgnored: number;
  lateIgnored: number;
  alertsEmitted: number;
  /** Recent seqs per record type, for at-least-once dedupe; below the floor = too late. */
  seenSteps: SeenSeqs;
  seenSandboxEvents: SeenSeqs;
  loop: LoopState;
  redundancy: RedundancyState;
  credential: CredentialState;
  /** Alerted deletions whose follow-up file_delete events are grouped, not alerted again. */
  deletionEpisodes: DeletionEpisode[];
  /** file_delete findings grouped into an open episode instead of alerting. */
  deletionsGrouped: number;
  /** Repeated messages since the last tool call. */
  messages: MessageState;
  /** Recent tool calls and sandbox events by subject, to pair an action reported by both. */
  mirrors: MirrorMemory;
  /** Destructive alerts not raised because the same action's other report already raised them. */
  mirroredAlertsSuppressed: number;
}

/** The run-state summary record (agentops.run-state.v1, compacted, key = run_id). */
export interface RunStateSummary {
  readonly run_id: string;
  readonly steps_seen: number;
  readonly tool_calls_seen: number;
  readonly sandbox_events_seen: number;
  readonly redundant_steps: number;
  /** redundant_steps / tool_calls_seen; null before the first tool call. */
  readonly redundant_share: number | null;
  readonly window_redundant_steps: number;
  readonly window_redundant_share: number | null;
  readonly last_seq: number;
  readonly first_event_time: number;
  readonly last_event_time: number;
  /** Loop, failing-step and redundancy episodes currently alerted and not yet over. */
  readonly open_alerts: number;
  readonly alerts_emitted: number;
  readonly duplicates_ignored: number;
  readonly late_ignored: number;
  /** Observed deletions grouped into an already alerted episode (docs/tripwires.md, flood control). */
  readonly deletions_grouped: number;
}

export function emptyRunState(runId: string, eventTime: number): RunState {
  return {
    runId,
    firstEventTime: eventTime,
    lastEventTime: eventTime,
    lastSeq: -1,
    stepsSeen: 0,
    sandboxEventsSeen: 0,
    duplicatesIgnored: 0,
    lateIgnored: 0,
    alertsEmitted: 0,
    seenSteps: emptySeenSeqs(),
    seenSandboxEvents: emptySeenSeqs(),
    loop: emptyLoopState(),
    redundancy: emptyRedundancyState(),
    credential: emptyCredentialState(),
    deletionEpisodes: [],
    deletionsGrouped: 0,
    messages: emptyMessageState(),
    mirrors: emptyMirrorMemory(),
    mirroredAlertsSuppressed: 0,
  };
}

export function summariseRun(state: RunState): RunStateSummary {
  const redundancy = state.redundancy;
  const window = windowFigures(redundancy);
  return {
    run_id: state.runId,
    steps_seen: state.stepsSeen,
    tool_calls_seen: redundancy.toolCallsSeen,
    sandbox_events_seen: state.sandboxEventsSeen,
    redundant_steps: redundancy.redundantSteps,
    redundant_share: redundancy.toolCallsSeen === 0 ? null : redundancy.redundantSteps / redundancy.toolCallsSeen,
    window_redundant_steps: window.count,
    window_redundant_share: window.steps === 0 ? null : window.share,
    last_seq: state.lastSeq,
    first_event_time: state.firstEventTime,
    last_event_time: state.lastEventTime,
    open_alerts:
      (state.loop.openCycle === null ? 0 : 1) +
      state.loop.openFailures.length +
      state.loop.openOperations.length +
      (redundancy.episodeOpen ? 1 : 0) +
      (state.messages.alerted === 0 ? 0 : 1),
    alerts_emitted: state.alertsEmitted,
    duplicates_ignored: state.duplicatesIgnored,
    late_ignored: state.lateIgnored,
    deletions_grouped: state.deletionsGrouped,
  };
}
