import { describe, expect, it } from "vitest";
import { isAgentEvent, type MetricFact } from "../../../src/contract/facts.ts";
import {
  DEFAULT_EXPORT_LIMITS,
  escapeLabelValue,
  renderOpenMetrics,
  sampleNames,
} from "../../../src/export/openmetrics.ts";
import type { MetricResult } from "../../../src/contract/result-record.ts";
import { evaluateFacts } from "../../support/evaluate-facts.ts";
import { parseOpenMetrics, type ParsedFamily, type ParsedSample } from "../../support/openmetrics-parser.ts";
import { parseAll, readSampleText } from "../workload/workload-support.ts";

const sampleResults: MetricResult[] = (() => {
  const { facts } = parseAll(
    readSampleText()
      .split("\n")
      .filter((line) => line.length > 0),
  );
  const metricFacts = facts.filter((fact): fact is MetricFact => !isAgentEvent(fact));
  return evaluateFacts(metricFacts).lines.map((line) => JSON.parse(line) as MetricResult);
})();

const day = (date: string) => {
  const start = `${date}T00:00:00.000Z`;
  return { kind: "window", start, end: new Date(Date.parse(start) + 86_400_000).toISOString() } as const;
};
const coverage = (numerator: number, denominator: number, alert = false): MetricResult["coverage"] => ({
  numerator,
  denominator,
  raw_ratio: denominator === 0 ? null : numerator / denominator,
  state: denominator === 0 ? "NO_POPULATION" : numerator === denominator ? "FULL" : "PARTIAL",
  alert,
  threshold_hundredths: 10,
});

function latency(cohort: Record<string, string>, options: Partial<MetricResult> = {}): MetricResult {
  return {
    catalog: "agentops.evaluation.metric-catalog@1.0.0",
    metric_id: "operational-latency-ms",
    metric_version: "1.0.0",
    scope: day("2026-10-01"),
    cohort,
    status: "PUBLISHED",
    value: 812.5,
    na_reason: null,
    measures: {
      numerator: null,
      denominator: null,
      categories: null,
      sum: 1625,
      contributing: 2,
      unit: "milliseconds",
      currency: null,
    },
    eligible_units: 2,
    minimum_sample: 1,
    coverage: coverage(2, 4),
    exclusions: {},
    as_of: "2026-10-01T10:00:00.000Z",
    ...options,
  };
}

