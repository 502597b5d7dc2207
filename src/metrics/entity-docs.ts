import type { Cost, DeliverySummary, ModelCall, Packet, Repair, TaskSnapshot } from "../contract/facts.ts";
import type { Contribution } from "./contribution.ts";
import type { LinkTable, Table } from "./tables.ts";

/*
 * The engine's index and unit state, one document per entity (docs/engine-state.md §0, "Entity
 * documents"). Everything a unit reads through one id, and the unit's own contributions, sit in
 * one value of the state store: a call with its costs; a Delivery with its summaries, direct
 * costs, the ids of its calls, its repairs and the task units listing it; a task_id with its calls'
 * ids, its repairs and the task units naming it; a packet with its repairs; a snapshot. A fact
 * then touches one to three entries of the store instead of a link entry, a link header and a unit
 * entry per table it is in, and a unit's inputs are one read, not a read per link.
 */

/** A task unit reading an entity (a member Delivery, a task_id) at its snapshot's cutoff: facts after it are never read by that unit. */
export interface TaskReader {
  readonly unit: string;
  readonly cutoff: number;
}

const NO_CONTRIBUTIONS: readonly Contribution[] = Object.freeze([]);

/**
 * A unit's contributions as the store wrote them, decoded only when read: a document is read far
 * more often for its facts (every fact it links) than for its unit's contributions (a recomputation).
 */
export interface StoredContributions {
  readonly stored: true;
  /** How many contributions (empty documents are told apart without decoding). */
  readonly length: number;
  decode(): readonly Contribution[];
}

/** A document's contributions: decoded, or still as stored. */
export type DocContributions = readonly Contribution[] | StoredContributions;

/** The contributions of a document, decoded once (the document then keeps the decoded ones). */
export function decodedContributions(doc: { contributions: DocContributions }): readonly Contribution[] {
  const held = doc.contributions;
  if (!("stored" in held)) return held;
  const decoded = held.decode();
  doc.contributions = decoded;
  return decoded;
}

/** A call: the admitted model_call of its call_id (if any), the costs linked to it, its unit's contributions. */
export interface CallDoc {
  call: ModelCall | undefined;
  costs: Cost[] | undefined;
  contributions: DocContributions;
  /** Which lists have members past the inline ones (see DocList). */
  spilled: number;
}

/** A Delivery: its summaries, the costs linked to it directly, its calls (by call_id), its repairs, the task units listing it. */
export interface DeliveryDoc {
  summaries: DeliverySummary[] | undefined;
  costs: Cost[] | undefined;
  calls: string[] | undefined;
  repairs: Repair[] | undefined;
  readers: TaskReader[] | undefined;
  contributions: DocContributions;
  spilled: number;
}

/** A task_id: its calls (by call_id), its repairs, the task units naming it. It is no unit of its own. */
export interface TaskIdDoc {
  calls: string[] | undefined;
  repairs: Repair[] | undefined;
  readers: TaskReader[] | undefined;
  spilled: number;
}

/** A packet: the admitted packet (if any), its repairs, its unit's contributions. */
export interface PacketDoc {
  packet: Packet | undefined;
  repairs: Repair[] | undefined;
  contributions: DocContributions;
  spilled: number;
}

/** A snapshot: the admitted snapshot (if any), the contributions of its no-task record. */
export interface SnapshotDoc {
  snapshot: TaskSnapshot | undefined;
  contributions: DocContributions;
}

export const newCallDoc = (): CallDoc => ({
  call: undefined,
  costs: undefined,
  contributions: NO_CONTRIBUTIONS,
  spilled: 0,
});
export const newDeliveryDoc = (): DeliveryDoc => ({
  summaries: undefined,
  costs: undefined,
  calls: undefined,
  repairs: undefined,
  readers: undefined,
  contributions: NO_CONTRIBUTIONS,
  spilled: 0,
});
export const newTaskIdDoc = (): TaskIdDoc => ({ calls: undefined, repairs: undefined, readers: undefined, spilled: 0 });
export const newPacketDoc = (): PacketDoc => ({
  packet: undefined,
  repairs: undefined,
  contributions: NO_CONTRIBUTIONS,
  spilled: 0,
});
export const newSnapshotDoc = (): SnapshotDoc => ({ snapshot: undefined, contributions: NO_CONTRIBUTIONS });

