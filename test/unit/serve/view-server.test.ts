import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { checkResult } from "../../../src/serve/record-checks.ts";
import { startViewServer, type ViewServer } from "../../../src/serve/server.ts";
import { ViewState, type AlertRecord, type RunRecord } from "../../../src/serve/view-state.ts";

/** The view under hostile input: records the page cannot read, foreign Host headers, clients that never read. */

const result = (cohort: Record<string, string>, value: unknown) => ({
  metric_id: "tool-call-outcome-share",
  scope: { kind: "window", start: "2026-10-01T00:00:00.000Z", end: "2026-10-02T00:00:00.000Z" },
  cohort,
  status: "PUBLISHED",
  value,
  na_reason: null,
  measures: null,
  eligible_units: 3,
  minimum_sample: 1,
  coverage: { numerator: 1, denominator: 2, raw_ratio: 0.5, state: "PARTIAL", alert: false, threshold_hundredths: 10 },
});

const stops: Array<() => unknown> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function serve(
  host = "127.0.0.1",
  options: Parameters<typeof startViewServer>[3] = {},
): Promise<{ state: ViewState; server: ViewServer }> {
  const state = new ViewState({ mode: "files", description: "test", error: null });
  const server = await startViewServer(state, host, 0, options);
  stops.push(() => server.close());
  return { state, server };
}

function getStatus(server: ViewServer, path: string, host: string | undefined): Promise<number> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        headers: host === undefined ? {} : { host },
        setHost: host !== undefined,
      },
      (incoming) => {
        resolve(incoming.statusCode ?? 0);
        incoming.destroy();
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("records the page cannot read", () => {
  it("a result whose share is a string is rejected with the reason, the others kept; a fixed record clears it", () => {
    const state = new ViewState({ mode: "files", description: "test", error: null });
    state.setResult("good", result({ model: "a" }, { ok: 0.5, error: 0.5 }));
    state.setResult("bad", result({ model: "b" }, { ok: "0.5" }));
    expect(state.snapshot().results.map(({ key }) => key)).toEqual(["good"]);
    expect(state.snapshot().rejected).toEqual([
      {
        kind: "result",
        key: "bad",
        metric_id: "tool-call-outcome-share",
        reason: "value: ok: expected a finite number",
      },
    ]);
    state.setResult("bad", result({ model: "b" }, { ok: 1 }));
    expect(state.snapshot().results.map(({ key }) => key)).toEqual(["good", "bad"]);
    expect(state.snapshot().rejected).toEqual([]);
  });

  it("names the first field the page could not read", () => {
    expect(checkResult(result({}, 3))).toBeNull();
    expect(checkResult(result({}, null))).toBeNull();
    expect(checkResult(result({}, "3"))).toBe("value: expected null, a number or numbers by category");
    expect(checkResult({ ...result({}, 3), coverage: { ...result({}, 3).coverage, raw_ratio: "0.5" } })).toBe(
      "coverage: raw_ratio: expected a finite number",
    );
    expect(checkResult({ ...result({}, 3), scope: { kind: "window", start: "soon", end: "later" } })).toBe(
      "scope: start: expected an instant",
    );
    expect(checkResult({ ...result({}, 3), cohort: { model: 7 } })).toBe("cohort: model: expected a string");
    expect(checkResult({ ...result({}, 3), status: "MAYBE" })).toMatch(/^status: expected one of/);
    expect(checkResult([])).toBe("expected an object");
  });

  it("alerts and run states that cannot be read are rejected by id, never passed on", () => {
    const state = new ViewState({ mode: "files", description: "test", error: null });
    state.addAlert({
      alert_id: "a1",
      run_id: "r1",
      severity: "critical",
      kind: "DESTRUCTIVE",
      rule_id: "x",
      rule_version: 1,
      event_time: "2026-10-01T00:00:00Z",
      message: { html: "<b>" },
    });
    state.setRun({ run_id: "r1", steps_seen: "many" });
    expect(state.snapshot().alerts).toEqual([]);
    expect(state.snapshot().runs).toEqual([]);
    expect(state.snapshot().rejected.map(({ kind, key, reason }) => `${kind} ${key}: ${reason}`)).toEqual([
      "alert a1: message: expected a string",
      "run r1: steps_seen: expected a finite number",
    ]);
  });
  it("an alert or run-state record that is not an object at all is rejected, not thrown on", () => {
    const state = new ViewState({ mode: "files", description: "test", error: null });
    state.setRun(null as unknown as RunRecord);
    state.addAlert(7 as unknown as AlertRecord);
    const rejected = [
      { kind: "run", key: "(no run_id)", metric_id: null, reason: "expected an object" },
      { kind: "alert", key: "(no alert_id)", metric_id: null, reason: "expected an object" },
    ];
    expect(state.snapshot().rejected).toEqual(rejected);
  });
});

describe("the Host header (DNS rebinding)", () => {
  it("a loopback bind answers the loopback names only, on every path", async () => {
    const { server } = await serve();
    const port = new URL(server.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "LOCALHOST"])
      expect(await getStatus(server, "/api/snapshot", host), host).toBe(200);
    for (const path of ["/", "/api/snapshot", "/events", "/app.js"])
      expect(await getStatus(server, path, `evil.example:${port}`), path).toBe(421);
    expect(await getStatus(server, "/api/snapshot", "127.0.0.1.evil.example")).toBe(421);
    // No Host at all: Node refuses an HTTP/1.1 request without one before the server sees it.
    expect(await getStatus(server, "/api/snapshot", undefined)).toBe(400);
  });

  it("--allowed-hosts adds names, and only those", async () => {
    const { server } = await serve("127.0.0.1", { allowedHosts: ["view.example.org"] });
    expect(await getStatus(server, "/api/snapshot", "view.example.org:8080")).toBe(200);
    expect(await getStatus(server, "/api/snapshot", "other.example.org")).toBe(421);
  });
});

