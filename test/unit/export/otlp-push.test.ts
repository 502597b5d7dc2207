import { createRequire } from "node:module";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_EXPORT_LIMITS, sampleNames } from "../../../src/export/openmetrics.ts";
import { startOtlpPush } from "../../../src/export/otlp-push.ts";
import type { MetricResult } from "../../../src/contract/result-record.ts";
import { resultKey } from "../../../src/metrics/scope.ts";
import { ViewState } from "../../../src/serve/view-state.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

interface GeneratedMessage {
  fromObject(object: unknown): unknown;
  encode(message: unknown): { finish(): Uint8Array };
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}
/** The protobufjs messages generated from the official OTLP .proto files (as src/ingest/otlp reads them). */
const generated = createRequire(import.meta.url)("@opentelemetry/otlp-transformer/build/src/generated/root.js") as {
  opentelemetry: { proto: { collector: { metrics: { v1: { ExportMetricsServiceRequest: GeneratedMessage } } } } };
};
const REQUEST = generated.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;

interface DataPoint {
  attributes: { key: string; value: { stringValue: string } }[];
  timeUnixNano: string;
  asDouble: number;
}
interface Request {
  resourceMetrics: { scopeMetrics: { metrics: { name: string; gauge: { dataPoints: DataPoint[] } }[] }[] }[];
}

function latency(model: string, value: number | null): MetricResult {
  return {
    catalog: "agentops.evaluation.metric-catalog@1.0.0",
    metric_id: "operational-latency-ms",
    metric_version: "1.0.0",
    scope: { kind: "window", start: "2026-10-01T00:00:00.000Z", end: "2026-10-02T00:00:00.000Z" },
    cohort: { model },
    status: value === null ? "NOT_AVAILABLE" : "PUBLISHED",
    value,
    na_reason: value === null ? "N/A when no call" : null,
    measures: null,
    eligible_units: value === null ? 0 : 4,
    minimum_sample: 1,
    coverage: {
      numerator: 4,
      denominator: 5,
      raw_ratio: 0.8,
      state: "PARTIAL",
      alert: false,
      threshold_hundredths: 10,
    },
    exclusions: {},
    as_of: null,
  };
}

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function pushTo(receiver: WebhookReceiver, results: MetricResult[], timeoutMs = 2_000): Promise<boolean> {
  const state = new ViewState({ mode: "files", description: "test", error: null });
  for (const result of results) state.setResult(resultKey(result.metric_id, result.scope, result.cohort), result);
  const push = startOtlpPush({
    state,
    endpoint: new URL(`${receiver.url}/otlp`),
    intervalMs: 3_600_000,
    timeoutMs,
    limits: DEFAULT_EXPORT_LIMITS,
    logger: pino({ level: "silent" }),
  });
  closers.push(() => push.stop());
  return push.pushNow();
}

describe("OTLP metrics push", () => {
  it("POSTs the exporter's series as OTLP/JSON gauges that the official OTLP messages read unchanged", async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    expect(await pushTo(receiver, [latency("m1", 812.5), latency("m2", null)])).toBe(true);
    const [request] = receiver.requests;
    expect(request?.path).toBe("/otlp/v1/metrics");
    expect(request?.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(request?.body ?? "{}") as Request;
    const options = { longs: String, enums: Number, defaults: false, arrays: false };
    const roundTrip = REQUEST.toObject(REQUEST.decode(REQUEST.encode(REQUEST.fromObject(body)).finish()), options);
    expect(roundTrip).toEqual(body);

    const metrics = body.resourceMetrics[0]?.scopeMetrics[0]?.metrics ?? [];
    const served = new Set(sampleNames());
    expect(metrics.map((metric) => metric.name).filter((name) => !served.has(name))).toEqual([]);
    const points = metrics.find((metric) => metric.name === "agentops_metric_value")?.gauge.dataPoints ?? [];
    const labelled = points.map((point) => ({
      labels: Object.fromEntries(point.attributes.map((attribute) => [attribute.key, attribute.value.stringValue])),
      value: point.asDouble,
    }));
    const labels = { metric: "operational-latency-ms", scope_kind: "window", model: "m1" };
    expect(labelled).toEqual([{ labels, value: 812.5 }]);
    expect(points[0]?.timeUnixNano).toMatch(/^\d{19}$/);
  });

  it("gives up on a collector that does not answer within the timeout", async () => {
    const receiver = await startReceiver(() => "hang");
    closers.push(() => receiver.close());
    const started = Date.now();
    expect(await pushTo(receiver, [latency("m1", 1)], 300)).toBe(false);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
