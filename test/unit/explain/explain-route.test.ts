import { describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import { EngineDirectory } from "../../../src/lineage/engine-directory.ts";
import { explainRoute, type ExplainRouting } from "../../../src/lineage/explain-route.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { MetricEngine } from "../../../src/metrics/metric-engine.ts";
import { parsed, rawModelCall } from "../metrics/fact-builders.ts";

const SELF = "http://127.0.0.1:1001";
const OWNER = "http://127.0.0.1:1002";

function routing(directory: EngineDirectory, owner: string | undefined, partitioned = false): ExplainRouting {
  return { directory, partition: 0, ownerAddress: () => Promise.resolve(owner), selfAddress: SELF, partitioned };
}

const url = (query: string): URL => new URL(`http://localhost/explain?${query}`);

describe("the /explain route", () => {
  it("redirects to the owner's address when this process holds no engine partition, and keeps the query", async () => {
    const reply = await explainRoute(
      url("metric=operational-latency-ms&cohort=role=r"),
      routing(new EngineDirectory(), OWNER),
    );
    expect(reply.status).toBe(307);
    expect(reply.headers.location).toBe(`${OWNER}/explain?metric=operational-latency-ms&cohort=role=r`);
  });

  it("answers 503 when no member owns the partition, or only this one says it does (a rebalance)", async () => {
    expect(
      (await explainRoute(url("metric=operational-latency-ms"), routing(new EngineDirectory(), undefined))).status,
    ).toBe(503);
    expect(
      (await explainRoute(url("metric=operational-latency-ms"), routing(new EngineDirectory(), SELF))).status,
    ).toBe(503);
  });

  it("answers from the local engine once flushed: 503 before, then the explanation", async () => {
    const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
    const directory = new EngineDirectory();
    directory.opened(0, engine.lineage());
    engine.ingest(parsed(rawModelCall({ span_duration_ms: 5 })));
    expect((await explainRoute(url("metric=operational-latency-ms"), routing(directory, OWNER))).status).toBe(503);
    engine.flush();
    const reply = await explainRoute(url("metric=operational-latency-ms"), routing(directory, OWNER));
    expect(reply.status).toBe(200);
    const body = JSON.parse(reply.body) as {
      kind: string;
      explanation: { units: { kind: string; status: string; contribution: { amount: number } }[] };
    };
    expect(body.kind).toBe("explained");
    expect(body.explanation.units).toMatchObject([
      { kind: "call", status: "eligible", contribution: { amount: 5000 } },
    ]);
    directory.closing(0, engine.lineage());
    expect((await explainRoute(url("metric=operational-latency-ms"), routing(directory, OWNER))).status).toBe(200);
  });

  it("refuses a malformed query (400), and the partitioned engine (501)", async () => {
    expect((await explainRoute(url("scope=2026"), routing(new EngineDirectory(), OWNER))).status).toBe(400);
    expect((await explainRoute(url("key=notjson"), routing(new EngineDirectory(), OWNER))).status).toBe(400);
    expect(
      (await explainRoute(url("metric=operational-latency-ms"), routing(new EngineDirectory(), OWNER, true))).status,
    ).toBe(501);
  });
});
