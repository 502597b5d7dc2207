import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { notifyCommand } from "../../../src/cli/commands/notify.ts";
import { fileDeadLetters } from "../../../src/notify/dead-letter-sinks.ts";
import { alertNotification, CoverageTransitions, webhookBody } from "../../../src/notify/notification.ts";
import { Notifier } from "../../../src/notify/notifier.ts";
import { notifyFromFiles } from "../../../src/notify/notify-sources.ts";
import { parseNotifyConfig, redactSecrets, type NotifyConfig } from "../../../src/notify/webhook-config.ts";
import type { MetricResult } from "../../../src/contract/result-record.ts";
import { startReceiver, type Behaviour, type WebhookReceiver } from "../../support/webhook-receiver.ts";

const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});

async function receiver(behaviour?: Behaviour): Promise<WebhookReceiver> {
  const started = await startReceiver(behaviour);
  receivers.push(started);
  return started;
}

const alert = (id: string, severity = "critical") => ({
  alert_id: id,
  run_id: "run-7",
  rule_id: "git-force-push",
  rule_version: "1",
  kind: "DESTRUCTIVE",
  severity,
  event_time: Date.parse("2026-10-01T00:25:06.144Z"),
  evidence: { seq_from: 3, seq_to: 3, command: "git push --force origin main" },
  message: "destructive action (git-force-push): forced push to <main> & co",
});

function result(alertOn: boolean, numerator = 1): MetricResult {
  return {
    catalog: "agentops.evaluation.metric-catalog@1.0.0",
    metric_id: "operational-latency-ms",
    metric_version: "1.0.0",
    scope: { kind: "window", start: "2026-10-01T00:00:00.000Z", end: "2026-10-02T00:00:00.000Z" },
    cohort: { model: "m1" },
    status: "PUBLISHED",
    value: 10,
    na_reason: null,
    measures: null,
    eligible_units: numerator,
    minimum_sample: 1,
    coverage: {
      numerator,
      denominator: 20,
      raw_ratio: numerator / 20,
      state: "PARTIAL",
      alert: alertOn,
      threshold_hundredths: 10,
    },
    exclusions: {},
    as_of: "2026-10-01T10:00:00.000Z",
  };
}

interface Harness {
  readonly notifier: Notifier;
  readonly logs: () => string;
  readonly dlq: string;
  readonly dir: string;
}

const SECRET_PATH = "/hooks/T000SECRETPATH";
const TOKEN = "tok-SECRET-456";

interface ConfigOptions {
  readonly delivery?: Record<string, number>;
  readonly extra?: object[];
}

function config(url: string, options: ConfigOptions = {}): NotifyConfig {
  const env = { HOOK_URL: `${url}${SECRET_PATH}?sig=QUERYSECRET`, HOOK_TOKEN: TOKEN };
  const document = {
    webhooks: [
      { name: "ops", format: "json", url: { env: "HOOK_URL" }, token: { env: "HOOK_TOKEN" } },
      ...(options.extra ?? []),
    ],
    delivery: { attempts: 3, timeoutMs: 2_000, backoffMs: 10, maxBackoffMs: 50, ...options.delivery },
  };
  return parseNotifyConfig(document, "hooks.json", env);
}

function harness(notifyConfig: NotifyConfig, signal?: AbortSignal): Harness {
  const dir = mkdtempSync(join(tmpdir(), "agentops-notify-"));
  const dlq = join(dir, "failed.ndjson");
  writeFileSync(dlq, "");
  let logged = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged += chunk.toString("utf8");
      done();
    },
  });
  const logger = pino({ level: "debug" }, stream);
  return { notifier: new Notifier(notifyConfig, fileDeadLetters(dlq), logger, signal), logs: () => logged, dlq, dir };
}

