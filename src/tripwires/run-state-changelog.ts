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

/**
 * The changelog value of one run's state (agentops.run-monitor-changelog.v1, key = run_id): the
 * Kafka run monitor writes it for every run a batch touched, so its size and the time to write it
 * are paid per record (docs/tripwires.md, "State and restore"). The in-memory RunState written as
 * JSON is mostly 53-bit hashes (16–17 digits each, repeated: a loop is the same action again) and
 * ascending seqs; here the same content is written compactly, as a JSON array:
 *
 * - every 53-bit hash (action identities, observation digests, mirror subjects) once, in a table
 *   at the end, and referred to by its index;
 * - seq and epoch lists (and the dedupe windows' seq ranges) as differences from the previous entry;
 * - lists of 0/1 flags as strings of digits.
 *
 * restoreRunState reads this form back to exactly the state that was written (property-tested), and
 * still reads the object form written before it (an old changelog topic restores as it did).
 */
export const CHANGELOG_FORMAT = 2;

/**
 * Interns the hashes of one value being written. The keys are already uniformly distributed
 * 53-bit hashes, so their low bits index an open-addressed table directly: several times faster
 * than a Map, which hashes each double again. The slots are module-level scratch, reset after
 * every use (serializeRunState is synchronous, so one value is written at a time).
 */
const SLOT_BITS = 11; // 2,048 slots: well above the most hashes a run state can hold (~500 with the default bounds)
const SLOT_MASK = (1 << SLOT_BITS) - 1;
const slotValues = new Float64Array(1 << SLOT_BITS);
const slotIndexes = new Int32Array(1 << SLOT_BITS).fill(-1);

class HashTable {
  readonly values: number[] = [];
  private readonly usedSlots: number[] = [];

  ref(value: number): number {
    let slot = (value >>> 0) & SLOT_MASK;
    for (;;) {
      const index = slotIndexes[slot] ?? -1;
      if (index === -1) break;
      if (slotValues[slot] === value) return index;
      slot = (slot + 1) & SLOT_MASK;
    }
    // A table that fills up (only with bounds far above the defaults) degrades to a linear scan.
    if (this.usedSlots.length >= SLOT_MASK) {
      const known = this.values.indexOf(value);
      if (known !== -1) return known;
      this.values.push(value);
      return this.values.length - 1;
    }
    const index = this.values.length;
    this.values.push(value);
    slotValues[slot] = value;
    slotIndexes[slot] = index;
    this.usedSlots.push(slot);
    return index;
  }

  refs(values: readonly number[]): number[] {
    const out = new Array<number>(values.length);
    for (let index = 0; index < values.length; index++) out[index] = this.ref(values[index] ?? 0);
    return out;
  }

  /** Frees the shared slots for the next value. */
  release(): void {
    for (const slot of this.usedSlots) slotIndexes[slot] = -1;
    this.usedSlots.length = 0;
  }
}

function differences(values: readonly number[]): number[] {
  const out = new Array<number>(values.length);
  let previous = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index] ?? 0;
    out[index] = value - previous;
    previous = value;
  }
  return out;
}

function undoDifferences(values: readonly number[]): number[] {
  const out = new Array<number>(values.length);
  let previous = 0;
  for (let index = 0; index < values.length; index++) {
    previous += values[index] ?? 0;
    out[index] = previous;
  }
  return out;
}

const DIGITS = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
const digit = (value: number): string => DIGITS[value] ?? String(value);

/** Small non-negative integers (flags, 0–9) as a digit string. */
function digits(values: readonly number[]): string {
  let text = "";
  for (const value of values) text += digit(value);
  return text;
}

function undoDigits(text: string): number[] {
  const out = new Array<number>(text.length);
  for (let index = 0; index < text.length; index++) out[index] = text.charCodeAt(index) - 48;
  return out;
}

/** Two parallel 0/1 lists as one digit string: first + 2 × second. */
function pairDigits(first: readonly number[], second: readonly number[]): string {
  let text = "";
  for (let index = 0; index < first.length; index++) text += digit((first[index] ?? 0) + 2 * (second[index] ?? 0));
  return text;
}

