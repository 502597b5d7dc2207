import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Kafka } from "kafkajs";
import puppeteer, { type Browser, type ElementHandle } from "puppeteer-core";
import { afterAll, describe, expect, it } from "vitest";
import type { Explanation, UnitStatus } from "../../src/lineage/explanation.ts";
import { queryMember } from "../../src/explain/member-client.ts";
import { topicNames } from "../../src/stream/topic-names.ts";
import { ARTIFACT_DIR, chromiumPath, NO_BROWSER_REASON } from "../support/browser.ts";
import { expectUnitsAddUp } from "../support/explain-adds-up.ts";
import { closeAll, serviceEndpoints, testKafka, uniqueName } from "../support/kafka.ts";
import {
  describeDifferences,
  embeddedReplay,
  killAllProcessors,
  NODE,
  NODE_FLAGS,
  REPO_ROOT,
  runAgentopsOk,
  startProcessor,
  stopProcessor,
  testDir,
  waitFor,
  waitForResults,
} from "../support/processes.ts";

/**
 * The live view's lineage click in a real headless Chromium: `agentops serve --from-topics
 * --explain-member` beside a running member on the shared broker. Clicking a figure must open its
 * lineage with exactly the units, statuses and facts the member's `/explain` answers for that key.
 */
const browserPath = chromiumPath();
if (browserPath === undefined && process.env["CI"] === "true")
  throw new Error(`browser test cannot run in CI: ${NO_BROWSER_REASON}`);
if (browserPath === undefined) console.warn(`serve-explain-click browser test skipped: ${NO_BROWSER_REASON}`);

/** What the lineage panel lists per status: the first 20 units (lineage.js UNITS_SHOWN) and their facts. */
const UNITS_SHOWN = 20;

interface ShownLineage {
  readonly key: string | null;
  readonly totals: string;
  readonly statuses: { status: string; summary: string; units: { unit: string; facts: string[] }[] }[];
}

/** The panel a correct page draws from an explanation: statuses in the order their first unit appears. */
function expectedPanel(key: string, explanation: Explanation): ShownLineage {
  const t = explanation.totals;
  const byStatus = new Map<UnitStatus, Explanation["units"][number][]>();
  for (const unit of explanation.units) byStatus.set(unit.status, [...(byStatus.get(unit.status) ?? []), unit]);
  return {
    key,
    totals: `units add up to: covered ${t.covered} of ${t.candidates} candidates, eligible ${t.eligible}, hits ${t.hits}, sum ${t.amount}`,
    statuses: [...byStatus].map(([status, units]) => ({
      status,
      summary: `${status} (${units.length})`,
      units: units.slice(0, UNITS_SHOWN).map((unit) => ({
        unit: `${unit.kind} ${unit.id}`,
        facts: unit.facts.map((fact) => fact.fact_id),
      })),
    })),
  };
}

let kafka: Kafka | undefined;
let server: ChildProcess | undefined;
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
  server?.kill("SIGTERM");
  await killAllProcessors();
  await closeAll();
});

