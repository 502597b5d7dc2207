import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { exportCommand } from "../../../src/cli/commands/export.ts";
import { startExporterServer } from "../../../src/export/exporter-server.ts";
import { DEFAULT_EXPORT_LIMITS } from "../../../src/export/openmetrics.ts";
import type { MetricResult } from "../../../src/contract/result-record.ts";
import { startFileSource } from "../../../src/serve/file-source.ts";
import { ViewState } from "../../../src/serve/view-state.ts";
import { parseOpenMetrics } from "../../support/openmetrics-parser.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const NODE = join(ROOT, "node_modules/.bin/node");
const AGENTOPS = join(ROOT, "bin/agentops");

const result = (model: string, value: number): MetricResult => ({
  catalog: "agentops.evaluation.metric-catalog@1.0.0",
  metric_id: "operational-latency-ms",
  metric_version: "1.0.0",
  scope: { kind: "window", start: "2026-10-01T00:00:00.000Z", end: "2026-10-02T00:00:00.000Z" },
  cohort: { model },
  status: "PUBLISHED",
  value,
  na_reason: null,
  measures: null,
  eligible_units: 3,
  minimum_sample: 1,
  coverage: { numerator: 3, denominator: 4, raw_ratio: 0.75, state: "PARTIAL", alert: false, threshold_hundredths: 10 },
  exclusions: {},
  as_of: "2026-10-01T10:00:00.000Z",
});

const stops: (() => unknown)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function resultsFile(...results: MetricResult[]): string {
  const path = join(mkdtempSync(join(tmpdir(), "agentops-export-")), "results.ndjson");
  writeFileSync(path, results.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
  return path;
}

const valuesOf = (text: string): number[] => {
  const family = parseOpenMetrics(text).find((entry) => entry.name === "agentops_metric_value");
  return family?.samples.map((sample) => sample.value) ?? [];
};

describe("the exporter's HTTP server", () => {
  it("serves /metrics from the current records, /healthz from the source's state, and nothing else", async () => {
    const path = resultsFile(result("m1", 10));
    const state = new ViewState({ mode: "files", description: path, error: null });
    const source = startFileSource({ results: path }, state);
    stops.push(() => source.stop());
    const server = await startExporterServer(state, "127.0.0.1", 0, DEFAULT_EXPORT_LIMITS);
    stops.push(() => server.close());

    const scrape = await fetch(server.url);
    expect(scrape.headers.get("content-type")).toBe("application/openmetrics-text; version=1.0.0; charset=utf-8");
    expect(valuesOf(await scrape.text())).toEqual([10]);
    expect(await (await fetch(server.url, { method: "HEAD" })).text()).toBe("");
    expect((await fetch(server.url, { method: "POST" })).status).toBe(405);
    expect((await fetch(new URL("/", server.url))).status).toBe(404);
    expect((await fetch(new URL("/healthz", server.url))).status).toBe(200);

    writeFileSync(path, `${JSON.stringify(result("m1", 12))}\nnot json\n`);
    await until(async () => (valuesOf(await (await fetch(server.url)).text())[0] === 12 ? true : undefined));
    const health = await fetch(new URL("/healthz", server.url));
    expect(health.status).toBe(503);
    const body = (await health.json()) as { status: string; error: string };
    expect(body.status).toBe("degraded");
    expect(body.error).toContain("line 2");
  });
});

describe("agentops export (the command)", () => {
  it("listens on loopback by default, serves the file, and stops on SIGTERM", async () => {
    const args = [AGENTOPS, "export", "--results", resultsFile(result("m1", 7)), "--port", "0"];
    const child = spawn(NODE, args, { cwd: ROOT });
    stops.push(() => child.kill("SIGKILL"));
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    const url = await until(() => Promise.resolve(/(http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(stdout)?.[1]));
    expect(valuesOf(await (await fetch(url)).text())).toEqual([7]);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it.each([
    [["--port", "70000"], "--port"],
    [["--max-cohorts", "0"], "--max-cohorts"],
    [["--results", "/nonexistent/results.ndjson"], "--results"],
    [["--from-topics", "--results", "r.ndjson"], "--from-topics"],
    [["--colour"], "--colour"],
    [["--otlp-endpoint", "ftp://collector:4318"], "--otlp-endpoint"],
    [["--otlp-endpoint", "http://user:secret@collector:4318"], "--otlp-endpoint"],
  ])("refuses %j naming the flag and the fix, before listening", async (args, flag) => {
    await expect(exportCommand.run(args)).rejects.toThrow(new RegExp(`^${flag}: .*\\. Fix: `));
  });
});
