/**
 * The restore of an engine partition without local state, in process (`npm run bench:restore`,
 * issue #13: "a member restoring a partition from changelogs reports its restore rate"). On the
 * generated workload (bench/out/), each step a fresh child process (bench/engine-restore-run.ts):
 *   1. once: the engine task over every metric fact, flushing every batch as a member at the head
 *      of its stream does, writing the contributions changelog it sends to a file, and that log
 *      compacted (the last record per key);
 *   2. R times, alternating: a member with an empty store restoring from the log as written, then
 *      from the compacted log: the log loaded (records/s), the facts before its marker loaded
 *      without evaluating a unit (facts/s; decoded from engine-facts records, as a member reads
 *      them), going live (the whole result table rendered), each phase's CPU seconds, and the
 *      peak anonymous RSS.
 * No broker: the member's Kafka reads are measured by `bench:peer`, which restores the same way
 * over the topics. Writes the section "Engine restore without local state, in process" of
 * bench/RESULTS.md.
 *
 *   node bench/engine-restore.bench.ts [--facts 200000] [--runs 2] [--cache-mb 16 (agentops run's default)] [--no-write]
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { DEFAULT_STATE_CACHE_MB } from "../src/stream/runtime/stream-config.ts";
import type { LogReport, RestoreReport } from "./engine-restore-run.ts";
import { wholeNumberOption } from "./bench-args.ts";
import { publishResultsSection } from "./results-section.ts";
import { BENCH_OUT, ensureWorkload } from "./workload-file.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const NODE = `${ROOT}node_modules/.bin/node`;
const RUNNER = `${ROOT}bench/engine-restore-run.ts`;
const HEADING = "## Engine restore without local state, in process (issue #13)";
const MIB = 1024 ** 2;

const argv = process.argv.slice(2);
const option = (name: string, fallback: number): number => wholeNumberOption(argv, name, fallback);
const FACTS = option("--facts", 200_000);
const RUNS = option("--runs", 2);
const CACHE_MB = option("--cache-mb", DEFAULT_STATE_CACHE_MB);
const writeResults = !argv.includes("--no-write");
const log = (message: string): void =>
  void process.stderr.write(`[bench:restore ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** This sitting's files (by process id: two sittings at once must not delete each other's). */
const WORK = `${BENCH_OUT}engine-restore/${String(process.pid)}/`;

