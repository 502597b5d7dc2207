import { BoundedMemo } from "../metrics/memo-map.ts";
import { stringCodec } from "./codecs/values.ts";
import type { Table } from "../metrics/tables.ts";
import type { StateStore } from "./state-store.ts";
import type { ValueCodec } from "./value-codec.ts";
import { InvariantError } from "../errors.ts";

/** The counter's key in its table. */
const NEXT = "next";

const unsignedCodec: ValueCodec<number> = {
  encode: (value) => {
    const bytes = Buffer.allocUnsafe(4);
    bytes.writeUInt32BE(value);
    return bytes;
  },
  decode: (bytes) => bytes.readUInt32BE(0),
};

/**
 * Small numbers for result keys in the stored unit contributions: a result key is about 200 bytes
 * of canonical JSON and a call unit names a dozen, while an id takes one to three bytes.
 *
 * The ids are local to one store and never leave it (the contributions changelog names groups by
 * their parts), so results never depend on them. `assign` runs when a group is made, before any
 * commit encodes contributions naming it: a commit drains the tables in one pass.
 */
export class GroupKeyIds {
  private readonly ids: Table<number>;
  private readonly keys: Table<string>;
  private readonly counter: Table<number>;
  private next: number | undefined;
  /** The ids of the groups in use lately: every stored contribution looks its id up when it is encoded. */
  private readonly recent = new BoundedMemo<string, number>(16_384);

  constructor(state: StateStore) {
    this.ids = state.table("gn\u0000", unsignedCodec);
    this.keys = state.table("gx\u0000", stringCodec);
    this.counter = state.table("gc\u0000", unsignedCodec);
  }

  /** Gives `groupKey` an id if it has none (written at the next commit). */
  assign(groupKey: string): void {
    if (this.recent.get(groupKey) !== undefined || this.ids.get(groupKey) !== undefined) return;
    this.next ??= this.counter.get(NEXT) ?? 0;
    const id = this.next;
    this.next += 1;
    this.ids.set(groupKey, id, 4);
    this.keys.set(String(id), groupKey, groupKey.length);
    this.counter.set(NEXT, this.next, 4);
    this.recent.set(groupKey, id);
  }

  /** The id of a key `assign` was called with. */
  idOf(groupKey: string): number {
    const known = this.recent.get(groupKey);
    if (known !== undefined) return known;
    const id = this.ids.get(groupKey);
    if (id === undefined)
      throw new InvariantError({
        problem: `result key ${JSON.stringify(groupKey)} was stored without an id (assign it before setting the contributions that name it)`,
      });
    this.recent.set(groupKey, id);
    return id;
  }

  keyOf(id: number): string {
    const key = this.keys.get(String(id));
    if (key === undefined)
      throw new InvariantError({
        problem: `stored contributions name result key id ${String(id)}, which the state store does not hold`,
      });
    return key;
  }
}
