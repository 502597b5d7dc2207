import type { DeliverySummary, MetricFact } from "../contract/facts.ts";
import { InternalRecordError, type BinaryReader, type BinaryWriter } from "../codec/binary-form.ts";
import { readFact, writeFact } from "../codec/fact-layout.ts";
import type { MoneyReading } from "../metrics/money.ts";
import { cohortOf } from "../metrics/scope.ts";
import type { CallsReading, RepairsReading } from "../metrics/task-inputs.ts";
import {
  decodeWith,
  encodeWith,
  readOrigin,
  readReasonCounts,
  readShares,
  writeOrigin,
  writeReasonCounts,
  writeShares,
} from "../state/codecs/values.ts";
import type { ValueCodec } from "../state/value-codec.ts";
import type { Admission, ClaimVersion, JoinReading } from "./stage-records.ts";

/*
 * The stage records' values (stage-records.ts) in the state codecs' primitive forms: what the
 * topics between stages carry and what the stage stores keep.
 */

/** A fact version on its way from the fact ledger to the domain ledger. */
export const claimVersionCodec: ValueCodec<ClaimVersion> = {
  encode: ({ fact, origin, live }) =>
    encodeWith((out) => {
      out.boolean(live);
      writeOrigin(out, origin ?? undefined);
      writeFact(out, fact);
    }),
  decode: (bytes) =>
    decodeWith(bytes, (input) => ({
      live: input.boolean(),
      origin: readOrigin(input) ?? null,
      fact: readFact(input) as MetricFact,
    })),
};

/** An admitted fact with where it was read. */
export const admissionCodec: ValueCodec<Admission> = {
  encode: ({ fact, origin }) =>
    encodeWith((out) => {
      writeOrigin(out, origin ?? undefined);
      writeFact(out, fact);
    }),
  decode: (bytes) =>
    decodeWith(bytes, (input) => ({ origin: readOrigin(input) ?? null, fact: readFact(input) as MetricFact })),
};

const MEMBER_READING = 1;
const TASK_ID_READING = 2;

/** A foreign-key join response: a member Delivery's reading at a cutoff, or a task_id's. */
export const joinReadingCodec: ValueCodec<JoinReading> = {
  encode: (reading) =>
    encodeWith((out) => {
      if ("summaries" in reading) {
        out.byte(MEMBER_READING);
        out.unsigned(reading.summaries.length);
        for (const summary of reading.summaries) writeFact(out, summary);
        writeMoneyReading(out, reading.money);
        writeCallsReading(out, reading.calls);
        writeRepairsReading(out, reading.repairs.unnamed);
        out.unsigned(reading.repairs.named.length);
        for (const named of reading.repairs.named) {
          out.string(named.taskId);
          writeRepairsReading(out, named);
        }
        return;
      }
      out.byte(TASK_ID_READING);
      writeCallsReading(out, reading.calls);
      writeRepairsReading(out, reading.repairs);
    }),
  decode: (bytes) =>
    decodeWith(bytes, (input): JoinReading => {
      const tag = input.byte();
      if (tag !== MEMBER_READING && tag !== TASK_ID_READING)
        throw new InternalRecordError(`join reading tag ${String(tag)}`);
      if (tag === TASK_ID_READING) return { calls: readCallsReading(input), repairs: readRepairsReading(input) };
      const summaries = Array.from({ length: input.unsigned() }, () => readFact(input) as DeliverySummary);
      const money = readMoneyReading(input);
      const calls = readCallsReading(input);
      const unnamed = readRepairsReading(input);
      const named = Array.from({ length: input.unsigned() }, () => {
        const taskId = input.string();
        return { taskId, ...readRepairsReading(input) };
      });
      return { summaries, money, calls, repairs: { unnamed, named } };
    }),
};

function writeRepairsReading(out: BinaryWriter, repairs: RepairsReading): void {
  out.unsigned(repairs.count);
  out.double(repairs.asOf);
  out.boolean(repairs.attributable);
}

function readRepairsReading(input: BinaryReader): RepairsReading {
  return { count: input.unsigned(), asOf: input.double(), attributable: input.boolean() };
}

function writeMoneyReading(out: BinaryWriter, money: MoneyReading): void {
  writeShares(out, money.shares);
  writeReasonCounts(out, money.excluded);
  out.double(money.asOf);
}

function readMoneyReading(input: BinaryReader): MoneyReading {
  return { shares: readShares(input), excluded: readReasonCounts(input), asOf: input.double() };
}

function writeCallsReading(out: BinaryWriter, calls: CallsReading): void {
  out.unsigned(calls.direct);
  out.unsigned(calls.nondirect);
  out.unsigned(calls.unreadable);
  out.double(calls.asOf);
  out.unsigned(calls.tuples.length);
  for (const tuple of calls.tuples) {
    const keys = Object.keys(tuple);
    out.unsigned(keys.length);
    for (const key of keys) {
      out.string(key);
      out.string(tuple[key] as string);
    }
  }
}

function readCallsReading(input: BinaryReader): CallsReading {
  const direct = input.unsigned();
  const nondirect = input.unsigned();
  const unreadable = input.unsigned();
  const asOf = input.double();
  // Tuples come back interned (cohortOf), the same objects the readings held.
  const tuples = Array.from({ length: input.unsigned() }, () =>
    cohortOf(Object.fromEntries(Array.from({ length: input.unsigned() }, () => [input.string(), input.string()]))),
  );
  return { direct, nondirect, unreadable, asOf, tuples };
}
