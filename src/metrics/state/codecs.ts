import { METRIC_IDS, type MetricId } from "../../catalog/metric-definitions.ts";
import type { DeliverySummary, MetricFact } from "../../contract/facts.ts";
import { BinaryReader, BinaryWriter, detachedBytes, InternalRecordError } from "../../codec/binary-form.ts";
import { readFact, writeFact } from "../../codec/fact-layout.ts";
import type { Contribution, MoneyShare } from "../contribution.ts";
import { ExactSum } from "../exact-sum.ts";
import { BoundedMemo } from "../memo-map.ts";
import { GroupAggregate, type MoneySliceTotal } from "../group-aggregate.ts";
import type { MoneyReading } from "../money.ts";
import type { Admission, ClaimVersion, JoinReading } from "../partitioned/stage-records.ts";
import type { Cohort, Scope } from "../result-record.ts";
import { cohortOf, groupKeyOf, NO_COHORT, snapshotScopeOf, windowScopeOf } from "../scope.ts";
import type { CallsReading, RepairsReading } from "../task-inputs.ts";
import type { GroupKeyIds } from "./group-key-ids.ts";
import type { ValueCodec } from "./state-store.ts";

/*
 * How the engine's state values are written on disk: the facts in the binary layout of the
 * engine-facts topic (src/codec/fact-layout.ts), everything else in the same primitive
 * forms. A value read back equals the value written (exact sums stay exact, bigints stay bigints).
 */

const writer = new BinaryWriter();

/** Encodes one value with the shared writer (a value's parts encoded with `factBytes` must be encoded before, not inside). */
export function encodeWith(write: (out: BinaryWriter) => void): Buffer {
  writer.start();
  write(writer);
  return writer.finish();
}

/**
 * The shared writer, started for one value (`finish()` gives its bytes): `encodeWith` without a
 * closure, for the codecs that run for every write of a commit.
 */
export function startValue(): BinaryWriter {
  writer.start();
  return writer;
}

export function decodeWith<V>(bytes: Buffer, read: (input: BinaryReader) => V): V {
  const reader = new BinaryReader(bytes);
  const value = read(reader);
  reader.end();
  return value;
}

/** Values kept as their bytes (stage outputs, partial sums): stored as given, read back detached from the read's buffer. */
export const bytesCodec: ValueCodec<Buffer> = { encode: (bytes) => bytes, decode: detachedBytes };

/**
 * Facts encoded during the commit being drained. An accepted call is stored four times (its ledger
 * versions, by call_id, by Delivery, by task), a cost or summary twice: encoded once per commit,
 * not once per table. Cleared when the commit's writes are encoded, so it never outlives one.
 */
const encodedFacts = new Map<MetricFact, Buffer>();

export function factBytes(fact: MetricFact): Buffer {
  let bytes = encodedFacts.get(fact);
  if (bytes === undefined) {
    const out = startValue();
    writeFact(out, fact);
    bytes = out.finish();
    encodedFacts.set(fact, bytes);
  }
  return bytes;
}

export const forgetEncodedFacts = (): void => encodedFacts.clear();

export const factCodec: ValueCodec<MetricFact> = {
  encode: factBytes,
  decode: (bytes) => decodeWith(bytes, (input) => readFact(input) as MetricFact),
  committed: forgetEncodedFacts,
};

export const stringCodec: ValueCodec<string> = {
  encode: (value) => encodeWith((out) => out.string(value)),
  decode: (bytes) => decodeWith(bytes, (input) => input.string()),
};

export const stringListCodec: ValueCodec<readonly string[]> = {
  encode: (values) =>
    encodeWith((out) => {
      out.unsigned(values.length);
      for (const value of values) out.string(value);
    }),
  decode: (bytes) => decodeWith(bytes, (input) => Array.from({ length: input.unsigned() }, () => input.string())),
};

