import type { MetricFact } from "../contract/facts.ts";
import { domainIdentity } from "../metrics/fact-ledger.ts";
import type { UnitKind } from "../metrics/unit-key.ts";
import { partitionOf } from "../kafka/key-partitioner.ts";
import { compositeKey } from "./stage-records.ts";

/**
 * How the partitioned engine keys its entity stage (docs/engine-state.md §4, as built).
 *
 * A **bundle** is the set of admitted facts a unit reads through one foreign key, named
 * `kind \0 id`:
 * - `call \0 C`: the call C and the costs linked to it (call_id C);
 * - `delivery \0 D`: D's summaries, the costs, calls and repairs naming D, and, pushed by each
 *   call bundle whose call names D, that call's bundle (cost → call → Delivery);
 * - `task \0 T`: the calls and repairs naming task_id T;
 * - `packet \0 P`: the packet P and its repairs;
 * - `snapshot \0 S`: the snapshot S (its no-task unit lives there);
 * - `tasks \0 S,p`: the snapshot S again, for partition p, when p owns some of its task units.
 *
 * Each bundle is owned by the entity partition its key hashes to, and each unit lives with its
 * bundle; a task unit is placed by its own key (`task unit \0 S,position`) so that a snapshot's
 * hundreds of tasks spread. Facts a unit reads from other bundles are pushed or subscribed to, so
 * every unit evaluates over a local index holding every fact it reads, as in the single engine.
 */
export type BundleKind = "call" | "delivery" | "task" | "packet" | "snapshot" | "tasks" | "task unit";

export const bundleKey = (kind: BundleKind, id: string): string => `${kind}\u0000${id}`;

export function bundleKind(key: string): BundleKind {
  return key.slice(0, key.indexOf("\u0000")) as BundleKind;
}

export function bundleId(key: string): string {
  return key.slice(key.indexOf("\u0000") + 1);
}

/** The bundles an admitted fact belongs to directly (not through a push). */
export function bundlesOf(fact: MetricFact): string[] {
  const keys: string[] = [];
  const add = (kind: BundleKind, id: string | undefined): void => {
    if (id !== undefined) keys.push(bundleKey(kind, id));
  };
  switch (fact.type) {
    case "model_call":
      add("call", fact.call_id);
      add("delivery", fact.delivery_id);
      add("task", fact.task_id);
      break;
    case "cost":
      add("call", fact.call_id);
      add("delivery", fact.delivery_id);
      break;
    case "delivery_summary":
      add("delivery", fact.delivery_id);
      break;
    case "repair":
      add("packet", fact.packet_id);
      add("task", fact.task_id);
      add("delivery", fact.delivery_id);
      break;
    case "packet":
      add("packet", fact.packet_id);
      break;
    case "task_snapshot":
      add("snapshot", fact.snapshot_id);
      break;
  }
  return keys;
}

/** Where a task unit lives: its snapshot and position, hashed. */
export const taskUnitBundle = (snapshotId: string, position: number): string =>
  bundleKey("task unit", compositeKey(snapshotId, String(position)));

/**
 * Where an admitted fact goes in the entity stage: the owner of each bundle it belongs to, and for a
 * snapshot also each partition that owns one of its task units (once per partition, however many
 * of its tasks the partition owns).
 */
export function destinationsOf(fact: MetricFact, partitions: number): { bundle: string; partition: number }[] {
  const destinations = bundlesOf(fact).map((bundle) => ({ bundle, partition: partitionOf(bundle, partitions) }));
  if (fact.type === "task_snapshot") {
    const owners = new Set(
      fact.tasks.map((_, position) => partitionOf(taskUnitBundle(fact.snapshot_id, position), partitions)),
    );
    for (const partition of [...owners].sort((a, b) => a - b))
      destinations.push({ bundle: bundleKey("tasks", compositeKey(fact.snapshot_id, String(partition))), partition });
  }
  return destinations;
}

/**
 * The bundle whose owner adds the fact's own direct-evidence contribution (OPEN summaries and costs
 * linked to a Delivery; a call's costs count with the call's unit, a Delivery's deciding TERMINAL
 * summary with the Delivery's), so it is added exactly once.
 */
export function evidenceHome(fact: MetricFact): string | undefined {
  if (fact.type === "delivery_summary") return bundleKey("delivery", fact.delivery_id);
  if (fact.type === "cost" && fact.delivery_id !== undefined) return bundleKey("delivery", fact.delivery_id);
  return undefined;
}

/**
 * What the ledger admits a fact under: its domain identity (`call \0 C`, `cost \0 K`, …; at most
 * one fact counts per identity), or for a summary, which has none, its fact_id.
 */
export function admissionKey(fact: MetricFact): string {
  const domain = domainIdentity(fact);
  return domain === undefined ? `summary\u0000${fact.fact_id}` : `${domain[0]}\u0000${domain[1]}`;
}

/** The bundle a unit is evaluated with (its partition is that bundle's owner). */
export function unitBundle(kind: UnitKind, id: string): string {
  switch (kind) {
    case "call":
      return bundleKey("call", id);
    case "delivery":
      return bundleKey("delivery", id);
    case "packet":
      return bundleKey("packet", id);
    case "snapshot":
      return bundleKey("snapshot", id);
    case "task": {
      const separator = id.lastIndexOf("\u0000");
      return taskUnitBundle(id.slice(0, separator), Number(id.slice(separator + 1)));
    }
  }
}
