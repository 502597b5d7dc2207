import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MetricResult } from "../../src/contract/result-record.ts";
import { resultKey } from "../../src/metrics/scope.ts";
import { createRunMonitor } from "../../src/tripwires/index.ts";
import { ARTIFACT_DIR, chromiumPath, NO_BROWSER_REASON } from "../support/browser.ts";
import { NODE, REPO_ROOT, testDir, waitFor } from "../support/processes.ts";
import { exec } from "../unit/tripwires/events.ts";

/**
 * `agentops serve` in a real headless Chromium over the bundled sample: the embedded replay's
 * files are written by the CLI, served by the CLI, and every figure the page shows is compared with
 * results.ndjson; an alert the run monitor raises during the test must appear without a reload.
 */
const browserPath = chromiumPath();
if (browserPath === undefined && process.env["CI"] === "true")
  throw new Error(`browser test cannot run in CI: ${NO_BROWSER_REASON}`);
if (browserPath === undefined) console.warn(`serve-view browser test skipped: ${NO_BROWSER_REASON}`);

const SAMPLE = join(REPO_ROOT, "samples/facts.ndjson");
const dir = testDir("agentops-serve-");
const files = {
  results: join(dir, "results.ndjson"),
  alerts: join(dir, "alerts.ndjson"),
  runs: join(dir, "runs.ndjson"),
};
let server: ChildProcess | undefined;
let url = "";
let browser: Browser | undefined;
let page: Page;

const readLines = <T>(path: string): T[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as T);

function runCli(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [join(REPO_ROOT, "bin/agentops"), ...args], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`agentops ${args[0]} exited ${code}: ${stderr}`)),
    );
  });
}