/** Event times with how many contributions have each (a group's as_of multiset, one hour of it). */
export const timeCountsCodec: ValueCodec<Map<number, number>> = {
  encode: (counts) =>
    encodeWith((out) => {
      out.unsigned(counts.size);
      for (const [time, count] of counts) {
        out.double(time);
        out.integer(count);
      }
    }),
  decode: (bytes) =>
    decodeWith(bytes, (input) => {
      const counts = new Map<number, number>();
      const size = input.unsigned();
      for (let index = 0; index < size; index++) counts.set(input.double(), input.integer());
      return counts;
    }),
};

/** A member set whose members are the whole point (the value is empty). */
export const presenceCodec: ValueCodec<true> = {
  encode: () => EMPTY,
  decode: () => true,
};
const EMPTY = Buffer.alloc(0);

/** Where a version was read (a file line or `topic/partition/offset`), or unknown. */
export type StoredOrigin = number | string | undefined;

/** The records under one fact_id, each with where it was read (FactLedger). */
export interface StoredVersion {
  readonly fact: MetricFact;
  readonly origin: StoredOrigin;
}

export const versionsCodec: ValueCodec<readonly StoredVersion[]> = {
  encode: (versions) => {
    if (versions.length === 1) {
      // Nearly every fact_id has one version: no arrays built.
      const only = versions[0] as StoredVersion;
      const fact = factBytes(only.fact);
      const out = startValue();
      out.unsigned(1);
      writeOrigin(out, only.origin);
      out.raw(fact);
      return out.finish();
    }
    // Encoded first: the writer is shared, so a fact cannot be encoded inside another write.
    const facts = versions.map((version) => factBytes(version.fact));
    const out = startValue();
    out.unsigned(versions.length);
    versions.forEach(({ origin }, position) => {
      writeOrigin(out, origin);
      out.raw(facts[position] as Buffer);
    });
    return out.finish();
  },
  decode: (bytes) => decodeWith(bytes, (input) => Array.from({ length: input.unsigned() }, () => ({ origin: readOrigin(input), fact: readFact(input) as MetricFact }))),
  committed: forgetEncodedFacts,
};

/** Where a record was read (a file line or topic coordinates), on its own. */
export const originCodec: ValueCodec<StoredOrigin> = {
  encode: (origin) => encodeWith((out) => writeOrigin(out, origin)),
  decode: (bytes) => decodeWith(bytes, readOrigin),
};

function writeOrigin(out: BinaryWriter, origin: StoredOrigin): void {
  if (origin === undefined) out.byte(0);
  else if (typeof origin === "number") {
    out.byte(1);
    out.double(origin);
  } else {
    out.byte(2);
    out.string(origin);
  }
}

function readOrigin(input: BinaryReader): StoredOrigin {
  const tag = input.byte();
  if (tag === 0) return undefined;
  if (tag === 1) return input.double();
  if (tag === 2) return input.string();
  throw new InternalRecordError(`origin tag ${String(tag)}`);
}

function writeExact(out: BinaryWriter, value: number | bigint): void {
  if (typeof value === "number") {
    out.byte(0);
    out.double(value);
  } else {
    out.byte(1);
    out.string(value.toString());
  }
}

function readExact(input: BinaryReader): number | bigint {
  const tag = input.byte();
  if (tag === 0) return input.double();
  if (tag === 1) return BigInt(input.string());
  throw new InternalRecordError(`exact number tag ${String(tag)}`);
}

function writeCounts(out: BinaryWriter, counts: Iterable<readonly [string, number]>, size: number): void {
  out.unsigned(size);
  for (const [key, count] of counts) {
    out.string(key);
    out.integer(count);
  }
}

function readCounts(input: BinaryReader): [string, number][] {
  return Array.from({ length: input.unsigned() }, () => [input.string(), input.integer()] as [string, number]);
}

/** Money by exact slice (a contribution's, or a join reading's). */
function writeShares(out: BinaryWriter, shares: readonly MoneyShare[]): void {
  out.unsigned(shares.length);
  // Indexed loops in the codecs' and the engine's hot paths: `for…of` over the frozen empty arrays
  // most values hold falls back to the iterator protocol and allocates per step (measured).
  for (let index = 0; index < shares.length; index++) {
    const share = shares[index] as MoneyShare;
    out.string(share.currency);
    out.string(share.source);
    out.string(share.costBasis);
    writeExact(out, share.amountMinor);
  }
}

