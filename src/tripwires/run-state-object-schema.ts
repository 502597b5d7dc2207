import { z } from "zod";
import { MAX_DELETION_EPISODES } from "./detectors/deletion-episodes.ts";
import {
  emptyMirrorMemory,
  MAX_MIRROR_ENTRIES,
  MIRROR_CHANGED,
  MIRROR_MATCHED,
  MIRROR_SANDBOX_SIDE,
  type MirrorMemory,
} from "./detectors/action-mirror.ts";
import { emptyMessageState } from "./detectors/message-repeat-detector.ts";
import { DESTRUCTIVE_RULE_IDS } from "./rules/rule-definition.ts";
import type { RunState } from "./run-state.ts";
import { rangesOfSeqs, wellFormedRanges } from "./seen-seqs.ts";

const numbers = z.array(z.number());

/** The object form of a run state: what a value of either form must be (the compact one once expanded). */
const seenSeqsSchema = z.strictObject({
  ranges: numbers.refine(wellFormedRanges, "seq ranges ascending, first ≤ last, apart"),
  floor: z.number(),
});
export const runStateSchema = z
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
    deletionEpisodes: z
      .array(z.strictObject({ ruleId: z.enum(DESTRUCTIVE_RULE_IDS), root: z.string(), lastEventTime: z.number() }))
      .max(MAX_DELETION_EPISODES)
      .default([]),
    deletionsGrouped: z.number().default(0),
    messages: z
      .strictObject({ digests: numbers, counts: numbers, firstSeqs: numbers, alerted: z.number() })
      .default(emptyMessageState),
    mirrors: z
      .union([
        z
          .strictObject({ seqs: numbers, subjects: numbers, flags: numbers, rules: z.array(z.string()) })
          .refine(
            (memory) =>
              memory.seqs.length <= MAX_MIRROR_ENTRIES &&
              [memory.subjects, memory.flags, memory.rules].every((list) => list.length === memory.seqs.length),
            "mirror lists of one length, at most MAX_MIRROR_ENTRIES",
          ),
        // Object form values written before the mirrors became parallel lists: one object per entry.
        z
          .array(
            z.strictObject({
              side: z.union([z.literal(0), z.literal(1)]),
              seq: z.number(),
              subject: z.number(),
              rules: z.array(z.string()),
              changed: z.union([z.literal(0), z.literal(1)]),
              matched: z.union([z.literal(0), z.literal(1)]),
            }),
          )
          .max(MAX_MIRROR_ENTRIES)
          .transform((entries): MirrorMemory => ({
            seqs: entries.map((entry) => entry.seq),
            subjects: entries.map((entry) => entry.subject),
            flags: entries.map(
              (entry) =>
                (entry.side === 1 ? MIRROR_SANDBOX_SIDE : 0) |
                (entry.changed === 1 ? MIRROR_CHANGED : 0) |
                (entry.matched === 1 ? MIRROR_MATCHED : 0),
            ),
            rules: entries.map((entry) => entry.rules.join(",")),
          })),
      ])
      .default(emptyMirrorMemory),
    mirroredAlertsSuppressed: z.number().default(0),
  })
  .transform(
    ({
      seenStepSeqs,
      seenSandboxSeqs,
      stepSeqFloor,
      sandboxSeqFloor,
      seenSteps,
      seenSandboxEvents,
      ...state
    }): RunState => ({
      ...state,
      seenSteps: seenSteps ?? { ranges: rangesOfSeqs(seenStepSeqs ?? []), floor: stepSeqFloor ?? 0 },
      seenSandboxEvents: seenSandboxEvents ?? {
        ranges: rangesOfSeqs(seenSandboxSeqs ?? []),
        floor: sandboxSeqFloor ?? 0,
      },
    }),
  );
