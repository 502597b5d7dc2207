import type { MetricFact } from "../contract/facts.ts";
import type { Conflict, FactOrigin } from "../metrics/fact-ledger.ts";
import type { MemberReading, TaskIdReading } from "../metrics/task-inputs.ts";
import { InvariantError } from "../errors.ts";

/**
 * The records the partitioned engine's stages send one another (docs/engine-state.md §4, as
 * built). Every one is a keyed upsert of a current value (null: the key's value is gone), never a
 * delta, and every key has one writer partition, so a receiver that keeps the last value per key
 * holds the writer's current state whatever the interleaving of other writers; replaying a record
 * rewrites the same value.
 *
 * Keys are composite (`compositeKey`): length-prefixed parts, so any identifier (any character,
 * separators included) round-trips, and a receiver reads a tombstone's meaning from its key.
 */
export type StageRecord =
  /** Fact ledger (by fact_id) → domain ledger (by identity): one version of a fact_id claiming an identity. */
  | { readonly topic: "claims"; readonly partition: number; readonly key: string; readonly value: ClaimVersion | null }
  /** A ledger stage → entity stage (by bundle): the fact admitted under `admissionKey`, per bundle it belongs to. */
  | { readonly topic: "admissions"; readonly partition: number; readonly key: string; readonly value: Admission | null }
  /** Entity → entity (a call bundle's owner → its Delivery's owner): one fact of the call's bundle. */
  | { readonly topic: "pushes"; readonly partition: number; readonly key: string; readonly value: MetricFact | null }
  /**
   * Entity → entity (a task unit's partition → the owner of a member Delivery's or a task_id's
   * bundle): send me your reading at this cutoff (the key names bundle, subscriber and cutoff).
   */
  | { readonly topic: "subscriptions"; readonly partition: number; readonly key: string; readonly value: true | null }
  /** Entity → entity (the bundle's owner → a subscriber): the bundle's reading at the subscribed cutoff. */
  | {
      readonly topic: "responses";
      readonly partition: number;
      readonly key: string;
      readonly value: JoinReading | null;
    }
  /** Entity → aggregation (by result group): one partition's partial sums of a group (groupCodec bytes). */
  | { readonly topic: "partials"; readonly partition: number; readonly key: string; readonly value: Buffer | null }
  /** Any stage → the conflicts output: a conflict's current report (null: no longer a conflict). */
  | { readonly topic: "conflicts"; readonly partition: number; readonly key: string; readonly value: Conflict | null };

export type StageTopic = StageRecord["topic"];

export interface ClaimVersion {
  readonly fact: MetricFact;
  readonly origin: FactOrigin | null;
  /** The only version of its fact_id (a fact_id with two versions is a conflict: neither counts). */
  readonly live: boolean;
}

/** A foreign-key join response: a member Delivery's reading, or a task_id's. */
export type JoinReading = MemberReading | TaskIdReading;

export interface Admission {
  readonly fact: MetricFact;
  /** Where it was read (summaries carry it to the LATER_TERMINAL_SUMMARY report of their Delivery). */
  readonly origin: FactOrigin | null;
}

/** Parts joined as `length:part…`: unambiguous for any parts, and split back by `splitKey`. */
export function compositeKey(...parts: readonly string[]): string {
  let key = "";
  for (const part of parts) key += `${part.length}:${part}`;
  return key;
}

export function splitKey(key: string): string[] {
  const parts: string[] = [];
  let at = 0;
  while (at < key.length) {
    const colon = key.indexOf(":", at);
    const length = Number(key.slice(at, colon));
    if (colon < 0 || !Number.isInteger(length))
      throw new InvariantError({ problem: `not a composite key: ${JSON.stringify(key)}` });
    parts.push(key.slice(colon + 1, colon + 1 + length));
    at = colon + 1 + length;
  }
  return parts;
}
