import { detachedBytes, type BinaryReader, type BinaryWriter } from "../../codec/binary-form.ts";
import type { Contribution } from "../../metrics/contribution.ts";
import type { DocContributions, StoredContributions } from "../../metrics/entity-docs.ts";
import type { GroupKeyIds } from "../group-key-ids.ts";
import { readContributions, writeContributions } from "./contributions.ts";
import { decodeWith, startValue } from "./values.ts";

/*
 * A document's contributions left as stored until a unit reads them (metrics/entity-docs.ts,
 * StoredContributions): read back from disk, or encoded as a log load restores them.
 */

/** A unit's contributions as writeContributions wrote them, decoded when read (see StoredContributions). */
class StoredUnitContributions implements StoredContributions {
  readonly stored = true;
  readonly length: number;
  readonly bytes: Buffer;
  private readonly ids: GroupKeyIds;

  constructor(bytes: Buffer, length: number, ids: GroupKeyIds) {
    this.bytes = bytes;
    this.length = length;
    this.ids = ids;
  }

  decode(): readonly Contribution[] {
    return decodeWith(this.bytes, (input) => readContributions(input, this.ids));
  }
}

const NO_CONTRIBUTIONS: readonly Contribution[] = Object.freeze([]);

/** Contributions encoded now, as a document stores them (their groups must have ids). */
export function storedContributions(ids: GroupKeyIds): (contributions: readonly Contribution[]) => StoredContributions {
  return (contributions) => {
    const out = startValue();
    writeContributions(out, contributions, ids);
    // Bytes of their own: a slice of Buffer's shared pool kept in the cache would pin the whole pool.
    return new StoredUnitContributions(detachedBytes(out.finish()), contributions.length, ids);
  };
}

/** A document's contributions, as stored ones are, unencoded again (see writeContributions). */
export function writeDocContributions(out: BinaryWriter, contributions: DocContributions, ids: GroupKeyIds): void {
  if (contributions instanceof StoredUnitContributions) out.raw(contributions.bytes);
  else writeContributions(out, contributions as readonly Contribution[], ids);
}

/** The contributions that end a document, left encoded (a view of the document's bytes). */
export function readDocContributions(input: BinaryReader, ids: GroupKeyIds): DocContributions {
  const start = input.offset;
  const length = input.unsigned();
  if (length === 0) return NO_CONTRIBUTIONS;
  // Read to the end for decodeWith; the count is kept with the list, as writeContributions wrote it.
  return new StoredUnitContributions(input.tail(start), length, ids);
}
