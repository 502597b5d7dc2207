import type { MetricFact } from "../../contract/facts.ts";
import { BinaryReader, BinaryWriter, detachedBytes, InternalRecordError } from "../../codec/binary-form.ts";
import { readFact, writeFact } from "../../codec/fact-layout.ts";
import type { MoneyShare } from "../../metrics/contribution.ts";
import type { StoredVersion } from "../../metrics/fact-ledger.ts";
import type { ValueCodec } from "../value-codec.ts";

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
  decode: (bytes) =>
    decodeWith(bytes, (input) =>
      Array.from({ length: input.unsigned() }, () => ({
        origin: readOrigin(input),
        fact: readFact(input) as MetricFact,
      })),
    ),
  committed: forgetEncodedFacts,
};

/** Where a record was read (a file line or topic coordinates), on its own. */
export const originCodec: ValueCodec<StoredOrigin> = {
  encode: (origin) => encodeWith((out) => writeOrigin(out, origin)),
  decode: (bytes) => decodeWith(bytes, readOrigin),
};

export function writeOrigin(out: BinaryWriter, origin: StoredOrigin): void {
  if (origin === undefined) out.byte(0);
  else if (typeof origin === "number") {
    out.byte(1);
    out.double(origin);
  } else {
    out.byte(2);
    out.string(origin);
  }
}

export function readOrigin(input: BinaryReader): StoredOrigin {
  const tag = input.byte();
  if (tag === 0) return undefined;
  if (tag === 1) return input.double();
  if (tag === 2) return input.string();
  throw new InternalRecordError(`origin tag ${String(tag)}`);
}

export function writeExact(out: BinaryWriter, value: number | bigint): void {
  if (typeof value === "number") {
    out.byte(0);
    out.double(value);
  } else {
    out.byte(1);
    out.string(value.toString());
  }
}

export function readExact(input: BinaryReader): number | bigint {
  const tag = input.byte();
  if (tag === 0) return input.double();
  if (tag === 1) return BigInt(input.string());
  throw new InternalRecordError(`exact number tag ${String(tag)}`);
}

export function writeCounts(out: BinaryWriter, counts: Iterable<readonly [string, number]>, size: number): void {
  out.unsigned(size);
  for (const [key, count] of counts) {
    out.string(key);
    out.integer(count);
  }
}

export function readCounts(input: BinaryReader): [string, number][] {
  return Array.from({ length: input.unsigned() }, () => [input.string(), input.integer()] as [string, number]);
}

/** Money by exact slice (a contribution's, or a join reading's). */
export function writeShares(out: BinaryWriter, shares: readonly MoneyShare[]): void {
  out.unsigned(shares.length);
  // Indexed loops in the codecs' and the engine's hot paths: `for…of` over the frozen empty arrays
  // most values hold falls back to the iterator protocol and allocates per step.
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

export function readShares(input: BinaryReader): readonly MoneyShare[] {
  const size = input.unsigned();
  if (size === 0) return NO_SHARES;
  const shares: MoneyShare[] = [];
  for (let index = 0; index < size; index++)
    shares.push({
      currency: input.string(),
      source: input.string(),
      costBasis: input.string(),
      amountMinor: readExact(input),
    });
  return shares;
}

/** Counts by reason (a contribution's exclusions, the costs a reading left out). Written without building arrays: it runs per contribution. */
export function writeReasonCounts(out: BinaryWriter, counts: Readonly<Record<string, number>>): void {
  let size = 0;
  for (const _reason in counts) size++;
  out.unsigned(size);
  for (const reason in counts) {
    out.string(reason);
    out.integer(counts[reason] as number);
  }
}

export function readReasonCounts(input: BinaryReader): Readonly<Record<string, number>> {
  const size = input.unsigned();
  if (size === 0) return NO_REASONS;
  const counts: Record<string, number> = {};
  // Defined, not assigned: a reason named "__proto__" stays a count (as Object.fromEntries kept it).
  for (let index = 0; index < size; index++)
    Object.defineProperty(counts, input.string(), {
      value: input.integer(),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return counts;
}
