import { hash } from "node:crypto";
import type { MetricFact } from "../../contract/facts.ts";
import { parseNormalizedFact } from "../../contract/parse-fact.ts";

/**
 * The engine's input topic doubles as its state changelog: accepted, normalised facts, one
 * record per distinct version. The key is fact_id plus a digest of the canonical content, so
 * compaction removes exact redeliveries but never one side of a conflict (two versions of one
 * fact_id have different keys and both survive, so a rebuild quarantines them again).
 * Values are the normalised fact as JSON: internal, so no registry round trip is needed.
 */
export function engineFactKey(fact: MetricFact, canonical: string): string {
  // One-shot crypto.hash: the same digest as createHash(…).update(…).digest(), a third of the cost per record.
  return `${fact.fact_id}\u0000${hash("sha256", canonical, "hex").slice(0, 32)}`;
}

/** Where a fact was first read, so a conflict found later can point at the records involved. */
export interface SourceCoordinates {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/**
 * The value is encoded to bytes here, once: kafkajs would convert a string itself, and the bounded
 * sender would first measure it (flattening the concatenated string) to size its requests.
 */
export function encodeEngineFact(fact: MetricFact, source: SourceCoordinates): { key: string; value: Buffer } {
  const canonical = JSON.stringify(fact);
  return { key: engineFactKey(fact, canonical), value: Buffer.from(`{"fact":${canonical},"source":${JSON.stringify(source)}}`, "utf8") };
}

/** Decodes a record of the engine-facts topic; it was validated on the way in and is re-checked. */
export function decodeEngineFact(value: Buffer): { fact: MetricFact; source: SourceCoordinates } | undefined {
  const record = JSON.parse(value.toString("utf8")) as { fact?: unknown; source?: SourceCoordinates };
  const parsed = parseNormalizedFact(record.fact);
  if (!parsed.ok || parsed.fact.type === "agent_step" || parsed.fact.type === "sandbox_event" || record.source === undefined) return undefined;
  return { fact: parsed.fact, source: record.source };
}
