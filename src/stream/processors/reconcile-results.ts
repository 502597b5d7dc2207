import type { MetricResult } from "../../metrics/result-record.ts";

export interface Reconciliation {
  /** Results whose encoded value is not what the topic holds for their key (or that it lacks). */
  readonly upserts: readonly { readonly key: string; readonly value: Buffer }[];
  /** Keys the topic holds that the rebuilt state no longer has. */
  readonly tombstones: readonly string[];
}

/**
 * What a rebuilt engine must write so the compacted results topic holds exactly its results.
 * Values are compared as encoded bytes (the encoding is deterministic for one schema version),
 * so a restart with no new facts writes nothing: a downstream consumer that treats each record
 * as a change sees no phantom changes. A new schema version changes the bytes, and then every
 * result is rewritten once in the new form, which is what such a consumer needs.
 */
export async function reconcileResults(current: ReadonlyMap<string, MetricResult>, onTopic: ReadonlyMap<string, Buffer>, encode: (result: MetricResult) => Promise<Buffer>): Promise<Reconciliation> {
  const upserts: { key: string; value: Buffer }[] = [];
  for (const [key, result] of current) {
    const value = await encode(result);
    const held = onTopic.get(key);
    if (held === undefined || !held.equals(value)) upserts.push({ key, value });
  }
  const tombstones = [...onTopic.keys()].filter((key) => !current.has(key));
  return { upserts, tombstones };
}