/** The changelog value of a run's state. */
export function serializeRunState(state: RunState): string {
  const hashes = new HashTable();
  const { loop, redundancy, credential, messages, mirrors } = state;
  const failures: number[] = [];
  for (const [action, lastSeq] of loop.openFailures) failures.push(hashes.ref(action), lastSeq);
  const operations: number[] = [];
  for (const [operation, lastSeq] of loop.openOperations) operations.push(hashes.ref(operation), lastSeq);
  const episodes: (string | number)[] = [];
  for (const episode of state.deletionEpisodes) episodes.push(episode.ruleId, episode.root, episode.lastEventTime);
  const value = [
    CHANGELOG_FORMAT,
    state.runId,
    state.firstEventTime,
    state.lastEventTime,
    state.lastSeq,
    state.stepsSeen,
    state.sandboxEventsSeen,
    state.duplicatesIgnored,
    state.lateIgnored,
    state.alertsEmitted,
    state.deletionsGrouped,
    state.mirroredAlertsSuppressed,
    differences(state.seenSteps.ranges),
    state.seenSteps.floor,
    differences(state.seenSandboxEvents.ranges),
    state.seenSandboxEvents.floor,
    [
      differences(loop.seqs),
      hashes.refs(loop.actions),
      hashes.refs(loop.digests),
      differences(loop.epochs),
      pairDigits(loop.errors, loop.changed),
      loop.openCycle === null ? null : [loop.openCycle.cycleLength, loop.openCycle.seqFrom, loop.openCycle.lastSeq],
      failures,
      hashes.refs(loop.operations),
      operations,
    ],
    [
      redundancy.epoch,
      hashes.refs(redundancy.observedActions),
      hashes.refs(redundancy.observedDigests),
      differences(redundancy.observedEpochs),
      differences(redundancy.windowSeqs),
      digits(redundancy.windowFlags),
      redundancy.toolCallsSeen,
      redundancy.redundantSteps,
      redundancy.episodeOpen ? 1 : 0,
    ],
    [
      credential.pendingRead === null ? null : [credential.pendingRead.seq, credential.pendingRead.path],
      credential.lastEgress === null ? null : [credential.lastEgress.seq, credential.lastEgress.target],
      credential.alertedReadSeq,
    ],
    episodes,
    [hashes.refs(messages.digests), messages.counts, differences(messages.firstSeqs), hashes.ref(messages.alerted)],
    [differences(mirrors.seqs), hashes.refs(mirrors.subjects), digits(mirrors.flags), mirrors.rules],
  ];
  hashes.release();
  value.push(hashes.values);
  return JSON.stringify(value);
}

const numbers = z.array(z.number());
const count = z.number().int().nonnegative();
const flagDigits = (maximum: number) => z.string().regex(new RegExp(`^[0-${maximum}]*$`));
/** The compact form, position by position (serializeRunState writes it in this order). */
const compactSchema = z.tuple([
  z.literal(CHANGELOG_FORMAT),
  z.string(), // runId
  z.number(), // firstEventTime
  z.number(), // lastEventTime
  z.number(), // lastSeq
  count, // stepsSeen
  count, // sandboxEventsSeen
  count, // duplicatesIgnored
  count, // lateIgnored
  count, // alertsEmitted
  count, // deletionsGrouped
  count, // mirroredAlertsSuppressed
  numbers, // seenSteps.ranges
  z.number(), // seenSteps.floor
  numbers, // seenSandboxEvents.ranges
  z.number(), // seenSandboxEvents.floor
  // loop; the last two (operations, open operations) are absent from values written before them
  z.tuple([
    numbers, // seqs
    numbers, // actions
    numbers, // digests
    numbers, // epochs
    flagDigits(3), // errors + 2 × changed
    z.tuple([z.number(), z.number(), z.number()]).nullable(), // openCycle
    numbers, // openFailures
    numbers.optional(), // operations
    numbers.optional(), // openOperations
  ]),
  z.tuple([
    z.number(),
    numbers,
    numbers,
    numbers,
    numbers,
    flagDigits(1),
    count,
    count,
    z.union([z.literal(0), z.literal(1)]),
  ]), // redundancy
  z.tuple([
    z.tuple([z.number(), z.string()]).nullable(),
    z.tuple([z.number(), z.string()]).nullable(),
    z.number().nullable(),
  ]), // credential
  z.array(z.union([z.string(), z.number()])), // deletion episodes: ruleId, root, lastEventTime, …
  z.tuple([numbers, numbers, numbers, z.number()]), // messages
  z.tuple([numbers, numbers, flagDigits(7), z.array(z.string())]), // mirrors
  numbers, // the hash table
]);

/**
 * The compact form back to the object form of a run state (validated by the caller's schema, the
 * same one old object-form values go through).
 */
