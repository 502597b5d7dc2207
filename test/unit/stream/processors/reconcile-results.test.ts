import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../../src/catalog/metric-definitions.ts";
import { canonicalJson } from "../../../../src/contract/canonical-json.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../../src/metrics/engine-config.ts";
import type { MetricResult } from "../../../../src/metrics/result-record.ts";
import { reconcileResults } from "../../../../src/stream/processors/reconcile-results.ts";
import { replayFile } from "../../../../src/stream/transports/embedded/replay-file.ts";

const SAMPLE = fileURLToPath(new URL("../../../../samples/facts.ndjson", import.meta.url));
const encode = (result: MetricResult): Promise<Buffer> => Promise.resolve(Buffer.from(canonicalJson(result), "utf8"));

let current: Map<string, MetricResult>;

beforeAll(async () => {
  const outcome = await replayFile(SAMPLE, DEFAULT_ENGINE_CONFIG, shippedCatalog(), undefined);
  current = new Map(outcome.results.map((entry) => [entry.key, entry.result] as const));
});

async function topicHolding(results: ReadonlyMap<string, MetricResult>): Promise<Map<string, Buffer>> {
  return new Map(await Promise.all([...results].map(async ([key, result]) => [key, await encode(result)] as const)));
}

describe("reconciling the results topic after a rebuild", () => {
  it("writes nothing when the topic already holds every current value", async () => {
    expect(current.size).toBeGreaterThan(10);
    const { upserts, tombstones } = await reconcileResults(current, await topicHolding(current), encode);
    expect(upserts).toEqual([]);
    expect(tombstones).toEqual([]);
  });

  it("writes every result to an empty topic", async () => {
    const { upserts, tombstones } = await reconcileResults(current, new Map(), encode);
    expect(upserts.map((upsert) => upsert.key).sort()).toEqual([...current.keys()].sort());
    expect(tombstones).toEqual([]);
  });

  it("rewrites only the keys whose value differs, and tombstones only keys that are gone", async () => {
    const [changedKey, changed] = [...current][0] as [string, MetricResult];
    const onTopic = await topicHolding(current);
    onTopic.set(changedKey, await encode({ ...changed, status: changed.status === "PUBLISHED" ? "NOT_AVAILABLE" : "PUBLISHED" }));
    onTopic.set("a key no fact produces", Buffer.from("{}"));
    const { upserts, tombstones } = await reconcileResults(current, onTopic, encode);
    expect(upserts).toEqual([{ key: changedKey, value: await encode(changed) }]);
    expect(tombstones).toEqual(["a key no fact produces"]);
  });
});