/** Most contributions hold no money and no exclusions: one shared empty value each, as the engine makes them (units/finalize.ts). */
const NO_SHARES: readonly MoneyShare[] = Object.freeze([]);
const NO_REASONS: Readonly<Record<string, number>> = Object.freeze({});

function readShares(input: BinaryReader): readonly MoneyShare[] {
  const size = input.unsigned();
  if (size === 0) return NO_SHARES;
  const shares: MoneyShare[] = [];
  for (let index = 0; index < size; index++) shares.push({ currency: input.string(), source: input.string(), costBasis: input.string(), amountMinor: readExact(input) });
  return shares;
}

/** Counts by reason (a contribution's exclusions, the costs a reading left out). Written without building arrays: it runs per contribution. */
function writeReasonCounts(out: BinaryWriter, counts: Readonly<Record<string, number>>): void {
  let size = 0;
  for (const _reason in counts) size++;
  out.unsigned(size);
  for (const reason in counts) {
    out.string(reason);
    out.integer(counts[reason] as number);
  }
}

function readReasonCounts(input: BinaryReader): Readonly<Record<string, number>> {
  const size = input.unsigned();
  if (size === 0) return NO_REASONS;
  const counts: Record<string, number> = {};
  // Defined, not assigned: a reason named "__proto__" stays a count (as Object.fromEntries kept it).
  for (let index = 0; index < size; index++) Object.defineProperty(counts, input.string(), { value: input.integer(), enumerable: true, writable: true, configurable: true });
  return counts;
}

/** A group's metric, scope and cohort, read back from its result key (RFC 8785 JSON) once per group. */
interface GroupIdentity {
  readonly metricId: MetricId;
  readonly scope: Scope;
  readonly cohort: Cohort;
}

/**
 * Result keys read back in this process, to their identity: the recent ones (result keys keep
 * coming with new windows and snapshots for as long as the process runs), like the scope and
 * cohort interning of scope.ts.
 */
const identities = new BoundedMemo<string, GroupIdentity>(16_384);

function identityOf(groupKey: string): GroupIdentity {
  let identity = identities.get(groupKey);
  if (identity !== undefined) return identity;
  const parsed = JSON.parse(groupKey) as { cohort: Record<string, string>; metric_id: MetricId; scope: Record<string, string> };
  // The scope's own field order (scope.ts), not the key's canonical order: rendered results show it.
  const scope = (parsed.scope.kind === "window" ? { kind: "window", start: parsed.scope.start, end: parsed.scope.end } : { kind: "snapshot", snapshot_id: parsed.scope.snapshot_id, cutoff: parsed.scope.cutoff }) as Scope;
  identity = { metricId: parsed.metric_id, scope: Object.freeze(scope), cohort: Object.freeze(parsed.cohort) };
  identities.set(groupKey, identity);
  return identity;
}

const FLAG_CANDIDATE = 1;
const FLAG_COVERED = 2;
const FLAG_ELIGIBLE = 4;
const FLAG_HIT = 8;
const FLAG_CATEGORY = 16;

function writeContributionBody(out: BinaryWriter, contribution: Contribution): void {
  const flags =
    (contribution.candidate ? FLAG_CANDIDATE : 0) | (contribution.covered ? FLAG_COVERED : 0) | (contribution.eligible ? FLAG_ELIGIBLE : 0) | (contribution.hit ? FLAG_HIT : 0) | (contribution.category === undefined ? 0 : FLAG_CATEGORY);
  out.byte(flags);
  if (contribution.category !== undefined) out.string(contribution.category);
  out.double(contribution.amount);
  writeShares(out, contribution.money);
  writeReasonCounts(out, contribution.exclusions);
  out.double(contribution.asOf);
}

