import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { MetricId } from "../../../src/catalog/metric-definitions.ts";
import type { Cohort, MetricResult, Scope } from "../../../src/contract/result-record.ts";
import { formatMetricTable, metricRows } from "../../../src/cli/replay-summary.ts";
import { formatGroupedResults } from "../../../src/cli/result-rows.ts";
import { formatTable, wrapText } from "../../../src/cli/text-table.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;

function result(
  metric: string,
  scope: Scope,
  cohort: Cohort,
  coverage: [number, number],
  fields: Partial<MetricResult> = {},
): MetricResult {
  const [numerator, denominator] = coverage;
  return {
    catalog: "agentops.evaluation.metric-catalog@1.0.0",
    metric_id: metric as MetricId,
    metric_version: "1.0.0",
    scope,
    cohort,
    status: "PUBLISHED",
    value: 100,
    na_reason: null,
    measures: null,
    eligible_units: numerator,
    minimum_sample: 1,
    coverage: {
      numerator,
      denominator,
      raw_ratio: denominator === 0 ? null : numerator / denominator,
      state: numerator === denominator ? "FULL" : "PARTIAL",
      alert: false,
      threshold_hundredths: 10,
    },
    exclusions: {},
    as_of: null,
    ...fields,
  };
}

const day = (date: string): Scope => ({
  kind: "window",
  start: `${date}T00:00:00.000Z`,
  end: `${new Date(Date.parse(`${date}T00:00:00.000Z`) + 86_400_000).toISOString()}`,
});
const MONEY_COHORTS: Cohort[] = ["USD", "EUR", "JPY"].flatMap((currency) =>
  ["list-price", "host-metered"].map((basis) => ({ cost_basis: basis, currency, source: "PROVIDER" })),
);

describe("replay summary: coverage per result key, never pooled", () => {
  // The shape of seed 101's trajectory-partial-cost: every money cohort of a window shares one
  // Delivery population, so the old pooled column summed the same units once per cohort and window.
  const results = [
    ...MONEY_COHORTS.map((cohort) => result("trajectory-partial-cost", day("2026-10-01"), cohort, [59, 141])),
    ...MONEY_COHORTS.map((cohort) => result("trajectory-partial-cost", day("2026-10-02"), cohort, [80, 90])),
  ];

  it("names the lowest coverage with its scope and cohort, not the sum over cohorts and windows", () => {
    const [row] = metricRows(results);
    expect(row?.lowest?.coverage.numerator).toBe(59);
    expect(row?.lowest?.coverage.denominator).toBe(141);
    expect(row?.lowest?.scope).toBe("2026-10-01 +1d");
    expect(row?.lowest?.cohort).toBe("cost_basis=list-price, currency=USD, source=PROVIDER");
    const table = formatMetricTable(metricRows(results), 120);
    expect(table).toContain("59/141 PARTIAL");
    const pooled = `${6 * 59 + 6 * 80}/${6 * 141 + 6 * 90}`;
    expect(table).not.toContain(pooled);
  });

  it("counts results by status and LOW_COVERAGE alerts, and skips results without a population", () => {
    const mixed = [
      result("m", day("2026-10-01"), {}, [0, 0], {
        status: "NOT_AVAILABLE",
        value: null,
        na_reason: "N/A when nothing",
      }),
      result("m", day("2026-10-01"), { role: "a" }, [2, 4], {
        status: "BELOW_MINIMUM_SAMPLE",
        value: null,
        minimum_sample: 20,
      }),
      result("m", day("2026-10-01"), { role: "b" }, [1, 40], {
        coverage: {
          numerator: 1,
          denominator: 40,
          raw_ratio: 0.025,
          state: "PARTIAL",
          alert: true,
          threshold_hundredths: 10,
        },
      }),
    ];
    const [row] = metricRows(mixed);
    expect(row).toMatchObject({ records: 3, published: 1, belowMinimum: 1, notAvailable: 1, coverageAlerts: 1 });
    expect(row?.lowest?.cohort).toBe("role=b");
    expect(metricRows([mixed[0] as MetricResult])[0]?.lowest).toBeUndefined();
  });
});

