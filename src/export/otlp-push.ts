import type { Logger } from "pino";
import type { ViewState } from "../serve/view-state.ts";
import { collectFamilies, sampleName, type ExportLimits, type FamilySamples, type Labels } from "./openmetrics.ts";

/**
 * The exporter's series pushed as OTLP/HTTP JSON (`POST <endpoint>/v1/metrics`), for a collector
 * instead of a scraper: the same families, names and labels as /metrics, each sample an OTLP gauge
 * data point with its labels as string attributes. A push that fails is logged and not retried:
 * the next one carries the current state anyway.
 */

type Attribute = { readonly key: string; readonly value: { readonly stringValue: string } };

const attributes = (labels: Labels): Attribute[] =>
  labels.map(([key, value]) => ({ key, value: { stringValue: value } }));

/** The ExportMetricsServiceRequest (OTLP JSON encoding) of the families at `timeUnixNano`. */
export function otlpMetricsRequest(families: readonly FamilySamples[], timeUnixNano: string): object {
  const metrics = families
    .filter(({ samples }) => samples.length > 0)
    .map(({ family, samples }) => ({
      name: sampleName(family),
      description: family.help,
      gauge: {
        dataPoints: samples.map((sample) => ({
          attributes: attributes(sample.labels),
          timeUnixNano,
          asDouble: sample.value,
        })),
      },
    }));
  return {
    resourceMetrics: [
      {
        resource: { attributes: attributes([["service.name", "agentops-export"]]) },
        scopeMetrics: [{ scope: { name: "agentops-stream" }, metrics }],
      },
    ],
  };
}

export interface OtlpPushOptions {
  readonly state: ViewState;
  /** The collector's OTLP/HTTP root, e.g. http://127.0.0.1:4318 */
  readonly endpoint: URL;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly limits: ExportLimits;
  readonly logger: Logger;
}

export interface OtlpPush {
  /** Pushes now (the timer also calls this); resolves with whether the collector accepted it. */
  pushNow(): Promise<boolean>;
  stop(): void;
}

/** Pushes the current series every `intervalMs`; a push still running when the next is due is not overlapped. */
export function startOtlpPush(options: OtlpPushOptions): OtlpPush {
  const { state, endpoint, timeoutMs, limits, logger } = options;
  const url = new URL("v1/metrics", endpoint.href.endsWith("/") ? endpoint : new URL(`${endpoint.href}/`));
  let running: Promise<boolean> | undefined;
  const push = async (): Promise<boolean> => {
    const families = collectFamilies(
      state.snapshot().results.map((entry) => entry.result),
      limits,
    );
    const body = JSON.stringify(otlpMetricsRequest(families, `${BigInt(Date.now()) * 1_000_000n}`));
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) return true;
      logger.warn({ status: response.status, reason: "HTTP_STATUS" }, "otlp metrics push refused");
    } catch (error) {
      const reason = error instanceof Error && error.name === "TimeoutError" ? "TIMEOUT" : "CONNECTION";
      const detail = error instanceof Error ? error.message : String(error);
      logger.warn({ reason, detail }, "otlp metrics push failed");
    }
    return false;
  };
  const pushNow = (): Promise<boolean> => {
    running ??= push().finally(() => (running = undefined));
    return running;
  };
  const timer = setInterval(() => void pushNow(), options.intervalMs);
  // The command waits for a signal; the timer alone must not keep a process alive.
  timer.unref();
  return {
    pushNow,
    stop: () => clearInterval(timer),
  };
}
