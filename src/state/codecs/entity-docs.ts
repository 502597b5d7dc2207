import type {
  Cost,
  DeliverySummary,
  MetricFact,
  ModelCall,
  Packet,
  Repair,
  TaskSnapshot,
} from "../../contract/facts.ts";
import { InternalRecordError, type BinaryReader, type BinaryWriter } from "../../codec/binary-form.ts";
import { readFact } from "../../codec/fact-layout.ts";
import type { CallDoc, DeliveryDoc, PacketDoc, SnapshotDoc, TaskIdDoc, TaskReader } from "../../metrics/entity-docs.ts";
import { readDocContributions, writeDocContributions } from "./stored-contributions.ts";
import { decodeWith, factBytes, forgetEncodedFacts, startValue } from "./values.ts";
import type { GroupKeyIds } from "../group-key-ids.ts";
import type { ValueCodec } from "../value-codec.ts";

/*
 * The entity documents on disk (src/metrics/entity-docs.ts): facts in the engine-facts layout,
 * call ids and task readers as strings, contributions naming their groups by the store's ids.
 * Each list is written as its length (0 when absent) and read back as undefined when empty, so a
 * document reads back equal to the one written. A fact stored in several documents (a call's cost
 * in its call's, a repair in its packet's and its Delivery's) is encoded once per commit.
 */

/** The facts' encodings, taken before the shared writer starts (`factBytes` uses it too). */
function encodedFacts(facts: readonly MetricFact[] | undefined): readonly Buffer[] {
  if (facts === undefined) return NO_BYTES;
  const encoded: Buffer[] = [];
  for (let index = 0; index < facts.length; index++) encoded.push(factBytes(facts[index] as MetricFact));
  return encoded;
}

const NO_BYTES: readonly Buffer[] = Object.freeze([]);

function writeEncoded(out: BinaryWriter, encoded: readonly Buffer[]): void {
  out.unsigned(encoded.length);
  for (let index = 0; index < encoded.length; index++) out.raw(encoded[index] as Buffer);
}

function readFacts<V extends MetricFact>(input: BinaryReader, type: V["type"]): V[] | undefined {
  const count = input.unsigned();
  if (count === 0) return undefined;
  const facts: V[] = [];
  for (let index = 0; index < count; index++) facts.push(readTyped<V>(input, type));
  return facts;
}

function readTyped<V extends MetricFact>(input: BinaryReader, type: V["type"]): V {
  const fact = readFact(input);
  if (fact.type !== type) throw new InternalRecordError(`entity document holds a ${fact.type} where a ${type} belongs`);
  return fact as V;
}

function writeOptionalFact(out: BinaryWriter, encoded: Buffer | undefined): void {
  out.boolean(encoded !== undefined);
  if (encoded !== undefined) out.raw(encoded);
}

function writeStrings(out: BinaryWriter, values: readonly string[] | undefined): void {
  if (values === undefined) {
    out.unsigned(0);
    return;
  }
  out.unsigned(values.length);
  for (let index = 0; index < values.length; index++) out.string(values[index] as string);
}

function readStrings(input: BinaryReader): string[] | undefined {
  const count = input.unsigned();
  if (count === 0) return undefined;
  const values: string[] = [];
  for (let index = 0; index < count; index++) values.push(input.string());
  return values;
}

function writeReaders(out: BinaryWriter, readers: readonly TaskReader[] | undefined): void {
  if (readers === undefined) {
    out.unsigned(0);
    return;
  }
  out.unsigned(readers.length);
  for (let index = 0; index < readers.length; index++) {
    const { unit, cutoff } = readers[index] as TaskReader;
    out.string(unit);
    out.double(cutoff);
  }
}

function readReaders(input: BinaryReader): TaskReader[] | undefined {
  const count = input.unsigned();
  if (count === 0) return undefined;
  const readers: TaskReader[] = [];
  for (let index = 0; index < count; index++) readers.push({ unit: input.string(), cutoff: input.double() });
  return readers;
}

