import { z } from "zod";
import { emptyCredentialState, type CredentialState } from "./detectors/credential-egress-detector.ts";
import { MAX_DELETION_EPISODES, type DeletionEpisode } from "./detectors/deletion-episodes.ts";
import { DESTRUCTIVE_RULE_IDS } from "./rules/destructive-rules.ts";
import { emptyLoopState, type LoopState } from "./detectors/loop-detector.ts";
import { emptyMirrorMemory, MAX_MIRROR_ENTRIES, MIRROR_CHANGED, MIRROR_MATCHED, MIRROR_SANDBOX_SIDE, type MirrorMemory } from "./detectors/action-mirror.ts";
import { emptyMessageState, type MessageState } from "./detectors/message-repeat-detector.ts";
import { emptyRedundancyState, windowFigures, type RedundancyState } from "./detectors/redundancy-detector.ts";
import { expandCompactRunState, isCompactRunState } from "./run-state-changelog.ts";
import { emptySeenSeqs, rangesOfSeqs, wellFormedRanges, type SeenSeqs } from "./seen-seqs.ts";

export { serializeRunState } from "./run-state-changelog.ts";

/**
 * Everything the monitor remembers about one run: a plain JSON-safe value with bounded arrays, so
 * the Kafka processor can write it to a compacted changelog topic (key = run_id) and restore it
 * (serializeRunState / restoreRunState; the value's form is in run-state-changelog.ts).
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

const numbers = z.array(z.number());
const seenSeqsSchema = z.strictObject({ ranges: numbers.refine(wellFormedRanges, "seq ranges ascending, first ≤ last, apart"), floor: z.number() });
const runStateSchema = z
  .strictObject({
  runId: z.string(),
  firstEventTime: z.number(),
  lastEventTime: z.number(),
  lastSeq: z.number(),
  stepsSeen: z.number(),
  sandboxEventsSeen: z.number(),
  duplicatesIgnored: z.number(),
  lateIgnored: z.number(),
  alertsEmitted: z.number(),
  seenSteps: seenSeqsSchema.optional(),
  seenSandboxEvents: seenSeqsSchema.optional(),
  // Object-form values written before the seen seqs became ranges: a sorted list and a floor each.
  seenStepSeqs: numbers.optional(),
  seenSandboxSeqs: numbers.optional(),
  stepSeqFloor: z.number().optional(),
  sandboxSeqFloor: z.number().optional(),
  loop: z
    .strictObject({
      seqs: numbers,
      actions: numbers,
      errors: numbers,
      // Changelog values written before progress-aware failing steps restore with no digests and
      // one epoch: old failures then count as "nothing changed in between", as they did.
      digests: numbers.optional(),
      epochs: numbers.optional(),
      changed: numbers.optional(),
      // Values written before loop-failing-operation restore with no operations (none alerts).
      operations: numbers.optional(),
      openCycle: z.strictObject({ cycleLength: z.number(), seqFrom: z.number(), lastSeq: z.number() }).nullable(),
      openFailures: z.array(z.tuple([z.number(), z.number()])),
      openOperations: z.array(z.tuple([z.number(), z.number()])).default([]),
    })
    .transform((loop) => {
      const none = (): number[] => loop.seqs.map(() => 0);
      const { digests = none(), epochs = none(), changed = none(), operations = none() } = loop;
      return { ...loop, digests, epochs, changed, operations };
    }),
  redundancy: z.strictObject({
    epoch: z.number(),
    observedActions: numbers,
    observedDigests: numbers,
    observedEpochs: numbers,
    windowSeqs: numbers,
    windowFlags: numbers,
    toolCallsSeen: z.number(),
    redundantSteps: z.number(),
    episodeOpen: z.boolean(),
  }),
  credential: z.strictObject({
    pendingRead: z.strictObject({ seq: z.number(), path: z.string() }).nullable(),
    lastEgress: z.strictObject({ seq: z.number(), target: z.string() }).nullable(),
    alertedReadSeq: z.number().nullable(),
  }),
  // Defaults: changelog values written before deletion grouping existed still restore.
  deletionEpisodes: z.array(z.strictObject({ ruleId: z.enum(DESTRUCTIVE_RULE_IDS), root: z.string(), lastEventTime: z.number() })).max(MAX_DELETION_EPISODES).default([]),
  deletionsGrouped: z.number().default(0),
  messages: z.strictObject({ digests: numbers, counts: numbers, firstSeqs: numbers, alerted: z.number() }).default(emptyMessageState),
  mirrors: z
    .union([
      z.strictObject({ seqs: numbers, subjects: numbers, flags: numbers, rules: z.array(z.string()) }).refine((memory) => memory.seqs.length <= MAX_MIRROR_ENTRIES && [memory.subjects, memory.flags, memory.rules].every((list) => list.length === memory.seqs.length), "mirror lists of one length, at most MAX_MIRROR_ENTRIES"),
      // Object form values written before the mirrors became parallel lists: one object per entry.
      z
        .array(z.strictObject({ side: z.union([z.literal(0), z.literal(1)]), seq: z.number(), subject: z.number(), rules: z.array(z.string()), changed: z.union([z.literal(0), z.literal(1)]), matched: z.union([z.literal(0), z.literal(1)]) }))
        .max(MAX_MIRROR_ENTRIES)
        .transform((entries): MirrorMemory => ({
          seqs: entries.map((entry) => entry.seq),
          subjects: entries.map((entry) => entry.subject),
          flags: entries.map((entry) => (entry.side === 1 ? MIRROR_SANDBOX_SIDE : 0) | (entry.changed === 1 ? MIRROR_CHANGED : 0) | (entry.matched === 1 ? MIRROR_MATCHED : 0)),
          rules: entries.map((entry) => entry.rules.join(",")),
        })),
    ])
    .default(emptyMirrorMemory),
  mirroredAlertsSuppressed: z.number().default(0),
  })
  .transform(({ seenStepSeqs, seenSandboxSeqs, stepSeqFloor, sandboxSeqFloor, seenSteps, seenSandboxEvents, ...state }): RunState => ({
    ...state,
    seenSteps: seenSteps ?? { ranges: rangesOfSeqs(seenStepSeqs ?? []), floor: stepSeqFloor ?? 0 },
    seenSandboxEvents: seenSandboxEvents ?? { ranges: rangesOfSeqs(seenSandboxSeqs ?? []), floor: sandboxSeqFloor ?? 0 },
  }));

/**
 * Parses and validates a changelog value; throws on anything that is not a run state. Reads the
 * compact form serializeRunState writes and the object form written before it.
 */
export function restoreRunState(text: string): RunState {
  const value: unknown = JSON.parse(text);
  return runStateSchema.parse(isCompactRunState(value) ? expandCompactRunState(value) : value);
}
