import { appendFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFileSource } from "../../../src/serve/file-source.ts";
import { startViewServer } from "../../../src/serve/server.ts";
import { ViewState, type ViewEvent } from "../../../src/serve/view-state.ts";

const result = (model: string, value: number) => ({
  metric_id: "operational-latency-ms",
  scope: { kind: "window", start: "2026-10-01T00:00:00.000Z", end: "2026-10-02T00:00:00.000Z" },
  cohort: { model },
  status: "PUBLISHED",
  value,
  coverage: { numerator: 1, denominator: 2, raw_ratio: 0.5, state: "PARTIAL", alert: false, threshold_hundredths: 10 },
});
const alert = (id: string) => ({
  alert_id: id,
  run_id: "run-1",
  rule_id: "loop-cycle",
  kind: "LOOP",
  severity: "warning",
  event_time: "2026-10-01T01:00:00.000Z",
  evidence: { seq_from: 1, seq_to: 3 },
  message: "m",
});
const lines = (...records: unknown[]): string => records.map((record) => `${JSON.stringify(record)}\n`).join("");

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const stops: Array<() => unknown> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe("the view over a replay's files", () => {
  it("re-reads a rewritten results file, follows appended alerts, and names a malformed line without dropping the rest", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentops-view-"));
    const files = {
      results: join(dir, "results.ndjson"),
      alerts: join(dir, "alerts.ndjson"),
      runs: join(dir, "runs.ndjson"),
    };
    writeFileSync(files.results, lines(result("a", 1), result("b", 2)));
    writeFileSync(files.alerts, lines(alert("x1")));
    const state = new ViewState({ mode: "files", description: "test", error: null });
    const source = startFileSource(files, state);
    stops.push(() => source.stop());
    const events: ViewEvent[] = [];
    state.subscribe((event) => events.push(event));
    expect(state.snapshot().results).toHaveLength(2);
    expect(state.snapshot().alerts.map((entry) => entry.alert_id)).toEqual(["x1"]);

    // A new replay: b is gone, a changed; the page gets one removal and one upsert.
    writeFileSync(files.results, lines(result("a", 5)));
    await until(() => state.snapshot().results.length === 1);
    expect(state.snapshot().results[0]?.result.value).toBe(5);
    expect(
      events
        .filter((event) => event.type === "result")
        .map((event) => (event.type === "result" ? (event.result?.value ?? null) : undefined)),
    ).toEqual([null, 5]);

    // Appended alerts arrive one by one; a half-written line waits for its end; bad JSON is named.
    appendFileSync(
      files.alerts,
      `${JSON.stringify(alert("x2"))}\nnot json\n${JSON.stringify(alert("x3")).slice(0, 20)}`,
    );
    await until(() => state.snapshot().alerts.length === 2);
    expect(state.snapshot().status.error).toContain("alerts.ndjson line 3: not JSON");
    appendFileSync(files.alerts, `${JSON.stringify(alert("x3")).slice(20)}\n`);
    await until(() => state.snapshot().alerts.length === 3);

    // The run-state file may appear later.
    writeFileSync(files.runs, lines({ run_id: "run-1", steps_seen: 4 }));
    await until(() => state.snapshot().runs.length === 1);
  });

  it("serves the snapshot, streams changes as server-sent events, and refuses anything but reading", async () => {
    const state = new ViewState({ mode: "files", description: "test", error: null });
    const server = await startViewServer(state, "127.0.0.1", 0);
    stops.push(() => server.close());
    expect((await fetch(new URL("/nope", server.url))).status).toBe(404);
    expect((await fetch(new URL("/", server.url), { method: "POST" })).status).toBe(405);
    const page = await fetch(new URL("/", server.url));
    expect(await page.text()).toContain('<script type="module" src="/app.js">');
    expect((await fetch(new URL("/vendor/uPlot.iife.min.js", server.url))).status).toBe(200);

    const stream = await fetch(new URL("/events", server.url));
    const reader = stream.body?.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes("event: snapshot")) text += decoder.decode((await reader?.read())?.value);
    state.addAlert(alert("live-1"));
    while (!text.includes("live-1")) text += decoder.decode((await reader?.read())?.value);
    expect(text).toMatch(/event: alert\ndata: \{"type":"alert","alert":\{"alert_id":"live-1"/);
    await reader?.cancel();
  });
});
