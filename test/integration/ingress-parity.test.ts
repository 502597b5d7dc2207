import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { FACT_TYPES, OBSERVATION_CONTRACT } from "../../src/contract/fact-schema.ts";
import type { MetricFact } from "../../src/contract/facts.ts";
import { asReported } from "../../src/contract/parse-fact.ts";
import { formatTimestamp } from "../../src/contract/timestamp.ts";
import type { MetricResult } from "../../src/contract/result-record.ts";
import { topicNames } from "../../src/stream/topic-names.ts";
import { factsArb } from "../support/fact-arbitraries.ts";
import { factOf } from "../support/fact-records.ts";
import { closeAll, testKafka, uniqueName } from "../support/kafka.ts";
import {
  describeDifferences,
  killAllProcessors,
  readAlertIds,
  readDeadLetters,
  readLines,
  resultsByKey,
  runAgentopsOk,
  sortedUnique,
  startProcessor,
  stopProcessor,
  testDir,
  waitFor,
  waitForResults,
} from "../support/processes.ts";
import { IMPORTERS } from "../../src/ingest/importers/import-logs.ts";

/**
 * Issue #30: every ingress carries every fact the contract accepts. A file produced to Kafka
 * (`agentops produce`) and processed by `agentops run` on the real broker and registry gives the
 * results `agentops replay` gives for the same file, byte for byte, the same dead letters (reason
 * and field, as a multiset; a restated conflict once) and the same alerts: invalid measures of
 * every kind, nulls, rejected lines, re-reports and conflicts included, and what `agentops import`
 * writes.
 */

const PARITY_RUNS = Number(process.env["PARITY_RUNS"] ?? 3);
/** fast-check's seed of a failing run, to replay it. */
const PARITY_SEED = process.env["PARITY_SEED"];
const kafka = testKafka();

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
});

/** A dead letter as compared: its reason and field. */
function letterKey(reason: string, field: string | null): string {
  return `${reason} ${field ?? ""}`;
}

/** Letters the engine restates as a conflict's versions arrive; the replay file keeps the last. */
const RESTATED = new Set(["CONFLICT", "LATER_TERMINAL_SUMMARY"]);

/**
 * The letters to compare: one per restated conflict (what it names, e.g. "2 distinct records share
 * call a" or "delivery d3 has 3 TERMINAL summaries", without the count and the versions' positions).
 */
function comparedLetters(letters: readonly { reason: string; field: string | null; detail: string }[]): string[] {
  const conflicts = new Set<string>();
  const compared: string[] = [];
  for (const letter of letters) {
    if (RESTATED.has(letter.reason)) {
      const names = letter.detail.slice(0, letter.detail.indexOf(" (versions:")).replace(/\b\d+\b/, "#");
      const identity = `${letter.reason}\u0000${letter.field ?? ""}\u0000${names}`;
      if (conflicts.has(identity)) continue;
      conflicts.add(identity);
    }
    compared.push(letterKey(letter.reason, letter.field));
  }
  return compared.sort();
}

/** Checks the Kafka path against the file replay for one file; returns the counts compared. */
interface Compared {
  readonly results: number;
  readonly deadLetters: number;
  readonly alerts: number;
}

