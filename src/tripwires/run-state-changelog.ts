import { z } from "zod";
import { differences, digits, HashTable, pairDigits, undoDifferences, undoDigits } from "./changelog-encoding.ts";
import type { RunState } from "./run-state.ts";
import { runStateSchema } from "./run-state-object-schema.ts";

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

/**
 * Parses and validates a changelog value; throws on anything that is not a run state. Reads the
 * compact form serializeRunState writes and the object form written before it.
 */
export function restoreRunState(text: string): RunState {
  const value: unknown = JSON.parse(text);
  return runStateSchema.parse(isCompactRunState(value) ? expandCompactRunState(value) : value);
}