describe("tables that fit a terminal", () => {
  it("wraps at spaces and hard-breaks only words longer than the width", () => {
    expect(wrapText("alpha beta gamma", 10)).toEqual(["alpha beta", "gamma"]);
    expect(wrapText("abcdefghijkl", 5)).toEqual(["abcde", "fghij", "kl"]);
  });

  it("narrows only the wrappable columns and continues their cells on the next lines", () => {
    const table = formatTable(["name", "text"], [["a", "one two three four five six seven eight nine ten"]], {
      width: 30,
      wrap: [1],
    });
    const lines = table.split("\n");
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(30);
    expect(lines.slice(2).join(" ").replace(/\s+/g, " ").trim()).toBe(
      "a one two three four five six seven eight nine ten",
    );
  });

  it("groups by metric with the shared cohort keys in the heading, N/A and minimum-sample rows said as such", () => {
    const rows = [
      result(
        "metric-a",
        day("2026-10-01"),
        { currency: "USD", model: "a-very-long-model-name-that-goes-on", source: "HOST" },
        [5, 10],
      ),
      result("metric-a", day("2026-10-01"), { currency: "USD", model: "b", source: "HOST" }, [3, 10], {
        status: "BELOW_MINIMUM_SAMPLE",
        value: null,
        eligible_units: 3,
        minimum_sample: 20,
      }),
      result("metric-a", day("2026-10-01"), {}, [0, 7], {
        status: "NOT_AVAILABLE",
        value: null,
        na_reason: "N/A when no unit has a cost",
      }),
    ];
    const text = formatGroupedResults(rows, 80);
    expect(Math.max(...text.split("\n").map((line) => line.length))).toBeLessThanOrEqual(80);
    expect(text).toContain("every cohort: currency=USD, source=HOST");
    expect(text).toContain("cohort = model");
    expect(text).toMatch(/below-min\s+below minimum/);
    expect(text).toContain("3 of 20");
    expect(text).toMatch(/n\/a\s+N\/A when no unit/);
  });
});

describe("npm start's replay output", () => {
  it(
    "fits 120 columns, and its lowest coverage per metric is the minimum over results.ndjson",
    { timeout: 180_000 },
    () => {
      const dir = mkdtempSync(join(tmpdir(), "agentops-tables-"));
      const output = join(dir, "results.ndjson");
      // The arguments of `npm start`, read from package.json so the test follows the script.
      const script =
        (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts[
          "start"
        ] ?? "";
      const args = script
        .replace(/^node bin\/agentops /, "")
        .split(" ")
        .map((arg) => (arg.startsWith("out/") ? join(dir, arg.slice(4)) : arg));
      expect(args).toContain("grouped");
      const run = spawnSync(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "bin/agentops"), ...args], {
        encoding: "utf8",
        cwd: ROOT,
      });
      expect(run.status, run.stderr).toBe(0);
      const lines = run.stdout.split("\n");
      expect(lines.length).toBeGreaterThan(200);
      expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(120);

      const results = readFileSync(output, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as MetricResult);
      const trajectory = results.filter(
        (entry) => entry.metric_id === "trajectory-partial-cost" && entry.coverage.denominator > 0,
      );
      const lowest = trajectory.reduce((low, entry) =>
        entry.coverage.numerator * low.coverage.denominator < low.coverage.numerator * entry.coverage.denominator
          ? entry
          : low,
      );
      const summaryLine = lines.find((line) => /^trajectory-partial-cost\s+\d/.test(line)) ?? "";
      expect(summaryLine).toContain(` ${lowest.coverage.numerator}/${lowest.coverage.denominator} `);
      const pooled = `${trajectory.reduce((sum, entry) => sum + entry.coverage.numerator, 0)}/${trajectory.reduce((sum, entry) => sum + entry.coverage.denominator, 0)}`;
      expect(summaryLine).not.toContain(pooled);
    },
  );
});