function run<T>(args: readonly string[]): T {
  // The engine's node flags as `agentops run` starts it (bin/agentops): the same young generation and malloc arenas.
  const output = execFileSync(NODE, ["--max-semi-space-size=16", RUNNER, ...args], {
    env: { ...process.env, MALLOC_ARENA_MAX: "2" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 20,
  });
  return JSON.parse(output.trim().split("\n").at(-1) ?? "") as T;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
const rate = (count: number, seconds: number): string => Math.round(count / seconds).toLocaleString("en-US");

const workload = await ensureWorkload(FACTS, log);
mkdirSync(WORK, { recursive: true });
const logFile = `${WORK}contributions.log`;
try {
  log(`writing the contributions log of ${workload} (engine over every metric fact, cache ${String(CACHE_MB)} MiB)`);
  const written = run<LogReport>([
    "log",
    "--workload",
    workload,
    "--dir",
    `${WORK}writer`,
    "--log",
    logFile,
    "--cache-mb",
    String(CACHE_MB),
  ]);
  rmSync(`${WORK}writer`, { recursive: true, force: true });
  log(
    `${written.records.toLocaleString("en-US")} records (${written.compactedRecords.toLocaleString("en-US")} compacted) for ${written.facts.toLocaleString("en-US")} facts in ${written.seconds.toFixed(1)} s`,
  );
  const rows: { log: "as written" | "compacted"; report: RestoreReport }[] = [];
  for (let index = 0; index < RUNS; index++) {
    for (const which of ["as written", "compacted"] as const) {
      const dir = `${WORK}member`;
      rmSync(dir, { recursive: true, force: true });
      const report = run<RestoreReport>([
        "restore",
        "--facts",
        `${logFile}.facts`,
        "--dir",
        dir,
        "--log",
        which === "compacted" ? `${logFile}.compacted` : logFile,
        "--cache-mb",
        String(CACHE_MB),
      ]);
      rmSync(dir, { recursive: true, force: true });
      rows.push({ log: which, report });
      log(
        `run ${String(index + 1)}, log ${which}: log ${report.logRecords.toLocaleString("en-US")} records in ${report.logSeconds.toFixed(1)} s (CPU ${report.logCpuSeconds.toFixed(1)} s), facts ${report.facts.toLocaleString("en-US")} in ${report.factsSeconds.toFixed(1)} s (CPU ${report.factsCpuSeconds.toFixed(1)} s), live ${report.goLiveSeconds.toFixed(1)} s (results ${report.resultsDigest}), peak RssAnon ${String(Math.round(report.peakRssAnonBytes / MIB))} MiB`,
      );
    }
  }
  const byLog = (which: "as written" | "compacted"): RestoreReport[] =>
    rows.filter((row) => row.log === which).map((row) => row.report);
  const summary = (["as written", "compacted"] as const).map((which) => {
    const reports = byLog(which);
    const logSeconds = median(reports.map((report) => report.logSeconds));
    const factsSeconds = median(reports.map((report) => report.factsSeconds));
    const cpu = (seconds: number): string => seconds.toFixed(1);
    const logCpu = cpu(median(reports.map((report) => report.logCpuSeconds)));
    const factsCpu = cpu(median(reports.map((report) => report.factsCpuSeconds)));
    const total = median(reports.map((report) => report.logSeconds + report.factsSeconds + report.goLiveSeconds));
    const first = reports[0] as RestoreReport;
    return `| ${which} | ${first.logRecords.toLocaleString("en-US")} | ${first.units.toLocaleString("en-US")} | ${logSeconds.toFixed(1)} (${logCpu}) | ${rate(first.logRecords, logSeconds)} | ${first.facts.toLocaleString("en-US")} | ${factsSeconds.toFixed(1)} (${factsCpu}) | ${rate(first.facts, factsSeconds)} | ${first.results.toLocaleString("en-US")} | ${median(reports.map((report) => report.goLiveSeconds)).toFixed(1)} | ${total.toFixed(1)} | ${reports.map((report) => String(Math.round(report.peakRssAnonBytes / MIB))).join(" / ")} MiB |`;
  });
  const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  const section = [
    HEADING,
    "",
    `- Date: ${new Date().toISOString()} (commit ${commit}). Machine: ${String(cpus().length)} cores (${cpus()[0]?.model.trim() ?? "?"}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB, Node ${process.version}; load average ${loadavg()
      .map((value) => value.toFixed(1))
      .join(" / ")} at the end.`,
    `- Command: \`npm run bench:restore -- --facts ${String(FACTS)} --runs ${String(RUNS)}${CACHE_MB === DEFAULT_STATE_CACHE_MB ? "" : ` --cache-mb ${String(CACHE_MB)}`}\`; workload ${workload.slice(ROOT.length)} (${(statSync(workload).size / MIB).toFixed(0)} MiB), state cache ${String(CACHE_MB)} MiB.`,
    `- The log: ${written.records.toLocaleString("en-US")} records as the engine task sent them flushing every batch of 500 of ${written.facts.toLocaleString("en-US")} metric facts, as live (${written.seconds.toFixed(1)} s), ${written.compactedRecords.toLocaleString("en-US")} once compacted.`,
    `- Each row: the median of ${String(RUNS)} restore${RUNS === 1 ? "" : "s"} of a member with an empty store (LMDB), alternating with the other row; the peak anonymous RSS of each run. The facts are read as engine-facts records (the binary layout a member decodes), written by the log step.`,
    "",
    "| log | records | units restored | log load, s (CPU s) | records/s | facts loaded | facts load, s (CPU s) | facts/s | results | going live, s | restore, s | peak RssAnon |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...summary,
    "",
  ].join("\n");
  publishResultsSection(HEADING, section, writeResults, log);
} finally {
  rmSync(WORK, { recursive: true, force: true });
}
