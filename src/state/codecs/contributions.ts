import { METRIC_IDS, type MetricId } from "../../catalog/metric-definitions.ts";
import { BinaryReader, InternalRecordError, type BinaryWriter } from "../../codec/binary-form.ts";
import type { Contribution } from "../../metrics/contribution.ts";
import { ExactSum } from "../../metrics/exact-sum.ts";
import { GroupAggregate, type MoneySliceTotal } from "../../metrics/group-aggregate.ts";
import { BoundedMemo } from "../../metrics/memo-map.ts";
import type { Cohort, Scope } from "../../contract/result-record.ts";
import { cohortOf, groupKeyOf, NO_COHORT, snapshotScopeOf, windowScopeOf } from "../../metrics/scope.ts";
import type { GroupKeyIds } from "../group-key-ids.ts";
import type { ValueCodec } from "../value-codec.ts";
import {
  decodeWith,
  encodeWith,
  readCounts,
  readExact,
  readReasonCounts,
  readShares,
  startValue,
  writeCounts,
  writeExact,
  writeReasonCounts,
  writeShares,
} from "./values.ts";

/*
 * Contributions and group sums on disk, and the contributions changelog's unit records, in the
 * primitive forms of values.ts.
 */

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
  const parsed = JSON.parse(groupKey) as {
    cohort: Record<string, string>;
    metric_id: MetricId;
    scope: Record<string, string>;
  };
  // The scope's own field order (scope.ts), not the key's canonical order: rendered results show it.
  const scope = (
    parsed.scope.kind === "window"
      ? { kind: "window", start: parsed.scope.start, end: parsed.scope.end }
      : { kind: "snapshot", snapshot_id: parsed.scope.snapshot_id, cutoff: parsed.scope.cutoff }
  ) as Scope;
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
    (contribution.candidate ? FLAG_CANDIDATE : 0) |
    (contribution.covered ? FLAG_COVERED : 0) |
    (contribution.eligible ? FLAG_ELIGIBLE : 0) |
    (contribution.hit ? FLAG_HIT : 0) |
    (contribution.category === undefined ? 0 : FLAG_CATEGORY);
  out.byte(flags);
  if (contribution.category !== undefined) out.string(contribution.category);
  out.double(contribution.amount);
  writeShares(out, contribution.money);
  writeReasonCounts(out, contribution.exclusions);
  out.double(contribution.asOf);
}

/** A contribution of a known group: built in one object, in finalizeContribution's field order (one shape for every contribution). */
function readContribution(
  input: BinaryReader,
  metricId: MetricId,
  scope: Scope,
  cohort: Cohort,
  groupKey: string,
): Contribution {
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
        for (const count of [group.units, group.candidates, group.covered, group.eligible, group.hits])
          out.integer(count);
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
          const total: MoneySliceTotal = {
            currency: input.string(),
            source: input.string(),
            costBasis: input.string(),
            units: input.integer(),
            amountMinor: ExactSum.of(readExact(input)),
          };
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
  return {
    metricId,
    scope,
    cohort,
    groupKey,
    candidate: false,
    covered: false,
    eligible: false,
    hit: false,
    category: undefined,
    amount: 0,
    money: [],
    exclusions: {},
    asOf: Number.NEGATIVE_INFINITY,
  };
}

/**
 * A contributions changelog record: the configuration identity the contributions were computed
 * under (a member of another identity ignores it), then the contributions. Their groups are
 * written as their parts, each distinct scope and cohort once per record, the metric as its
 * position in METRIC_IDS (fixed by the identity's layout version): a unit's dozen contributions
 * share a scope and one or two cohorts, and their result keys in full were most of the changelog.
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
  if (parts === undefined)
    unitRecordParts.set(partsKey, (parts = readUnitRecordParts(new BinaryReader(bytes, partsStart))));
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
 * thousands of units in its cache, and a copy of each group's key per contribution would not fit.
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
  return interned !== undefined && interned.start === start && interned.end === end
    ? interned
    : Object.freeze({ kind: "window", start, end });
}

/** The engine's interned snapshot scope; the one read when its cutoff is not in the engine's form. */
function internedSnapshot(snapshotId: string, cutoff: string): Scope {
  const cutoffMillis = Date.parse(cutoff);
  const interned = Number.isFinite(cutoffMillis) ? snapshotScopeOf(snapshotId, cutoffMillis) : undefined;
  return interned !== undefined && interned.cutoff === cutoff
    ? interned
    : Object.freeze({ kind: "snapshot", snapshot_id: snapshotId, cutoff });
}