/** A contribution of a known group: built in one object, in finalizeContribution's field order (one shape for every contribution). */
function readContribution(input: BinaryReader, metricId: MetricId, scope: Scope, cohort: Cohort, groupKey: string): Contribution {
  const flags = input.byte();
  const category = (flags & FLAG_CATEGORY) === 0 ? undefined : input.string();
  const amount = input.double();
  const money = readShares(input);
  const exclusions = readReasonCounts(input);
  const asOf = input.double();
  return {
    metricId,
    scope,
    cohort,
    groupKey,
    candidate: (flags & FLAG_CANDIDATE) !== 0,
    covered: (flags & FLAG_COVERED) !== 0,
    eligible: (flags & FLAG_ELIGIBLE) !== 0,
    hit: (flags & FLAG_HIT) !== 0,
    category,
    amount,
    money,
    exclusions,
    asOf,
  };
}

/** A unit's contributions, naming their groups by the store's ids (see GroupKeyIds). */
export function writeContributions(out: BinaryWriter, contributions: readonly Contribution[], ids: GroupKeyIds): void {
  out.unsigned(contributions.length);
  for (let index = 0; index < contributions.length; index++) {
    const contribution = contributions[index] as Contribution;
    out.unsigned(ids.idOf(contribution.groupKey));
    writeContributionBody(out, contribution);
  }
}

export function readContributions(input: BinaryReader, ids: GroupKeyIds): readonly Contribution[] {
  const size = input.unsigned();
  const contributions: Contribution[] = [];
  for (let index = 0; index < size; index++) {
    const groupKey = ids.keyOf(input.unsigned());
    const { metricId, scope, cohort } = identityOf(groupKey);
    contributions.push(readContribution(input, metricId, scope, cohort, groupKey));
  }
  return contributions;
}

/** A unit table's contributions (see writeContributions). */
export function contributionsCodec(ids: GroupKeyIds): ValueCodec<readonly Contribution[]> {
  return {
    encode: (contributions) => {
      const out = startValue();
      writeContributions(out, contributions, ids);
      return out.finish();
    },
    decode: (bytes) => decodeWith(bytes, (input) => readContributions(input, ids)),
  };
}

/** A group's sums; its identity comes back from its key (the table's key is the result key). */
export function groupCodec(): ValueCodec<GroupAggregate> {
  return {
    encode: (group) =>
      encodeWith((out) => {
        out.string(group.sample.groupKey);
        for (const count of [group.units, group.candidates, group.covered, group.eligible, group.hits]) out.integer(count);
        writeExact(out, group.amount.exact);
        writeCounts(out, group.categories, group.categories.size);
        writeCounts(out, group.exclusions, group.exclusions.size);
        out.unsigned(group.money.size);
        for (const [key, total] of group.money) {
          out.string(key);
          out.string(total.currency);
          out.string(total.source);
          out.string(total.costBasis);
          out.integer(total.units);
          writeExact(out, total.amountMinor.exact);
        }
        out.boolean(group.latest !== undefined);
        if (group.latest !== undefined) out.double(group.latest);
      }),
    decode: (bytes) =>
      decodeWith(bytes, (input) => {
        const groupKey = input.string();
        const group = new GroupAggregate(sampleOf(groupKey));
        group.units = input.integer();
        group.candidates = input.integer();
        group.covered = input.integer();
        group.eligible = input.integer();
        group.hits = input.integer();
        group.amount.add(readExact(input));
        for (const [key, count] of readCounts(input)) group.categories.set(key, count);
        for (const [key, count] of readCounts(input)) group.exclusions.set(key, count);
        const slices = input.unsigned();
        for (let index = 0; index < slices; index++) {
          const key = input.string();
          const total: MoneySliceTotal = { currency: input.string(), source: input.string(), costBasis: input.string(), units: input.integer(), amountMinor: ExactSum.of(readExact(input)) };
          group.money.set(key, total);
        }
        group.latest = input.boolean() ? input.double() : undefined;
        return group;
      }),
  };
}

/** The sample a group renders its identity from: only metricId, scope, cohort and groupKey are read. */
function sampleOf(groupKey: string): Contribution {
  const { metricId, scope, cohort } = identityOf(groupKey);
  return { metricId, scope, cohort, groupKey, candidate: false, covered: false, eligible: false, hit: false, category: undefined, amount: 0, money: [], exclusions: {}, asOf: Number.NEGATIVE_INFINITY };
}