const none = (list: readonly unknown[] | undefined): boolean => list === undefined || list.length === 0;

export const isEmptyCallDoc = (doc: CallDoc): boolean =>
  doc.call === undefined && none(doc.costs) && doc.contributions.length === 0 && doc.spilled === 0;
export const isEmptyDeliveryDoc = (doc: DeliveryDoc): boolean =>
  none(doc.summaries) &&
  none(doc.costs) &&
  none(doc.calls) &&
  none(doc.repairs) &&
  none(doc.readers) &&
  doc.contributions.length === 0 &&
  doc.spilled === 0;
export const isEmptyTaskIdDoc = (doc: TaskIdDoc): boolean =>
  none(doc.calls) && none(doc.repairs) && none(doc.readers) && doc.spilled === 0;
export const isEmptyPacketDoc = (doc: PacketDoc): boolean =>
  doc.packet === undefined && none(doc.repairs) && doc.contributions.length === 0 && doc.spilled === 0;
export const isEmptySnapshotDoc = (doc: SnapshotDoc): boolean =>
  doc.snapshot === undefined && doc.contributions.length === 0;

/** About how many bytes a new document takes encoded, for the cache's count until its first commit measures it. */
const NEW_DOC_BYTES = 48;

/**
 * One kind of entity document in a table of the state store. A document read for a change is
 * marked dirty (`edit`), so the next commit writes it; one left empty is deleted (`settle`).
 */
export class DocTable<D> {
  private readonly table: Table<D>;
  private readonly create: () => D;
  private readonly isEmpty: (doc: D) => boolean;

  constructor(table: Table<D>, create: () => D, isEmpty: (doc: D) => boolean) {
    this.table = table;
    this.create = create;
    this.isEmpty = isEmpty;
  }

  get(id: string): D | undefined {
    return this.table.get(id);
  }

  /** The document to change (created if absent), marked for the next commit; `grows` estimates the bytes the change adds. */
  edit(id: string, grows = 0): D {
    const doc = this.table.update(id, grows);
    if (doc !== undefined) return doc;
    const created = this.create();
    this.table.set(id, created, NEW_DOC_BYTES + grows);
    return created;
  }

  /** After a change: a document left with nothing is deleted. */
  settle(id: string, doc: D): void {
    if (this.isEmpty(doc)) this.table.delete(id);
  }

  scan(): Iterable<[string, D]> {
    return this.table.scan();
  }
}

/*
 * Members of a document's lists, unique by key. Lists are arrays (a document decodes into a few
 * small arrays, not Maps); an array past INDEXED_AT members gets a position index on the side, so
 * a long agent run's Delivery with thousands of calls still adds and removes in constant time.
 */

const INDEXED_AT = 32;
const positions = new WeakMap<readonly unknown[], Map<string, number>>();

function indexOf<V>(list: readonly V[], key: string, keyOf: (value: V) => string): number {
  if (list.length < INDEXED_AT) {
    for (let position = 0; position < list.length; position++) if (keyOf(list[position] as V) === key) return position;
    return -1;
  }
  let index = positions.get(list);
  if (index === undefined) {
    index = new Map();
    for (let position = 0; position < list.length; position++) index.set(keyOf(list[position] as V), position);
    positions.set(list, index);
  }
  return index.get(key) ?? -1;
}

/** Adds `value` under its key, replacing a member with the same key; returns the list (created when undefined). */
export function putMember<V>(list: V[] | undefined, value: V, keyOf: (value: V) => string): V[] {
  if (list === undefined) return [value];
  const key = keyOf(value);
  const position = indexOf(list, key, keyOf);
  if (position >= 0) {
    list[position] = value;
    return list;
  }
  list.push(value);
  positions.get(list)?.set(key, list.length - 1);
  return list;
}