async function expectKafkaMatchesReplay(name: string, lines: readonly string[]): Promise<Compared> {
  const dir = testDir(`agentops-parity-${name}-`);
  const facts = join(dir, "facts.ndjson");
  writeFileSync(facts, `${lines.join("\n")}\n`);
  const replayResults = join(dir, "replay-results.ndjson");
  const replayDeadLetters = join(dir, "replay-dlq.ndjson");
  const replayAlerts = join(dir, "replay-alerts.ndjson");
  const outputs = ["--output", replayResults, "--dlq", replayDeadLetters, "--alerts", replayAlerts];
  await runAgentopsOk(["replay", "--input", facts, ...outputs]);
  const parsed = <T>(path: string): T[] => readLines(path).map((line) => JSON.parse(line) as T);
  const expected = resultsByKey(parsed<MetricResult>(replayResults));
  const expectedLetters = comparedLetters(parsed<{ reason: string; field: string; detail: string }>(replayDeadLetters));
  const expectedAlerts = sortedUnique(parsed<{ alert_id: string }>(replayAlerts).map((alert) => alert.alert_id));

  const prefix = uniqueName(`parity-${name}`);
  const topics = topicNames(prefix);
  const instance = await startProcessor({ topicPrefix: prefix, name: `parity-${name}`, dir });
  try {
    await runAgentopsOk(["produce", "--input", facts, "--topic-prefix", prefix]);
    const quiet = await waitForResults(kafka, topics.results, expected, 90_000);
    expect(quiet.comparison.differingKeys, describeDifferences(expected, quiet.actual, quiet.comparison)).toEqual([]);
    expect([...quiet.actual.keys()].sort()).toEqual([...expected.keys()].sort());
    expect(quiet.comparison.actualDigest).toBe(quiet.comparison.expectedDigest);
    let seen: string[] = [];
    await waitFor(
      `${expectedLetters.length} dead letters on ${topics.deadLetters}`,
      async () => {
        seen = comparedLetters(await readDeadLetters(kafka, topics.deadLetters));
        return seen.length >= expectedLetters.length ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    ).catch(() => undefined);
    expect(seen).toEqual(expectedLetters);
    let alerts: string[] = [];
    await waitFor(
      `${expectedAlerts.length} alerts on ${topics.alerts}`,
      async () => {
        alerts = await readAlertIds(kafka, topics.alerts);
        return alerts.length >= expectedAlerts.length ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    ).catch(() => undefined);
    expect(alerts).toEqual(expectedAlerts);
  } finally {
    await stopProcessor(instance, "SIGKILL");
  }
  return { results: expected.size, deadLetters: expectedLetters.length, alerts: expectedAlerts.length };
}

/** An accepted fact as a line of the file: as reported, timestamps in RFC 3339. */
function factLine(fact: MetricFact): string {
  const reported: Record<string, unknown> = { ...(asReported(fact) as unknown as Record<string, unknown>) };
  reported["event_time"] = formatTimestamp(fact.event_time);
  if (fact.type === "task_snapshot") reported["cutoff"] = formatTimestamp(fact.cutoff);
  return JSON.stringify(reported);
}

const direct = { basis: "DIRECT_HOST" };
const envelope = { contract: OBSERVATION_CONTRACT, event_time: "2026-10-01T10:00:00Z", provenance: direct };
const money = { amount_minor: 5, currency: "USD", source: "HOST", cost_basis: "list", attribution: "PROJECT" };
const cost = { type: "cost", ...money, estimated: false };
const call = { type: "model_call", run_id: "r1", operational: true, provider: "p", model: "m1", role: "writer" };
const packet = { type: "packet", governance_revision: "0.2", repair_attribution: "AVAILABLE" };
const summary = { type: "delivery_summary", status: "TERMINAL", outcome: "SUCCEEDED", requirement_changed: false };

/** Issue #30's refused facts: money measures null or absent, a null repair_attribution, values Avro cannot hold. */
const USER_CASES: readonly Record<string, unknown>[] = [
  { ...cost, fact_id: "u-cost-null-attribution", cost_id: "u1", delivery_id: "d1", attribution: null },
  { ...cost, fact_id: "u-cost-no-amount", cost_id: "u2", call_id: "a", amount_minor: undefined },
  { ...cost, fact_id: "u-cost-string-amount", cost_id: "u3", call_id: "b", amount_minor: "12" },
  { ...cost, fact_id: "u-cost-number-currency", cost_id: "u4", call_id: "c", currency: 840 },
  { ...cost, fact_id: "u-cost-bad-enum", cost_id: "u5", call_id: "a", source: "VENDOR" },
  { ...cost, fact_id: "u-cost-bad-types", cost_id: "u6", delivery_id: "d2", estimated: "no", cost_basis: 7 },
  { ...cost, fact_id: "u-cost-team", cost_id: "u7", delivery_id: "d2", attribution: "TEAM" },
  { ...packet, fact_id: "u-packet-null", packet_id: "u-p1", task_id: "t1", repair_attribution: null },
  { ...packet, fact_id: "u-packet-maybe", packet_id: "u-p2", repair_attribution: "MAYBE" },
  { ...call, fact_id: "u-call-odd", call_id: "u-c1", runtime: 42, span_duration_ms: "fast", input_tokens: 1.5 },
  { ...call, fact_id: "u-call-guess", call_id: "u-c3", runtime: "rt", usage_source: "GUESS" },
  { ...call, fact_id: "u-call-\ud800", call_id: "u-c2\udfff", runtime: "rt", span_duration_ms: 12 },
  { ...summary, fact_id: "u-summary-odd", delivery_id: "u-d1", elapsed_ms: "long", stage_reached: 3 },
].map((fields) => ({ ...envelope, ...fields }));
const USER_LINES = USER_CASES.map((record) => JSON.stringify(record));

/**
 * A file: the engine property tests' fact sets (links, conflicts, re-reports, invalid measures),
 * a few records of the contract's own random kind (rejected lines, nulls, unpaired surrogates,
 * malformed task entries), and the user's cases.
 */
const fileArb = fc
  .tuple(
    factsArb.filter((facts) => facts.some((fact) => fact.type === "model_call" && fact.operational)),
    fc.array(
      fc.constantFrom(...FACT_TYPES).chain((type) => factOf(type)),
      { maxLength: 6 },
    ),
    fc.subarray([...USER_LINES]),
  )
  .map(([facts, noise, user]) => [...facts.map(factLine), ...noise.map((record) => JSON.stringify(record)), ...user]);

describe("the Kafka path gives the file replay's results and dead letters", () => {
  it("the user's scenario: a workload with invalid measures, issue #30's refused facts, imports", async () => {
    const dir = testDir("agentops-parity-workload-");
    const workload = join(dir, "workload.ndjson");
    await runAgentopsOk(["generate", "--out", workload, "--facts", "1240", "--seed", "42"]);
    // `agentops import` followed by `produce`: one more ingress of the same path.
    const imported: string[] = [];
    const BASE_TIME = "2026-01-01T00:00:00Z";
    for (const format of Object.keys(IMPORTERS)) {
      const out = join(dir, `${format}.ndjson`);
      const sample = `samples/importers/${format}`;
      await runAgentopsOk(["import", format, sample, "--out", out, "--role", "implementer", "--base-time", BASE_TIME]);
      imported.push(...readLines(out));
    }
    expect(imported.length).toBeGreaterThan(0);
    const lines = [...readLines(workload), ...USER_LINES, ...imported];
    const compared = await expectKafkaMatchesReplay("workload", lines);
    expect(compared.results).toBeGreaterThan(100);
    expect(compared.deadLetters).toBeGreaterThan(USER_CASES.length);
    expect(compared.alerts).toBeGreaterThan(0);
  }, 240_000);

  it(`random files (${PARITY_RUNS} runs): the same results byte for byte, dead letters and alerts`, async () => {
    const total = { results: 0, deadLetters: 0 };
    await fc.assert(
      fc.asyncProperty(fileArb, async (lines) => {
        const compared = await expectKafkaMatchesReplay("random", lines);
        total.results += compared.results;
        total.deadLetters += compared.deadLetters;
      }),
      // Each run starts a processor on the broker: few runs, and no shrinking (the seed reproduces a failure).
      { numRuns: PARITY_RUNS, endOnFailure: true, ...(PARITY_SEED === undefined ? {} : { seed: Number(PARITY_SEED) }) },
    );
    expect(total.results).toBeGreaterThan(0);
    expect(total.deadLetters).toBeGreaterThan(0);
  }, 480_000);
});