describe.skipIf(browserPath === undefined)("the live view's lineage click against a running member", () => {
  it(
    "clicking a figure shows the units and facts the member's /explain returns for its key",
    { timeout: 600_000 },
    async () => {
      const dir = testDir("agentops-explain-click-");
      const facts = join(dir, "facts.ndjson");
      await runAgentopsOk(["generate", "--out", facts, "--tasks", "60", "--seed", "11"]);
      const expected = await embeddedReplay(facts, dir);
      kafka = testKafka();
      const prefix = uniqueName("explain-click");
      const topics = topicNames(prefix);
      // A shared, loaded machine can take minutes to start a JVM-backed processor group.
      const member = await startProcessor({ topicPrefix: prefix, name: "explain-click", dir }, 300_000);
      await runAgentopsOk(["produce", "--input", facts, "--topic-prefix", prefix]);
      const quiet = await waitForResults(kafka, topics.results, expected.results, 180_000);
      expect(
        quiet.comparison.differingKeys,
        describeDifferences(expected.results, quiet.actual, quiet.comparison),
      ).toEqual([]);
      const memberUrl = `http://127.0.0.1:${String(member.metricsPort)}`;

      // A figure whose lineage has units in more than one status, each with facts: the panel must tell them apart.
      let key: string | undefined;
      for (const candidate of expected.results.keys()) {
        const answer = await queryMember(memberUrl, { key: candidate });
        if (answer.kind !== "explained") continue;
        const statuses = new Set(answer.explanation.units.map((unit) => unit.status));
        if (statuses.size >= 2 && answer.explanation.units.every((unit) => unit.facts.length > 0)) {
          key = candidate;
          break;
        }
      }
      if (key === undefined) throw new Error("no figure of the workload has units in two statuses");

      const { brokers, registryUrl } = serviceEndpoints();
      const child = spawn(
        NODE,
        [
          ...NODE_FLAGS,
          join(REPO_ROOT, "bin/agentops"),
          "serve",
          "--from-topics",
          "--topic-prefix",
          prefix,
          "--brokers",
          brokers.join(","),
          "--schema-registry",
          registryUrl,
          "--port",
          "0",
          "--explain-member",
          memberUrl,
        ],
        { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] },
      );
      server = child;
      let output = "";
      child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const url = await waitFor("the view's address on stdout", () => /view on (http:\/\/\S+)/.exec(output)?.[1], {
        timeoutMs: 90_000,
      });

      browser = await puppeteer.launch({
        executablePath: browserPath,
        headless: true,
        args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
      });
      const page = await browser.newPage();
      await page.setViewport({ width: 1440, height: 1400 });
      await page.goto(url, { waitUntil: "load" });
      await page.waitForFunction(
        `document.querySelectorAll("#metrics tr[data-key]").length === ${expected.results.size}`,
        { timeout: 90_000 },
      );

      // Nothing is shown before the click: a page that ignores it leaves the panel closed and the wait below fails.
      expect(await page.$eval("#lineage", (dialog) => dialog.hasAttribute("open"))).toBe(false);
      expect(await page.$$("#lineage-body [data-totals]")).toEqual([]);
      let cell: ElementHandle | null = null;
      for (const row of await page.$$("#metrics tr[data-key]"))
        if ((await row.evaluate((node) => node.getAttribute("data-key"))) === key)
          cell = await row.$("td:nth-child(4)");
      if (cell === null) throw new Error(`no figure on the page for ${key}`);
      await cell.click();
      await page.waitForSelector("#lineage-body [data-totals]", { timeout: 60_000 });

      const shown = await page.$eval("#lineage-body", (body): ShownLineage => {
        return {
          key: body.querySelector("[data-lineage-key]")?.getAttribute("data-lineage-key") ?? null,
          totals: body.querySelector("[data-totals]")?.textContent ?? "",
          statuses: [...body.querySelectorAll(":scope > details[data-status]")].map((details) => ({
            status: details.getAttribute("data-status") ?? "",
            summary: details.querySelector(":scope > summary")?.textContent ?? "",
            units: [...details.querySelectorAll(":scope > ul > li[data-unit]")].map((unit) => ({
              unit: unit.getAttribute("data-unit") ?? "",
              facts: [...unit.querySelectorAll("li[data-fact]")].map((fact) => fact.getAttribute("data-fact") ?? ""),
            })),
          })),
        };
      });
      expect(await page.$eval("#lineage", (dialog) => dialog.hasAttribute("open"))).toBe(true);

      // The member's own answer for the key, asked directly: the page must show exactly it.
      const answer = await queryMember(memberUrl, { key });
      if (answer.kind !== "explained") throw new Error(`the member did not explain ${key}`);
      expectUnitsAddUp(answer.explanation);
      expect(shown).toEqual(expectedPanel(key, answer.explanation));
      expect(shown.statuses.length).toBeGreaterThanOrEqual(2);

      mkdirSync(ARTIFACT_DIR, { recursive: true });
      await page.screenshot({ path: join(ARTIFACT_DIR, "serve-lineage.png") });
      expect(await stopProcessor(member, "SIGTERM")).toBe(0);
    },
  );
});