/**
 * A contributions changelog record: the configuration identity the contributions were computed
 * under (a member of another identity ignores it), then the contributions. Their groups are
 * written as their parts, each distinct scope and cohort once per record, the metric as its
 * position in METRIC_IDS (fixed by the identity's layout version): a unit's dozen contributions
 * share a scope and one or two cohorts, and their result keys in full were about 200 bytes each,
 * most of the changelog (630 MB of records for 784k facts).
 */
export function encodeUnitRecord(identity: string, contributions: readonly Contribution[]): Buffer {
  // A unit's contributions share one or two scopes and cohorts: positions found by a scan of short
  // arrays, not Maps (this runs for every changed unit after every flush).
  const scopes: Scope[] = [];
  const cohorts: Cohort[] = [];
  for (let index = 0; index < contributions.length; index++) {
    const { scope, cohort } = contributions[index] as Contribution;
    if (!scopes.includes(scope)) scopes.push(scope);
    if (!cohorts.includes(cohort)) cohorts.push(cohort);
  }
  return encodeWith((out) => {
    out.string(identity);
    out.unsigned(scopes.length);
    for (let index = 0; index < scopes.length; index++) {
      const scope = scopes[index] as Scope;
      if (scope.kind === "window") {
        out.byte(0);
        out.string(scope.start);
        out.string(scope.end);
      } else {
        out.byte(1);
        out.string(scope.snapshot_id);
        out.string(scope.cutoff);
      }
    }
    out.unsigned(cohorts.length);
    for (let index = 0; index < cohorts.length; index++) {
      const cohort = cohorts[index] as Cohort;
      let coordinates = 0;
      for (const _coordinate in cohort) coordinates++;
      out.unsigned(coordinates);
      for (const coordinate in cohort) {
        out.string(coordinate);
        out.string(cohort[coordinate] as string);
      }
    }
    out.unsigned(contributions.length);
    for (let index = 0; index < contributions.length; index++) {
      const contribution = contributions[index] as Contribution;
      out.byte(METRIC_IDS.indexOf(contribution.metricId));
      out.unsigned(scopes.indexOf(contribution.scope));
      out.unsigned(cohorts.indexOf(contribution.cohort));
      writeContributionBody(out, contribution);
    }
  });
}

/** A unit record's scopes and cohorts, decoded and interned. */
interface UnitRecordParts {
  readonly scopes: readonly Scope[];
  readonly cohorts: readonly Cohort[];
}

/**
 * Unit records' scope-and-cohort sections, decoded, by their bytes: a member loading the log reads
 * a few thousand distinct ones hundreds of thousands of times, and decoding each (strings, dates
 * parsed, cohorts sorted and interned) was most of the load's time. Bounded as the engine's
 * snapshot scopes are (scope.ts): a kept snapshot scope keeps the result keys made for it alive.
 */
const unitRecordParts = new BoundedMemo<string, UnitRecordParts>(1_024);

/** The record's contributions, or undefined when it was written under another identity (its body is then not read: another layout may have written it). */
export function decodeUnitRecord(bytes: Buffer, identity: string): readonly Contribution[] | undefined {
  const input = new BinaryReader(bytes);
  if (input.string() !== identity) return undefined;
  const partsStart = input.offset;
  const scopeCount = input.unsigned();
  for (let index = 0; index < scopeCount; index++) {
    input.byte();
    input.skipString();
    input.skipString();
  }
  const cohortCount = input.unsigned();
  for (let index = 0; index < cohortCount; index++) {
    const size = input.unsigned();
    for (let coordinate = 0; coordinate < 2 * size; coordinate++) input.skipString();
  }
  const partsKey = bytes.toString("latin1", partsStart, input.offset);
  let parts = unitRecordParts.get(partsKey);
  if (parts === undefined) unitRecordParts.set(partsKey, (parts = readUnitRecordParts(new BinaryReader(bytes, partsStart))));
  const { scopes, cohorts } = parts;
  const part = <T>(found: readonly T[], position: number, what: string): T => {
    const value = found[position];
    if (value === undefined) throw new InternalRecordError(`${what} ${String(position)} of ${String(found.length)}`);
    return value;
  };
  const size = input.unsigned();
  const contributions: Contribution[] = [];
  for (let index = 0; index < size; index++) {
    const metricId = part(METRIC_IDS, input.byte(), "metric");
    const scope = part(scopes, input.unsigned(), "scope");
    const cohort = part(cohorts, input.unsigned(), "cohort");
    contributions.push(readContribution(input, metricId, scope, cohort, groupKeyOf(metricId, scope, cohort)));
  }
  input.end();
  return contributions;
}