function family(families: ParsedFamily[], name: string): ParsedSample[] {
  const found = families.find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no family ${name}`);
  return found.samples;
}

/** The cohort a sample's labels name, as the record's sorted-key JSON. */
const cohortOf = (sample: ParsedSample): string => {
  const notCohort = new Set(["metric", "scope_kind", "snapshot", "category", "reason"]);
  const coordinates = Object.entries(sample.labels).filter(
    ([name]) => !notCohort.has(name) && !name.startsWith("agentops_"),
  );
  return JSON.stringify(Object.fromEntries(coordinates.sort(([left], [right]) => (left < right ? -1 : 1))));
};

describe("renderOpenMetrics on the bundled sample's results", () => {
  const text = renderOpenMetrics(sampleResults);
  const families = parseOpenMetrics(text);

  it("parses strictly and serves every documented family", () => {
    expect(families.map((entry) => (entry.type === "info" ? `${entry.name}_info` : entry.name))).toEqual(sampleNames());
    expect(family(families, "agentops_metric_status").length).toBeGreaterThan(0);
  });

  it("exports the published values as recorded and never a value for N/A or below-minimum results", () => {
    const values = family(families, "agentops_metric_value");
    const statuses = family(families, "agentops_metric_status").filter((sample) => sample.value === 1);
    expect(statuses.length).toBeGreaterThan(0);
    const identity = (sample: ParsedSample): string =>
      JSON.stringify([sample.labels["metric"], sample.labels["snapshot"] ?? null, cohortOf(sample)]);
    const scopeEnd = (result: MetricResult): number =>
      Date.parse(result.scope.kind === "window" ? result.scope.end : result.scope.cutoff);
    for (const status of statuses) {
      const own = values.filter((sample) => identity(sample) === identity(status));
      const record = sampleResults
        .filter(
          (result) =>
            identity(status) ===
            JSON.stringify([
              result.metric_id,
              result.scope.kind === "snapshot" ? result.scope.snapshot_id : null,
              JSON.stringify(result.cohort),
            ]),
        )
        .sort((left, right) => scopeEnd(right) - scopeEnd(left))[0];
      const stated = status.labels["agentops_metric_status"];
      expect(record?.status).toBe(stated);
      if (stated !== "PUBLISHED") expect(own).toEqual([]);
      else if (typeof record?.value === "number") expect(own.map((sample) => sample.value)).toEqual([record.value]);
      else {
        const byCategory = Object.fromEntries(own.map((sample) => [sample.labels["category"], sample.value]));
        expect(byCategory).toEqual(record?.value);
      }
    }
    expect(statuses.some((sample) => sample.labels["agentops_metric_status"] === "NOT_AVAILABLE")).toBe(true);
    expect(statuses.some((sample) => sample.labels["agentops_metric_status"] === "BELOW_MINIMUM_SAMPLE")).toBe(true);
  });

  it("says why a NOT_AVAILABLE result has no value", () => {
    const reasons = family(families, "agentops_metric_na_reason");
    const notAvailable = family(families, "agentops_metric_status").filter(
      (sample) => sample.value === 1 && sample.labels["agentops_metric_status"] === "NOT_AVAILABLE",
    );
    expect(reasons).toHaveLength(notAvailable.length);
    for (const reason of reasons) expect(reason.labels["reason"]).toMatch(/\S/);
  });

  it("keeps money per currency, source and cost basis: one series per record, nothing summed", () => {
    const metric = "operational-attributable-cost";
    const money = family(families, "agentops_metric_value").filter((sample) => sample.labels["metric"] === metric);
    const records = sampleResults.filter((result) => result.metric_id === metric && result.status === "PUBLISHED");
    expect(new Set(money.map((sample) => sample.labels["currency"])).size).toBeGreaterThan(1);
    const exported = money.map((sample) => [cohortOf(sample), sample.value]).sort();
    expect(exported).toEqual(records.map((result) => [JSON.stringify(result.cohort), result.value]).sort());
    const any = expect.any(String) as unknown;
    for (const sample of money) expect(sample.labels).toMatchObject({ currency: any, source: any, cost_basis: any });
  });

  it("is the same text whatever order the records come in", () => {
    const reversed = [...sampleResults].reverse();
    const odd = sampleResults.filter((_, index) => index % 2 === 1);
    const interleaved = odd.concat(sampleResults.filter((_, index) => index % 2 === 0));
    expect(renderOpenMetrics(reversed)).toBe(text);
    expect(renderOpenMetrics(interleaved)).toBe(text);
  });
});

describe("renderOpenMetrics rules", () => {
  it("exports only the latest window of a metric", () => {
    const results = [
      latency({ model: "old" }, { scope: day("2026-10-01") }),
      latency({ model: "new" }, { scope: day("2026-10-02") }),
    ];
    const families = parseOpenMetrics(renderOpenMetrics(results));
    expect(family(families, "agentops_metric_value").map((sample) => sample.labels["model"])).toEqual(["new"]);
    const ends = family(families, "agentops_metric_scope_end_seconds").map((sample) => sample.value);
    expect(ends).toEqual([Date.parse("2026-10-03T00:00:00.000Z") / 1000]);
  });

  it("escapes label values so that they parse back to the recorded text", () => {
    const hostile = 'a"b\\c\nd}e,f="g';
    const families = parseOpenMetrics(renderOpenMetrics([latency({ model: hostile, provider: "p" })]));
    expect(family(families, "agentops_metric_value")[0]?.labels).toMatchObject({ model: hostile, provider: "p" });
    expect(escapeLabelValue('x"\\\n')).toBe('x\\"\\\\\\n');
  });

  it("folds cohorts over the limit, largest first, and counts them", () => {
    const results = [1, 5, 3, 4, 2].map((units) => latency({ model: `m${units}` }, { eligible_units: units }));
    const families = parseOpenMetrics(renderOpenMetrics(results, { ...DEFAULT_EXPORT_LIMITS, maxCohortsPerMetric: 2 }));
    const models = family(families, "agentops_metric_value").map((sample) => sample.labels["model"]);
    expect(models.sort()).toEqual(["m4", "m5"]);
    expect(family(families, "agentops_export_cohorts_folded")).toEqual([
      {
        name: "agentops_export_cohorts_folded",
        labels: { metric: "operational-latency-ms", scope_kind: "window" },
        value: 3,
      },
    ]);
    expect(family(families, "agentops_export_cohorts")[0]?.value).toBe(5);
  });

  it("folds a cohort it cannot label exactly instead of truncating or dropping a key", () => {
    const tooLong = "x".repeat(DEFAULT_EXPORT_LIMITS.maxLabelValueLength + 1);
    const results = [
      latency({ model: tooLong }),
      latency({ model: "ok", team: "t" }),
      latency({ model: "\uD800" }),
      latency({ model: "fine" }),
    ];
    const families = parseOpenMetrics(renderOpenMetrics(results));
    expect(family(families, "agentops_metric_value").map((sample) => sample.labels["model"])).toEqual(["fine"]);
    expect(family(families, "agentops_export_cohorts_folded")[0]?.value).toBe(3);
  });

  it("writes no value, ratio or as_of sample for what the record does not have, and says the status", () => {
    const missing = latency(
      {},
      {
        status: "NOT_AVAILABLE",
        value: null,
        measures: null,
        eligible_units: 0,
        na_reason: "N/A when no call",
        as_of: null,
        coverage: coverage(0, 0),
      },
    );
    const families = parseOpenMetrics(renderOpenMetrics([missing]));
    expect(family(families, "agentops_metric_value")).toEqual([]);
    expect(family(families, "agentops_metric_coverage_ratio")).toEqual([]);
    expect(family(families, "agentops_metric_as_of_seconds")).toEqual([]);
    const stated = family(families, "agentops_metric_status").filter((sample) => sample.value === 1);
    expect(stated.map((sample) => sample.labels["agentops_metric_status"])).toEqual(["NOT_AVAILABLE"]);
    expect(family(families, "agentops_metric_na_reason")[0]?.labels["reason"]).toBe("N/A when no call");
    expect(family(families, "agentops_metric_eligible_units")[0]?.value).toBe(0);
  });

  it("marks LOW_COVERAGE and exports coverage with its numerator and denominator", () => {
    const low = latency({ model: "m" }, { coverage: coverage(1, 20, true) });
    const families = parseOpenMetrics(renderOpenMetrics([low]));
    expect(family(families, "agentops_metric_low_coverage")[0]?.value).toBe(1);
    expect(family(families, "agentops_metric_coverage_ratio")[0]?.value).toBe(0.05);
    expect(family(families, "agentops_metric_coverage_numerator")[0]?.value).toBe(1);
    expect(family(families, "agentops_metric_coverage_denominator")[0]?.value).toBe(20);
    expect(family(families, "agentops_metric_coverage_threshold_ratio")[0]?.value).toBe(0.1);
  });

  it("ignores records of unknown metrics or scopes rather than labelling them", () => {
    const unknownMetric = latency({}, { metric_id: "not-a-metric" as MetricResult["metric_id"] });
    const unknownScope = latency({}, { scope: { kind: "weird" } as unknown as MetricResult["scope"] });
    const families = parseOpenMetrics(renderOpenMetrics([unknownMetric, unknownScope]));
    expect(families.flatMap((entry) => entry.samples)).toEqual([]);
  });
});

describe("renderOpenMetrics on records of the wrong shape (a results file is input)", () => {
  it("neither throws nor writes an unparsable line, and the order of the records still does not matter", () => {
    const odd = [
      { ...latency({ model: "a" }), na_reason: 42, status: "NOT_AVAILABLE" },
      { ...latency({ model: "b" }), eligible_units: undefined },
      { ...latency({ model: "c" }), eligible_units: undefined },
      { ...latency({ model: 7 as unknown as string }) },
      { ...latency({ model: "d" }), value: "high", coverage: {}, status: 3 },
      { ...latency({ model: "e" }), scope: { kind: "window", start: "not a time", end: "2026-10-02T00:00:00.000Z" } },
    ] as unknown as MetricResult[];
    const text = renderOpenMetrics(odd);
    expect(() => parseOpenMetrics(text)).not.toThrow();
    expect(renderOpenMetrics([...odd].reverse())).toBe(text);
  });
});

describe("the strict parser used above", () => {
  const good = '# TYPE a gauge\n# HELP a h\na{x="1"} 1\n# EOF\n';
  it("accepts a minimal exposition", () => {
    expect(parseOpenMetrics(good)[0]?.samples).toEqual([{ name: "a", labels: { x: "1" }, value: 1 }]);
  });
  it.each([
    ["no # EOF", good.replace("# EOF\n", "")],
    ["an unescaped quote", good.replace('x="1"', 'x="1"2"')],
    ["an unknown escape", good.replace('x="1"', 'x="\\t"')],
    ["a duplicate series", good.replace("# EOF", 'a{x="1"} 2\n# EOF')],
    ["a sample outside its family", good.replace("a{", "b{")],
    ["a bad number", good.replace("} 1", "} one")],
    ["an interleaved family", "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# TYPE a gauge\n# EOF\n"],
  ])("rejects %s", (_, text) => {
    expect(() => parseOpenMetrics(text)).toThrow();
  });
});
