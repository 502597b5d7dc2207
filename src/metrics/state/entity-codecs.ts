import type { Cost, DeliverySummary, MetricFact, ModelCall, Packet, Repair, TaskSnapshot } from "../../contract/facts.ts";
import { InternalRecordError, type BinaryReader, type BinaryWriter } from "../../kafka/serde/binary-form.ts";
import { readFact } from "../../kafka/serde/fact-layout.ts";
import type { CallDoc, DeliveryDoc, PacketDoc, SnapshotDoc, TaskIdDoc, TaskReader } from "../entity-docs.ts";
import { decodeWith, encodeWith, factBytes, forgetEncodedFacts, readContributions, writeContributions } from "./codecs.ts";
import type { GroupKeyIds } from "./group-key-ids.ts";
import type { ValueCodec } from "./state-store.ts";

/*
 * The entity documents on disk (src/metrics/entity-docs.ts): facts in the engine-facts layout,
 * call ids and task readers as strings, contributions naming their groups by the store's ids.
 * Each list is written as its length (0 when absent) and read back as undefined when empty, so a
 * document reads back equal to the one written. A fact stored in several documents (a call's cost
 * in its call's, a repair in its packet's and its Delivery's) is encoded once per commit.
 */

/** The facts' encodings, taken before the shared writer starts (`factBytes` uses it too). */
function encodedFacts(facts: readonly MetricFact[] | undefined): readonly Buffer[] {
  return facts === undefined ? [] : facts.map(factBytes);
}

function writeEncoded(out: BinaryWriter, encoded: readonly Buffer[]): void {
  out.unsigned(encoded.length);
  for (const bytes of encoded) out.raw(bytes);
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
  out.unsigned(values?.length ?? 0);
  for (const value of values ?? []) out.string(value);
}

function readStrings(input: BinaryReader): string[] | undefined {
  const count = input.unsigned();
  if (count === 0) return undefined;
  const values: string[] = [];
  for (let index = 0; index < count; index++) values.push(input.string());
  return values;
}

function writeReaders(out: BinaryWriter, readers: readonly TaskReader[] | undefined): void {
  out.unsigned(readers?.length ?? 0);
  for (const { unit, cutoff } of readers ?? []) {
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
      return encodeWith((out) => {
        writeOptionalFact(out, call);
        writeEncoded(out, costs);
        writeContributions(out, doc.contributions, ids);
      });
    },
    decode: (bytes) =>
      decodeWith(bytes, (input) => ({
        call: input.boolean() ? readTyped<ModelCall>(input, "model_call") : undefined,
        costs: readFacts<Cost>(input, "cost"),
        contributions: readContributions(input, ids),
      })),
    committed: forgetEncodedFacts,
  };
}

export function deliveryDocCodec(ids: GroupKeyIds): ValueCodec<DeliveryDoc> {
  return {
    encode: (doc) => {
      const summaries = encodedFacts(doc.summaries);
      const costs = encodedFacts(doc.costs);
      const repairs = encodedFacts(doc.repairs);
      return encodeWith((out) => {
        writeEncoded(out, summaries);
        writeEncoded(out, costs);
        writeStrings(out, doc.calls);
        writeEncoded(out, repairs);
        writeReaders(out, doc.readers);
        writeContributions(out, doc.contributions, ids);
      });
    },
    decode: (bytes) =>
      decodeWith(bytes, (input) => ({
        summaries: readFacts<DeliverySummary>(input, "delivery_summary"),
        costs: readFacts<Cost>(input, "cost"),
        calls: readStrings(input),
        repairs: readFacts<Repair>(input, "repair"),
        readers: readReaders(input),
        contributions: readContributions(input, ids),
      })),
    committed: forgetEncodedFacts,
  };
}

export const taskIdDocCodec: ValueCodec<TaskIdDoc> = {
  encode: (doc) => {
    const repairs = encodedFacts(doc.repairs);
    return encodeWith((out) => {
      writeStrings(out, doc.calls);
      writeEncoded(out, repairs);
      writeReaders(out, doc.readers);
    });
  },
  decode: (bytes) => decodeWith(bytes, (input) => ({ calls: readStrings(input), repairs: readFacts<Repair>(input, "repair"), readers: readReaders(input) })),
  committed: forgetEncodedFacts,
};

export function packetDocCodec(ids: GroupKeyIds): ValueCodec<PacketDoc> {
  return {
    encode: (doc) => {
      const packet = doc.packet === undefined ? undefined : factBytes(doc.packet);
      const repairs = encodedFacts(doc.repairs);
      return encodeWith((out) => {
        writeOptionalFact(out, packet);
        writeEncoded(out, repairs);
        writeContributions(out, doc.contributions, ids);
      });
    },
    decode: (bytes) =>
      decodeWith(bytes, (input) => ({
        packet: input.boolean() ? readTyped<Packet>(input, "packet") : undefined,
        repairs: readFacts<Repair>(input, "repair"),
        contributions: readContributions(input, ids),
      })),
    committed: forgetEncodedFacts,
  };
}

export function snapshotDocCodec(ids: GroupKeyIds): ValueCodec<SnapshotDoc> {
  return {
    encode: (doc) => {
      const snapshot = doc.snapshot === undefined ? undefined : factBytes(doc.snapshot);
      return encodeWith((out) => {
        writeOptionalFact(out, snapshot);
        writeContributions(out, doc.contributions, ids);
      });
    },
    decode: (bytes) =>
      decodeWith(bytes, (input) => ({
        snapshot: input.boolean() ? readTyped<TaskSnapshot>(input, "task_snapshot") : undefined,
        contributions: readContributions(input, ids),
      })),
    committed: forgetEncodedFacts,
  };
}