describe.skipIf(browserPath === undefined)("agentops serve in a headless browser", () => {
  beforeAll(async () => {
    // 6-hour windows give the window metrics a few points each, so the trends have something to draw.
    await runCli([
      "replay",
      "--input",
      SAMPLE,
      "--window",
      "6h",
      "--output",
      files.results,
      "--alerts",
      files.alerts,
      "--runs",
      files.runs,
    ]);
    const child = spawn(
      NODE,
      [
        join(REPO_ROOT, "bin/agentops"),
        "serve",
        "--results",
        files.results,
        "--alerts",
        files.alerts,
        "--runs",
        files.runs,
        "--port",
        "0",
      ],
      { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    server = child;
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    url = await waitFor("the view's address on stdout", () => /view on (http:\/\/\S+)/.exec(output)?.[1], {
      timeoutMs: 90_000,
    });
    browser = await puppeteer.launch({
      executablePath: browserPath,
      headless: true,
      args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
    });
    page = await browser.newPage();
    await page.setViewport({ width: 1440, height: 1400 });
    await page.goto(url, { waitUntil: "load" });
  });

  afterAll(async () => {
    await browser?.close();
    server?.kill("SIGTERM");
  });

  it("shows every result record with the figures of results.ndjson, never a zero for N/A or minimum-sample", async () => {
    const results = readLines<MetricResult>(files.results);
    expect(results.length).toBeGreaterThan(200);
    await page.waitForFunction(`document.querySelectorAll("#metrics tr[data-key]").length === ${results.length}`, {
      timeout: 60_000,
    });
    const shown = await page.$$eval("#metrics tr[data-key]", (rows) =>
      rows.map((row) => {
        const cells = row.querySelectorAll("td");
        return {
          key: row.getAttribute("data-key") ?? "",
          status: cells[2]?.textContent ?? "",
          value: cells[3]?.getAttribute("data-value"),
          valueText: cells[3]?.textContent ?? "",
          fraction: cells[4]?.querySelector(".fraction")?.textContent ?? "",
          state: cells[4]?.querySelector(".badge")?.textContent ?? "",
          low: cells[4]?.textContent?.includes("LOW_COVERAGE") ?? false,
          bar:
            cells[4]
              ?.querySelector(".bar > i")
              ?.getAttribute("style")
              ?.replace(/^width:\s*/, "")
              .replace(/;$/, "") ?? null,
        };
      }),
    );
    const byKey = new Map(shown.map((row) => [row.key, row]));
    expect(byKey.size).toBe(results.length);
    const statusText = {
      PUBLISHED: "published",
      BELOW_MINIMUM_SAMPLE: "below minimum sample",
      NOT_AVAILABLE: "N/A",
    } as const;
    const seen = { published: 0, belowMinimum: 0, notAvailable: 0, low: 0 };
    for (const result of results) {
      const row = byKey.get(resultKey(result.metric_id, result.scope, result.cohort));
      expect(row, `row for ${result.metric_id}`).toBeDefined();
      if (row === undefined) continue;
      expect(row.status).toBe(statusText[result.status]);
      expect(row.fraction).toBe(`${result.coverage.numerator}/${result.coverage.denominator}`);
      expect(row.state).toBe(result.coverage.state);
      expect(row.low).toBe(result.coverage.alert);
      // The bar's length is the record's raw_ratio (shown to a tenth of a percent); no population, no bar.
      if (result.coverage.raw_ratio === null) expect(row.bar).toBeNull();
      else expect(Number.parseFloat(row.bar ?? "")).toBeCloseTo(result.coverage.raw_ratio * 100, 1);
      if (result.status === "PUBLISHED") {
        seen.published += 1;
        expect(row.value).toBe(JSON.stringify(result.value));
        if (typeof result.value === "number") expect(Number(row.valueText.split(" ")[0])).toBeCloseTo(result.value, 3);
      } else {
        expect(row.value ?? null).toBeNull();
        expect(row.valueText).not.toMatch(/^0(\.0+)?$/);
        if (result.status === "BELOW_MINIMUM_SAMPLE") {
          seen.belowMinimum += 1;
          expect(row.valueText).toBe(
            `below minimum sample: ${result.eligible_units} of ${result.minimum_sample} eligible units`,
          );
        } else {
          seen.notAvailable += 1;
          expect(row.valueText).toBe(result.na_reason ?? "N/A");
        }
      }
      if (result.coverage.alert) seen.low += 1;
    }
    // The sample exercises every kind of record the page must tell apart.
    expect(seen.published).toBeGreaterThan(0);
    expect(seen.belowMinimum).toBeGreaterThan(0);
    expect(seen.notAvailable).toBeGreaterThan(0);
    expect(seen.low).toBeGreaterThan(0);
  });

  it("draws one trend chart per window metric and cohort, never joining cohorts", async () => {
    const results = readLines<MetricResult>(files.results).filter((result) => result.scope.kind === "window");
    const expected = new Set(
      results
        .filter((result) => result.value !== null)
        .map((result) => `${result.metric_id} ${JSON.stringify(result.cohort)}`),
    );
    const charts = await page.$$eval("#trends .chart", (nodes) =>
      nodes.map((node) => ({
        id: `${node.getAttribute("data-metric")} ${node.getAttribute("data-cohort")}`,
        canvas: node.querySelector("canvas") !== null,
      })),
    );
    expect(new Set(charts.map((chart) => chart.id))).toEqual(expected);
    expect(charts.length).toBe(expected.size);
    expect(charts.every((chart) => chart.canvas)).toBe(true);
  });

  it("shows the alerts per run with the run state, and an alert raised during the test appears live", async () => {
    const alerts = readLines<{ alert_id: string }>(files.alerts);
    await page.waitForFunction(`document.querySelectorAll("#runs [data-alert]").length === ${alerts.length}`, {
      timeout: 30_000,
    });
    expect(
      await page.$$eval("#runs .run .run-state", (nodes) =>
        nodes.every((node) => /steps, .* tool calls/.test(node.textContent ?? "")),
      ),
    ).toBe(true);

    // Mark this page load: a reload would lose the mark.
    await page.evaluate(() => ((globalThis as unknown as { loadMark: string }).loadMark = "first-load"));
    // The real run monitor raises the alert, and its output is appended as the replay writes it.
    const monitor = createRunMonitor();
    const outcome = monitor.process(exec("run-live-view-test", 1, "sudo rm -rf /"));
    const [alert] = outcome.alerts;
    expect(alert?.rule_id).toBe("fs-delete-critical-path");
    appendFileSync(files.alerts, `${JSON.stringify(alert)}\n`);
    appendFileSync(files.runs, `${JSON.stringify(outcome.runState)}\n`);

    const selector = `#runs [data-alert="${alert?.alert_id}"]`;
    await page.waitForSelector(selector, { timeout: 30_000 });
    const field = (name: string): Promise<string> =>
      page.$eval(`${selector} [data-field="${name}"]`, (node) => node.textContent ?? "");
    const rule = `fs-delete-critical-path@${alert?.rule_version ?? ""}`;
    const shown = [await field("kind"), await field("rule"), await field("severity")];
    expect(shown).toEqual(["DESTRUCTIVE", rule, "critical"]);
    expect(await field("evidence")).toContain("command: sudo rm -rf /");
    expect(await field("time")).toBe("2026-01-01 00:00:01Z");
    expect(await page.$eval('[data-run="run-live-view-test"] .run-state', (node) => node.textContent ?? "")).toContain(
      "alerts emitted 1",
    );
    expect(await page.evaluate(() => (globalThis as unknown as { loadMark?: string }).loadMark)).toBe("first-load");

    mkdirSync(ARTIFACT_DIR, { recursive: true });
    await page.screenshot({ path: join(ARTIFACT_DIR, "serve-view.png") });
    // The metrics table (values, N/A and minimum-sample reasons, coverage bars) of one metric.
    const table = await page.$('#metrics details[data-metric="role-template-rework-rate"]');
    await table?.screenshot({ path: join(ARTIFACT_DIR, "serve-metrics.png") });
  });

  it("a result the page cannot read is an error row with the reason; every other record is shown", async () => {
    const results = readLines<MetricResult>(files.results);
    const categorical = results.find(
      (result) => result.value !== null && typeof result.value === "object" && result.scope.kind === "window",
    );
    expect(categorical).toBeDefined();
    // Well-formed JSON of a result's shape whose share is a string (share.toFixed is not a function).
    const bad = { ...categorical, cohort: { ...categorical?.cohort, role: "unreadable-share" }, value: { ok: "0.5" } };
    appendFileSync(files.results, `${JSON.stringify(bad)}\n`);
    const row = await page.waitForSelector("#metrics tr[data-rejected]", { timeout: 30_000 });
    const text = await row?.evaluate((node) => node.querySelector(".reason")?.textContent);
    expect(text).toBe("record not shown: value: ok: expected a finite number");
    expect(await row?.evaluate((node) => node.getAttribute("data-rejected"))).toContain('"role":"unreadable-share"');
    expect(await row?.evaluate((node) => node.getAttribute("data-metric"))).toBe(categorical?.metric_id);
    expect(await page.$$eval("#metrics tr[data-key]", (rows) => rows.length)).toBe(results.length);
    expect(await page.$$eval("#trends .chart canvas", (nodes) => nodes.length)).toBeGreaterThan(0);
    expect(await page.$$eval("#runs [data-alert]", (nodes) => nodes.length)).toBeGreaterThan(0);
  });
});