describe("event-stream clients are bounded", () => {
  it("a client that never reads is dropped once it leaves more than the bound unread; a reader stays", async () => {
    const { state, server } = await serve("127.0.0.1", { maxClientBufferBytes: 256 * 1024 });
    const { port } = new URL(server.url);
    const stalled: Socket = connect(Number(port), "127.0.0.1");
    stalled.pause();
    stalled.write(`GET /events HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`);
    const reading = await fetch(new URL("/events", server.url));
    const reader = reading.body?.getReader();
    let readBytes = 0;
    const drain = (async () => {
      for (;;) {
        const chunk = await reader?.read();
        if (chunk === undefined || chunk.done) return;
        readBytes += chunk.value.length;
      }
    })();
    await until(() => server.clientCount() === 2);
    // Up to 48 MB of changes in bursts of 160 kB, each under the bound: far more than the kernel's
    // socket buffers hold for the stalled client, while the reading one keeps up.
    const padding = "x".repeat(4_000);
    for (let burst = 0; burst < 300 && server.clientCount() === 2; burst += 1) {
      for (let i = 0; i < 40; i += 1) state.setResult(`k${i}`, result({ model: `${padding}${burst}` }, i));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await until(() => server.clientCount() === 1);
    expect(readBytes).toBeGreaterThan(256 * 1024);
    const before = readBytes;
    state.setResult("after", result({ model: "after" }, 1));
    await until(() => readBytes > before);
    await reader?.cancel();
    await drain;
    stalled.destroy();
  });

  it("one event-stream client more than the bound is a 503", async () => {
    const { server } = await serve("127.0.0.1", { maxClients: 2 });
    const open = await Promise.all([fetch(new URL("/events", server.url)), fetch(new URL("/events", server.url))]);
    expect(open.map((answer) => answer.status)).toEqual([200, 200]);
    expect((await fetch(new URL("/events", server.url))).status).toBe(503);
    for (const answer of open) await answer.body?.cancel();
    await until(() => server.clientCount() === 0);
    const again = await fetch(new URL("/events", server.url));
    expect(again.status).toBe(200);
    await again.body?.cancel();
  });
});

describe("the lineage route", () => {
  it("without --explain-member it says how to turn lineage on (404); with it, it answers what the explainer gives, and 502 when asking fails", async () => {
    const off = await serve();
    const offReply = await fetch(new URL("/api/explain?key=k", off.server.url));
    expect(offReply.status).toBe(404);
    expect(((await offReply.json()) as { error: string }).error).toContain("--explain-member");

    const asked: string[] = [];
    const on = await serve("127.0.0.1", {
      explain: (key) => {
        asked.push(key);
        return key === "broken"
          ? Promise.reject(new Error("member unreachable"))
          : Promise.resolve({ status: 200, body: JSON.stringify({ kind: "explained", key }) });
      },
    });
    const onReply = await fetch(new URL(`/api/explain?key=${encodeURIComponent('{"a":1}')}`, on.server.url));
    expect(onReply.status).toBe(200);
    expect(await onReply.json()).toEqual({ kind: "explained", key: '{"a":1}' });
    expect((await fetch(new URL("/api/explain?key=broken", on.server.url))).status).toBe(502);
    expect((await fetch(new URL("/api/explain", on.server.url))).status).toBe(400);
    expect(asked).toEqual(['{"a":1}', "broken"]);
  });
});