export function callDocCodec(ids: GroupKeyIds): ValueCodec<CallDoc> {
  return {
    encode: (doc) => {
      const call = doc.call === undefined ? undefined : factBytes(doc.call);
      const costs = encodedFacts(doc.costs);
      const out = startValue();
      out.unsigned(doc.spilled);
      writeOptionalFact(out, call);
      writeEncoded(out, costs);
      writeDocContributions(out, doc.contributions, ids);
      return out.finish();
    },
    decode: (bytes) =>
      decodeWith(bytes, (input): CallDoc => {
        // Read in the encoding's order, built in newCallDoc's (one object shape for every call document).
        const spilled = input.unsigned();
        const call = input.boolean() ? readTyped<ModelCall>(input, "model_call") : undefined;
        const costs = readFacts<Cost>(input, "cost");
        return { call, costs, contributions: readDocContributions(input, ids), spilled };
      }),
    committed: forgetEncodedFacts,
  };
}

export function deliveryDocCodec(ids: GroupKeyIds): ValueCodec<DeliveryDoc> {
  return {
    encode: (doc) => {
      const summaries = encodedFacts(doc.summaries);
      const costs = encodedFacts(doc.costs);
      const repairs = encodedFacts(doc.repairs);
      const out = startValue();
      out.unsigned(doc.spilled);
      writeEncoded(out, summaries);
      writeEncoded(out, costs);
      writeStrings(out, doc.calls);
      writeEncoded(out, repairs);
      writeReaders(out, doc.readers);
      writeDocContributions(out, doc.contributions, ids);
      return out.finish();
    },
    decode: (bytes) =>
      decodeWith(bytes, (input): DeliveryDoc => {
        const spilled = input.unsigned();
        const summaries = readFacts<DeliverySummary>(input, "delivery_summary");
        const costs = readFacts<Cost>(input, "cost");
        const calls = readStrings(input);
        const repairs = readFacts<Repair>(input, "repair");
        const readers = readReaders(input);
        return { summaries, costs, calls, repairs, readers, contributions: readDocContributions(input, ids), spilled };
      }),
    committed: forgetEncodedFacts,
  };
}

export const taskIdDocCodec: ValueCodec<TaskIdDoc> = {
  encode: (doc) => {
    const repairs = encodedFacts(doc.repairs);
    const out = startValue();
    out.unsigned(doc.spilled);
    writeStrings(out, doc.calls);
    writeEncoded(out, repairs);
    writeReaders(out, doc.readers);
    return out.finish();
  },
  decode: (bytes) =>
    decodeWith(bytes, (input): TaskIdDoc => {
      const spilled = input.unsigned();
      const calls = readStrings(input);
      const repairs = readFacts<Repair>(input, "repair");
      return { calls, repairs, readers: readReaders(input), spilled };
    }),
  committed: forgetEncodedFacts,
};

export function packetDocCodec(ids: GroupKeyIds): ValueCodec<PacketDoc> {
  return {
    encode: (doc) => {
      const packet = doc.packet === undefined ? undefined : factBytes(doc.packet);
      const repairs = encodedFacts(doc.repairs);
      const out = startValue();
      out.unsigned(doc.spilled);
      writeOptionalFact(out, packet);
      writeEncoded(out, repairs);
      writeDocContributions(out, doc.contributions, ids);
      return out.finish();
    },
    decode: (bytes) =>
      decodeWith(bytes, (input): PacketDoc => {
        const spilled = input.unsigned();
        const packet = input.boolean() ? readTyped<Packet>(input, "packet") : undefined;
        const repairs = readFacts<Repair>(input, "repair");
        return { packet, repairs, contributions: readDocContributions(input, ids), spilled };
      }),
    committed: forgetEncodedFacts,
  };
}

export function snapshotDocCodec(ids: GroupKeyIds): ValueCodec<SnapshotDoc> {
  return {
    encode: (doc) => {
      const snapshot = doc.snapshot === undefined ? undefined : factBytes(doc.snapshot);
      const out = startValue();
      writeOptionalFact(out, snapshot);
      writeDocContributions(out, doc.contributions, ids);
      return out.finish();
    },
    decode: (bytes) =>
      decodeWith(bytes, (input) => ({
        snapshot: input.boolean() ? readTyped<TaskSnapshot>(input, "task_snapshot") : undefined,
        contributions: readDocContributions(input, ids),
      })),
    committed: forgetEncodedFacts,
  };
}

/** A task unit reading an entity, as a member of a list's overflow table. */
export const taskReaderCodec: ValueCodec<TaskReader> = {
  encode: (reader) => {
    const out = startValue();
    out.string(reader.unit);
    out.double(reader.cutoff);
    return out.finish();
  },
  decode: (bytes) => decodeWith(bytes, (input) => ({ unit: input.string(), cutoff: input.double() })),
};