function expandCompactRunState(value: unknown): unknown {
  const [
    ,
    runId,
    firstEventTime,
    lastEventTime,
    lastSeq,
    stepsSeen,
    sandboxEventsSeen,
    duplicatesIgnored,
    lateIgnored,
    alertsEmitted,
    deletionsGrouped,
    mirroredAlertsSuppressed,
    stepRanges,
    stepFloor,
    sandboxRanges,
    sandboxFloor,
    loop,
    redundancy,
    credential,
    episodes,
    messages,
    mirrors,
    table,
  ] = compactSchema.parse(value);
  const hash = (index: number): number => {
    const found = table[index];
    if (found === undefined || !Number.isInteger(index))
      throw new Error(`changelog value refers to hash ${index} of ${table.length}`);
    return found;
  };
  const [loopSeqs, loopActions, loopDigests, loopEpochs, loopFlags, openCycle, failures] = loop;
  const [, , , , , , , loopOperations, operations] = loop;
  const loopMarks = undoDigits(loopFlags);
  const pairs = (list: readonly number[]): [number, number][] => {
    if (list.length % 2 !== 0) throw new Error("open failing streaks come in pairs");
    const out: [number, number][] = [];
    for (let index = 0; index < list.length; index += 2) out.push([hash(list[index] ?? -1), list[index + 1] ?? 0]);
    return out;
  };
  if (episodes.length % 3 !== 0) throw new Error("deletion episodes come in triples");
  const deletionEpisodes: unknown[] = [];
  for (let index = 0; index < episodes.length; index += 3)
    deletionEpisodes.push({ ruleId: episodes[index], root: episodes[index + 1], lastEventTime: episodes[index + 2] });
  const [
    epoch,
    observedActions,
    observedDigests,
    observedEpochs,
    windowSeqs,
    windowFlags,
    toolCallsSeen,
    redundantSteps,
    episodeOpen,
  ] = redundancy;
  const [pendingRead, lastEgress, alertedReadSeq] = credential;
  const [messageDigests, messageCounts, messageFirstSeqs, messageAlerted] = messages;
  const [mirrorSeqs, mirrorSubjects, mirrorFlags, mirrorRules] = mirrors;
  return {
    runId,
    firstEventTime,
    lastEventTime,
    lastSeq,
    stepsSeen,
    sandboxEventsSeen,
    duplicatesIgnored,
    lateIgnored,
    alertsEmitted,
    seenSteps: { ranges: undoDifferences(stepRanges), floor: stepFloor },
    seenSandboxEvents: { ranges: undoDifferences(sandboxRanges), floor: sandboxFloor },
    loop: {
      seqs: undoDifferences(loopSeqs),
      actions: loopActions.map(hash),
      errors: loopMarks.map((mark) => mark & 1),
      digests: loopDigests.map(hash),
      epochs: undoDifferences(loopEpochs),
      changed: loopMarks.map((mark) => mark >> 1),
      operations: loopOperations?.map(hash),
      openCycle:
        openCycle === null ? null : { cycleLength: openCycle[0], seqFrom: openCycle[1], lastSeq: openCycle[2] },
      openFailures: pairs(failures),
      openOperations: pairs(operations ?? []),
    },
    redundancy: {
      epoch,
      observedActions: observedActions.map(hash),
      observedDigests: observedDigests.map(hash),
      observedEpochs: undoDifferences(observedEpochs),
      windowSeqs: undoDifferences(windowSeqs),
      windowFlags: undoDigits(windowFlags),
      toolCallsSeen,
      redundantSteps,
      episodeOpen: episodeOpen === 1,
    },
    credential: {
      pendingRead: pendingRead === null ? null : { seq: pendingRead[0], path: pendingRead[1] },
      lastEgress: lastEgress === null ? null : { seq: lastEgress[0], target: lastEgress[1] },
      alertedReadSeq,
    },
    deletionEpisodes,
    deletionsGrouped,
    messages: {
      digests: messageDigests.map(hash),
      counts: messageCounts,
      firstSeqs: undoDifferences(messageFirstSeqs),
      alerted: hash(messageAlerted),
    },
    mirrors: {
      seqs: undoDifferences(mirrorSeqs),
      subjects: mirrorSubjects.map(hash),
      flags: undoDigits(mirrorFlags),
      rules: mirrorRules,
    },
    mirroredAlertsSuppressed,
  };
}

/** True for a value in the compact form (a JSON array); the object form predates it. */
const isCompactRunState = (value: unknown): boolean => Array.isArray(value);

/** The object form of a run state: what a value of either form must be (the compact one once expanded). */
const seenSeqsSchema = z.strictObject({
  ranges: numbers.refine(wellFormedRanges, "seq ranges ascending, first ≤ last, apart"),
  floor: z.number(),
});
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

/**
 * Parses and validates a changelog value; throws on anything that is not a run state. Reads the
 * compact form serializeRunState writes and the object form written before it.
 */
export function restoreRunState(text: string): RunState {
  const value: unknown = JSON.parse(text);
  return runStateSchema.parse(isCompactRunState(value) ? expandCompactRunState(value) : value);
}