/** Removes the member with this key (order is not kept: the last member takes its place); true when one was removed. */
export function dropMember<V>(list: V[] | undefined, key: string, keyOf: (value: V) => string): boolean {
  if (list === undefined) return false;
  const position = indexOf(list, key, keyOf);
  if (position < 0) return false;
  const last = list.pop() as V;
  const index = positions.get(list);
  index?.delete(key);
  if (position < list.length) {
    list[position] = last;
    index?.set(keyOf(last), position);
  }
  return true;
}

export function findMember<V>(list: readonly V[] | undefined, key: string, keyOf: (value: V) => string): V | undefined {
  if (list === undefined) return undefined;
  const position = indexOf(list, key, keyOf);
  return position < 0 ? undefined : list[position];
}

export const byFactId = (fact: { readonly fact_id: string }): string => fact.fact_id;
export const byItself = (id: string): string => id;
export const byUnit = (reader: TaskReader): string => reader.unit;

/**
 * Members a document holds in itself: past this many, a list's further members go to a link
 * table of their own (one entry each). A document is rewritten whole at every commit that changes
 * it, so a long agent run's Delivery would otherwise rewrite every call id it ever had at each
 * commit; its inline part stays small, and each commit writes only the new members.
 */
export const INLINE_MEMBERS = 64;

const NO_MEMBERS: readonly never[] = Object.freeze([]);

/**
 * One list of a kind of document: its members inline up to INLINE_MEMBERS, the rest in `overflow`
 * under the document's key (the document's `spilled` has the list's bit while it has any there).
 * Callers edit the document (DocTable.edit) before `put` or `drop`, and settle it after.
 */
export class DocList<D extends { spilled: number }, V> {
  private readonly bit: number;
  private readonly read: (doc: D) => V[] | undefined;
  private readonly write: (doc: D, list: V[] | undefined) => void;
  private readonly overflow: LinkTable<V>;
  readonly keyOf: (value: V) => string;
  private readonly inline: number;

  /** `inline`: how many members the document holds itself (INLINE_MEMBERS; tests spill with fewer). Any value reads any store. */
  constructor(
    bit: number,
    read: (doc: D) => V[] | undefined,
    write: (doc: D, list: V[] | undefined) => void,
    overflow: LinkTable<V>,
    keyOf: (value: V) => string,
    inline = INLINE_MEMBERS,
  ) {
    this.bit = bit;
    this.read = read;
    this.write = write;
    this.overflow = overflow;
    this.keyOf = keyOf;
    this.inline = inline;
  }

  /** Adds `value`, or replaces the member with its key. */
  put(doc: D, docKey: string, value: V, encodedBytes: number): void {
    const key = this.keyOf(value);
    const list = this.read(doc);
    if (findMember(list, key, this.keyOf) !== undefined) {
      this.write(doc, putMember(list, value, this.keyOf));
      return;
    }
    const spilled = (doc.spilled & this.bit) !== 0;
    if (spilled && this.overflow.member(docKey, key) !== undefined) {
      this.overflow.add(docKey, key, value, encodedBytes);
      return;
    }
    if ((list?.length ?? 0) < this.inline) {
      this.write(doc, putMember(list, value, this.keyOf));
      return;
    }
    doc.spilled |= this.bit;
    this.overflow.add(docKey, key, value, encodedBytes);
  }

  /** Removes the member with this key, wherever it is. */
  drop(doc: D, docKey: string, key: string): void {
    if (dropMember(this.read(doc), key, this.keyOf) || (doc.spilled & this.bit) === 0) return;
    this.overflow.delete(docKey, key);
    if (this.overflow.members(docKey).size === 0) doc.spilled &= ~this.bit;
  }

  /** Every member: the inline ones, then those in the overflow table. */
  all(doc: D | undefined, docKey: string): readonly V[] {
    if (doc === undefined) return NO_MEMBERS;
    const inline = this.read(doc) ?? NO_MEMBERS;
    if ((doc.spilled & this.bit) === 0) return inline;
    return [...inline, ...this.overflow.get(docKey)];
  }
}