const lines = (path: string): Record<string, unknown>[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const fileSource = { file: "alerts.ndjson", line: 1 };

describe("webhook delivery", () => {
  it("POSTs the generic JSON envelope with the delivery key as header and field, and the token", async () => {
    const hook = await receiver();
    const { notifier } = harness(config(hook.url));
    const notification = alertNotification(alert("a1"));
    expect(await notifier.notify(notification, fileSource)).toBe(true);
    expect(hook.requests).toHaveLength(1);
    const [request] = hook.requests;
    const body = JSON.parse(request?.body ?? "{}") as Record<string, unknown>;
    expect(request?.path).toBe(`${SECRET_PATH}?sig=QUERYSECRET`);
    expect(request?.headers["idempotency-key"]).toBe(notification.deliveryKey);
    expect(request?.headers["authorization"]).toBe(`Bearer ${TOKEN}`);
    expect(body).toMatchObject({ delivery_key: notification.deliveryKey, kind: "tripwire_alert" });
    expect(body["severity"]).toBe("critical");
    expect(body["subject"]).toMatchObject({ alert_id: "a1", event_time: "2026-10-01T00:25:06.144Z" });
    expect(notifier.summary).toEqual({ delivered: 1, deadLettered: 0, aborted: 0 });
  });

  it("retries after 500s with the same key until the receiver accepts", async () => {
    const hook = await receiver((attempt) => (attempt < 3 ? 500 : 200));
    const { notifier, logs } = harness(config(hook.url));
    expect(await notifier.notify(alertNotification(alert("a2")), fileSource)).toBe(true);
    expect(hook.requests).toHaveLength(3);
    expect(new Set(hook.requests.map((request) => request.headers["idempotency-key"])).size).toBe(1);
    expect(logs().match(/webhook delivery attempt failed/g)).toHaveLength(2);
    expect(notifier.summary.delivered).toBe(1);
  });

  it("gives a redelivered alert the same key, so a deduplicating receiver keeps one", async () => {
    const hook = await receiver();
    const { notifier } = harness(config(hook.url));
    await notifier.notify(alertNotification(alert("a3")), fileSource);
    await notifier.notify(alertNotification(alert("a3")), { file: "alerts.ndjson", line: 9 });
    await notifier.notify(alertNotification(alert("a4")), fileSource);
    expect(hook.requests).toHaveLength(3);
    const kept = [...hook.accepted.values()].map(
      (request) => JSON.parse(request.body) as { subject: { alert_id: string } },
    );
    expect(kept.map((body) => body.subject.alert_id)).toEqual(["a3", "a4"]);
  });

  it("bounds a receiver that never answers by the timeout, then dead-letters with the reason", async () => {
    const hook = await receiver(() => "hang");
    const delivery = { attempts: 2, timeoutMs: 300, backoffMs: 20, maxBackoffMs: 20 };
    const { notifier, dlq } = harness(config(hook.url, { delivery }));
    const started = Date.now();
    expect(await notifier.notify(alertNotification(alert("a5")), fileSource)).toBe(true);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(2 * 300);
    expect(elapsed).toBeLessThan(2 * 300 + 20 + 1_500);
    expect(hook.requests).toHaveLength(2);
    const [letter] = lines(dlq);
    expect(letter).toMatchObject({ reason: "WEBHOOK_DELIVERY_FAILED", field: "webhook:ops", failure: "TIMEOUT" });
    expect(letter).toMatchObject({ record_rejected: false, source: fileSource });
    expect(letter?.["delivery_key"]).toBe(alertNotification(alert("a5")).deliveryKey);
    expect(notifier.summary).toEqual({ delivered: 0, deadLettered: 1, aborted: 0 });
  });

  it("does not retry a 4xx or follow a redirect: one attempt, then the dead letter", async () => {
    const rejecting = await receiver(() => 400);
    const redirecting = await receiver(() => 302);
    for (const hook of [rejecting, redirecting]) {
      const { notifier, dlq } = harness(config(hook.url));
      await notifier.notify(alertNotification(alert("a6")), fileSource);
      expect(hook.requests).toHaveLength(1);
      expect(lines(dlq)[0]).toMatchObject({ failure: "HTTP_REJECTED" });
    }
  });

  it("dead-letters after the last retryable failure (connection refused) and never writes a secret", async () => {
    const hook = await receiver();
    const url = hook.url;
    await hook.close();
    const { notifier, dlq, logs } = harness(config(url, { delivery: { attempts: 2 } }));
    await notifier.notify(alertNotification(alert("a7")), fileSource);
    expect(lines(dlq)[0]).toMatchObject({ failure: "CONNECTION" });
    const written = `${logs()}${readFileSync(dlq, "utf8")}`;
    expect(written).toContain("webhook delivery attempt failed");
    for (const secret of ["T000SECRETPATH", "QUERYSECRET", TOKEN]) expect(written).not.toContain(secret);
  });

  it("ends a delivery cut short by a stop without a dead letter, so the record is read again", async () => {
    const hook = await receiver(() => "hang");
    const stop = new AbortController();
    const { notifier, dlq } = harness(config(hook.url), stop.signal);
    setTimeout(() => stop.abort(), 100);
    expect(await notifier.notify(alertNotification(alert("a8")), fileSource)).toBe(false);
    expect(lines(dlq)).toEqual([]);
    expect(notifier.summary.aborted).toBe(1);
  });

  it("sends only what a webhook subscribed to, at its minimum severity", async () => {
    const hook = await receiver();
    const critical = {
      name: "critical-only",
      format: "json",
      url: { env: "HOOK_URL" },
      events: ["alert"],
      minSeverity: "critical",
    };
    const { notifier } = harness(config(hook.url, { extra: [critical] }));
    await notifier.notify(alertNotification(alert("w1", "warning")), fileSource);
    await notifier.notify(alertNotification(alert("c1", "critical")), fileSource);
    expect(hook.requests).toHaveLength(3);
  });
});

describe("Slack incoming-webhook format", () => {
  it("writes text and blocks with Slack's control characters escaped and the delivery key shown", () => {
    const notification = alertNotification(alert("s1"));
    const body = JSON.parse(webhookBody(notification, "slack")) as { text: string; blocks: { type: string }[] };
    expect(body.text).toContain("forced push to &lt;main&gt; &amp; co");
    expect(body.text).not.toContain("<main>");
    expect(body.blocks.map((block) => block.type)).toEqual(["section", "context"]);
    expect(JSON.stringify(body.blocks[1])).toContain(notification.deliveryKey);
  });
});

describe("LOW_COVERAGE transitions", () => {
  it("notifies on entering and on leaving LOW_COVERAGE only, and forgets a tombstoned key", () => {
    const transitions = new CoverageTransitions();
    expect(transitions.observe("k", result(false))).toBeNull();
    const entered = transitions.observe("k", result(true));
    expect(entered?.kind).toBe("low_coverage");
    expect(entered?.title).toContain("LOW_COVERAGE operational-latency-ms");
    expect(transitions.observe("k", result(true, 2))).toBeNull();
    expect(transitions.observe("k", result(false, 5))?.kind).toBe("coverage_recovered");
    transitions.observe("k", result(true));
    expect(transitions.observe("k", null)).toBeNull();
    expect(transitions.lowKeys).toBe(0);
  });

  it("keys a transition by the result key and its coverage counts", () => {
    const first = new CoverageTransitions().observe("k", result(true));
    const again = new CoverageTransitions().observe("k", result(true));
    const other = new CoverageTransitions().observe("k", result(true, 2));
    expect(again?.deliveryKey).toBe(first?.deliveryKey);
    expect(other?.deliveryKey).not.toBe(first?.deliveryKey);
  });
});

describe("file mode", () => {
  it("sends every alert and every LOW_COVERAGE result of a replay's files, skipping bad lines", async () => {
    const hook = await receiver();
    const { notifier, dir, logs } = harness(config(hook.url));
    const alerts = join(dir, "alerts.ndjson");
    const results = join(dir, "results.ndjson");
    const text = (records: unknown[]): string => records.map((record) => JSON.stringify(record)).join("\n");
    writeFileSync(alerts, text([alert("f1"), "not json", { other: 1 }, alert("f2")]).replace('"not json"', "not json"));
    writeFileSync(results, text([result(false), { ...result(true), cohort: { model: "m2" } }]));
    await notifyFromFiles({ alerts, results }, notifier, pino({ level: "silent" }));
    const kinds = hook.requests.map((request) => (JSON.parse(request.body) as { kind: string }).kind);
    expect(kinds).toEqual(["tripwire_alert", "tripwire_alert", "low_coverage"]);
    expect(logs()).not.toContain("QUERYSECRET");
  });
});

describe("webhook configuration", () => {
  const hook = { name: "ops", format: "json", url: { env: "HOOK_URL" } };

  it("names a missing variable, never a value", () => {
    expect(() => parseNotifyConfig({ webhooks: [hook] }, "hooks.json", {})).toThrow(/HOOK_URL is not set/);
  });

  it("reads a URL from a file and refuses a non-http scheme without repeating the URL", () => {
    const dir = mkdtempSync(join(tmpdir(), "agentops-notify-config-"));
    const path = join(dir, "url");
    writeFileSync(path, "https://hooks.example/T/SECRET\n");
    const loaded = parseNotifyConfig({ webhooks: [{ ...hook, url: { file: path } }] }, "hooks.json", {});
    expect(loaded.webhooks[0]?.url.href).toBe("https://hooks.example/T/SECRET");
    expect(loaded.delivery).toEqual({ attempts: 5, timeoutMs: 5_000, backoffMs: 500, maxBackoffMs: 8_000 });
    writeFileSync(path, "ftp://user:SECRET@hooks.example/");
    const fromFile = { webhooks: [{ ...hook, url: { file: path } }] };
    expect(() => parseNotifyConfig(fromFile, "hooks.json", {})).toThrow(/scheme is ftp:/);
    expect(() => parseNotifyConfig(fromFile, "hooks.json", {})).not.toThrow(/SECRET/);
  });

  it.each([
    ["a URL written into the file", { webhooks: [{ ...hook, url: "https://x" }] }, /webhooks.0.url/],
    ["two webhooks with one name", { webhooks: [hook, hook] }, /used twice/],
    ["an unbounded timeout", { webhooks: [hook], delivery: { timeoutMs: 3_600_000 } }, /delivery.timeoutMs/],
    ["an unknown field", { webhooks: [{ ...hook, secret: "x" }] }, /webhooks.0/],
  ])("refuses %s", (_, document, message) => {
    expect(() => parseNotifyConfig(document, "hooks.json", { HOOK_URL: "https://hooks.example/x" })).toThrow(message);
  });

  it("accepts the shipped example up to its secrets, which are the deployment's to provide", () => {
    const path = new URL("../../../ops/notify/webhooks.example.json", import.meta.url);
    const example: unknown = JSON.parse(readFileSync(path, "utf8"));
    const env = { AGENTOPS_WEBHOOK_URL: "https://hooks.example/json", AGENTOPS_WEBHOOK_TOKEN: "t" };
    const parse = (): unknown => parseNotifyConfig(example, "webhooks.example.json", env);
    expect(parse).toThrow(/webhooks\.1\.url: cannot read \/run\/secrets/);
  });

  it("redacts every secret from a text", () => {
    const secrets = ["/x/SECRET", "https://h/x/SECRET", "tok1"];
    const redacted = redactSecrets("POST https://h/x/SECRET failed, token tok1", secrets);
    expect(redacted).toBe("POST [redacted] failed, token [redacted]");
  });
});

describe("agentops notify flags", () => {
  const hooks = join(mkdtempSync(join(tmpdir(), "agentops-notify-flags-")), "hooks.json");
  const unset = { name: "ops", format: "json", url: { env: "NOTIFY_TEST_UNSET_URL" } };
  writeFileSync(hooks, JSON.stringify({ webhooks: [unset] }));

  it.each([
    [["--alerts", hooks, "--dlq", "d.ndjson"], "--webhooks"],
    [["--webhooks", hooks, "--dlq", "d.ndjson"], "--alerts"],
    [["--webhooks", hooks, "--alerts", hooks], "--dlq"],
    [["--webhooks", hooks, "--from-topics", "--dlq", "d.ndjson"], "--from-topics"],
    [["--webhooks", hooks, "--alerts", "/nonexistent/alerts.ndjson", "--dlq", "d.ndjson"], "--alerts"],
    [["--webhooks", hooks, "--alerts", hooks, "--dlq", "d.ndjson", "--log-level", "loud"], "--log-level"],
    [["--webhooks", hooks, "--alerts", hooks, "--dlq", "d.ndjson"], `${hooks} webhooks.0.url`],
    [["--webhooks", hooks, "--alerts", hooks, "--dlq", "d.ndjson", "--group", "g"], "--group"],
  ])("refuses %j naming the field and the fix", async (args, field) => {
    const escaped = field.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    await expect(notifyCommand.run(args)).rejects.toThrow(new RegExp(`^${escaped}: .*\\. Fix: `));
  });
});