/**
 * Scopes and cohorts interned as the engine's own (scope.ts): a member loading the log holds tens of
 * thousands of units in its cache, and a copy of each group's key per contribution (about 200
 * bytes) took the heap past 1 GiB at 1M facts.
 */
function readUnitRecordParts(input: BinaryReader): UnitRecordParts {
  const scopes = Array.from({ length: input.unsigned() }, (): Scope => {
    const kind = input.byte();
    if (kind === 0) return internedWindow(input.string(), input.string());
    if (kind === 1) return internedSnapshot(input.string(), input.string());
    throw new InternalRecordError(`scope kind ${String(kind)}`);
  });
  const cohorts = Array.from({ length: input.unsigned() }, (): Cohort => {
    const coordinates: Record<string, string> = {};
    const size = input.unsigned();
    for (let index = 0; index < size; index++) coordinates[input.string()] = input.string();
    return size === 0 ? NO_COHORT : cohortOf(coordinates);
  });
  return { scopes, cohorts };
}

/** The engine's interned window with these bounds; the bounds as read when they are not one of its windows. */
function internedWindow(start: string, end: string): Scope {
  const startMillis = Date.parse(start);
  const size = Date.parse(end) - startMillis;
  const interned = Number.isFinite(startMillis) && size > 0 ? windowScopeOf(startMillis, size) : undefined;
  return interned !== undefined && interned.start === start && interned.end === end ? interned : Object.freeze({ kind: "window", start, end });
}

/** The engine's interned snapshot scope; the one read when its cutoff is not in the engine's form. */
function internedSnapshot(snapshotId: string, cutoff: string): Scope {
  const cutoffMillis = Date.parse(cutoff);
  const interned = Number.isFinite(cutoffMillis) ? snapshotScopeOf(snapshotId, cutoffMillis) : undefined;
  return interned !== undefined && interned.cutoff === cutoff ? interned : Object.freeze({ kind: "snapshot", snapshot_id: snapshotId, cutoff });
}

/*
 * The partitioned engine's stage records (src/metrics/partitioned/stage-records.ts), in the same
 * primitive forms: what its topics carry between stages and what its stage stores keep.
 */

/** A fact version on its way from the fact ledger to the domain ledger. */
export const claimVersionCodec: ValueCodec<ClaimVersion> = {
  encode: ({ fact, origin, live }) =>
    encodeWith((out) => {
      out.boolean(live);
      writeOrigin(out, origin ?? undefined);
      writeFact(out, fact);
    }),
  decode: (bytes) => decodeWith(bytes, (input) => ({ live: input.boolean(), origin: readOrigin(input) ?? null, fact: readFact(input) as MetricFact })),
};

/** An admitted fact with where it was read. */
export const admissionCodec: ValueCodec<Admission> = {
  encode: ({ fact, origin }) =>
    encodeWith((out) => {
      writeOrigin(out, origin ?? undefined);
      writeFact(out, fact);
    }),
  decode: (bytes) => decodeWith(bytes, (input) => ({ origin: readOrigin(input) ?? null, fact: readFact(input) as MetricFact })),
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
      if (tag !== MEMBER_READING && tag !== TASK_ID_READING) throw new InternalRecordError(`join reading tag ${String(tag)}`);
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
  const tuples = Array.from({ length: input.unsigned() }, () => cohortOf(Object.fromEntries(Array.from({ length: input.unsigned() }, () => [input.string(), input.string()]))));
  return { direct, nondirect, unreadable, asOf, tuples };
}
