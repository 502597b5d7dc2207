/**
 * Metric-engine benchmark (`npm run bench`): generates 100k, 1M and 5M-line workloads under
 * bench/out/ (reused when seed, size and generator sources are unchanged), then per size measures
 *   1. in-process engine throughput: facts parsed into memory first, then `engine.ingest` of every
 *      metric fact plus the final `results()` is timed (bench/engine-inprocess.ts, a child process
 *      so each size starts with a fresh heap);
 *   2. NDJSON replay end to end: `node bin/agentops replay --input <file> --output <tmp>` as a child
 *      process under /usr/bin/time -v: wall time and peak RSS.
 * Writes the section "Metric engine (in-process and NDJSON replay)" of bench/RESULTS.md.
 *
 *   node_modules/.bin/node bench/engine.bench.ts [--sizes 100000,1000000,5000000] [--no-write]
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { DEFAULT_SEED } from "../src/workload/workload.ts";
import { writeResultsSection } from "./results-section.ts";
import { workloadLineCount } from "./workload-lines.ts";
import { ensureWorkload } from "./workload-file.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const OUT = `${ROOT}bench/out/`;
const NODE = `${ROOT}node_modules/.bin/node`;
const RESULTS = `${ROOT}bench/RESULTS.md`;
const HEADING = "## Metric engine (in-process and NDJSON replay)";
/** Above this many lines, the in-process run reads only the first IN_PROCESS_CAP lines (memory). */
const IN_PROCESS_CAP = 1_000_000;
const REPLAY_TIMEOUT_MS = 12 * 60_000;
const TARGETS = { inProcessFactsPerSecond: 500_000, replayRecordsPerSecond: 200_000, rssAt1MBytes: 1.5 * 1024 ** 3 };

const argv = process.argv.slice(2);
const sizesArgument = argv.includes("--sizes") ? argv[argv.indexOf("--sizes") + 1] : undefined;
const SIZES = (sizesArgument ?? "100000,1000000,5000000").split(",").map(Number);
const writeResults = !argv.includes("--no-write");

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

interface ChildRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly seconds: number;
  readonly peakRssBytes: number | undefined;
}

/** Runs NODE with args under /usr/bin/time -v; peak RSS from "Maximum resident set size". */
/**
 * The node flags bin/agentops runs with (its shebang line, e.g. the heap limit), so the replay is
 * measured as `npx agentops replay` runs and not with node's defaults.
 */
const CLI_NODE_FLAGS: readonly string[] = (readFileSync(`${ROOT}bin/agentops`, "utf8").split("\n")[0] ?? "")
  .split(/\s+/)
  .filter((word) => word.startsWith("--"));

function runTimed(args: readonly string[], timeoutMs: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("/usr/bin/time", ["-v", NODE, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const seconds = (performance.now() - started) / 1000;
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1];
      resolve({ code, stdout, stderr, seconds, peakRssBytes: rss === undefined ? undefined : Number(rss) * 1024 });
    });
  });
}

interface InProcess {
  readonly lines: number;
  readonly facts: number;
  readonly parseSeconds: number;
  readonly ingestSeconds: number;
  readonly resultsSeconds: number;
  readonly results: number;
  readonly peakRssBytes: number;
}

interface Row {
  readonly size: number;
  readonly lines: number;
  readonly inProcess: InProcess | undefined;
  readonly inProcessNote: string;
  readonly replaySeconds: number | undefined;
  readonly replayRssBytes: number | undefined;
  readonly replayNote: string;
  /** 1-minute load average after each measurement: the machine is shared, so contention shows here. */
  readonly load: string;
}

async function measure(size: number): Promise<Row> {
  const path = await ensureWorkload(size, log);
  const lines = workloadLineCount(path);

  const capped = lines > IN_PROCESS_CAP * 1.01;
  log(
    `in-process engine on ${capped ? `the first ${IN_PROCESS_CAP.toLocaleString("en-US")} of ` : ""}${lines.toLocaleString("en-US")} lines…`,
  );
  const args = [
    "--max-old-space-size=16384",
    "bench/engine-inprocess.ts",
    path,
    ...(capped ? [String(IN_PROCESS_CAP)] : []),
  ];
  const child = await runTimed(args, REPLAY_TIMEOUT_MS);
  let inProcess: InProcess | undefined;
  let inProcessNote = capped
    ? `first ${IN_PROCESS_CAP.toLocaleString("en-US")} lines only (all ${lines.toLocaleString("en-US")} parsed facts plus engine state would not fit comfortably in memory)`
    : "";
  if (child.code === 0) {
    inProcess = JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}") as InProcess;
    const seconds = inProcess.ingestSeconds + inProcess.resultsSeconds;
    log(
      `  ${inProcess.facts.toLocaleString("en-US")} facts: ingest ${inProcess.ingestSeconds.toFixed(1)} s + results ${inProcess.resultsSeconds.toFixed(1)} s → ${Math.round(inProcess.facts / seconds).toLocaleString("en-US")} facts/s, peak RSS ${(inProcess.peakRssBytes / 1024 ** 2).toFixed(0)} MiB`,
    );
  } else {
    inProcessNote = `failed (exit ${String(child.code)}): ${lastLine(child.stderr)}`;
    log(`  ${inProcessNote}`);
  }

  const inProcessLoad = loadNow();
  log(`replay (node bin/agentops replay) on ${lines.toLocaleString("en-US")} lines…`);
  const output = `${OUT}replay-${size}.results.ndjson`;
  const replay = await runTimed(
    [...CLI_NODE_FLAGS, "bin/agentops", "replay", "--input", path, "--output", output],
    REPLAY_TIMEOUT_MS,
  );
  rmSync(output, { force: true });
  let replayNote = "";
  if (replay.code === 0) {
    log(
      `  ${replay.seconds.toFixed(1)} s → ${Math.round(lines / replay.seconds).toLocaleString("en-US")} records/s, peak RSS ${((replay.peakRssBytes ?? 0) / 1024 ** 2).toFixed(0)} MiB`,
    );
  } else {
    replayNote = `failed (exit ${String(replay.code)} after ${replay.seconds.toFixed(0)} s): ${lastLine(replay.stderr)}`;
    log(`  ${replayNote}`);
  }
  return {
    size,
    lines,
    inProcess,
    inProcessNote,
    replaySeconds: replay.code === 0 ? replay.seconds : undefined,
    replayRssBytes: replay.peakRssBytes,
    replayNote,
    load: `${inProcessLoad} / ${loadNow()}`,
  };
}

function loadNow(): string {
  return (loadavg()[0] ?? 0).toFixed(1);
}

function lastLine(stderr: string): string {
  const meaningful = stderr
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("\t") && !line.startsWith("Command "));
  return (meaningful.find((line) => /heap out of memory|Error/.test(line)) ?? meaningful.pop() ?? "")
    .trim()
    .slice(0, 160);
}

const mib = (bytes: number | undefined): string =>
  bytes === undefined ? "—" : `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
const rate = (count: number, seconds: number | undefined): string =>
  seconds === undefined || seconds <= 0 ? "—" : Math.round(count / seconds).toLocaleString("en-US");

function renderSection(rows: readonly Row[], date: string): string {
  const node = process.version;
  const machine = `nproc ${execFileSync("nproc", { encoding: "utf8" }).trim()}, ${cpus().length} CPUs (${cpus()[0]?.model ?? "unknown"}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, node ${node} (node_modules/.bin/node)`;
  const table = [
    "| lines (file) | metric facts ingested | parse (lines/s) | ingest + results() | in-process facts/s | in-process peak RSS | replay wall | replay records/s | replay peak RSS | load (1-min, after in-process / replay) |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map((row) => {
      const ip = row.inProcess;
      const engineSeconds = ip === undefined ? undefined : ip.ingestSeconds + ip.resultsSeconds;
      return `| ${row.lines.toLocaleString("en-US")} | ${ip === undefined ? "—" : ip.facts.toLocaleString("en-US")}${row.inProcessNote === "" ? "" : " ¹"} | ${ip === undefined ? "—" : rate(ip.lines, ip.parseSeconds)} | ${ip === undefined ? "—" : `${ip.ingestSeconds.toFixed(1)} s + ${ip.resultsSeconds.toFixed(1)} s`} | ${ip === undefined ? "—" : rate(ip.facts, engineSeconds)} | ${mib(ip?.peakRssBytes)} | ${row.replaySeconds === undefined ? row.replayNote : `${row.replaySeconds.toFixed(1)} s`} | ${rate(row.lines, row.replaySeconds)} | ${mib(row.replayRssBytes)} | ${row.load} |`;
    }),
  ];
  const notes = rows
    .filter((row) => row.inProcessNote !== "")
    .map((row) => `¹ ${row.lines.toLocaleString("en-US")}-line file: in-process run on the ${row.inProcessNote}.`);
  const at1M = rows.find((row) => row.size === 1_000_000);
  const verdicts = [
    `- in-process ≥ ${TARGETS.inProcessFactsPerSecond.toLocaleString("en-US")} facts/s: ${rows.map((row) => (row.inProcess === undefined ? "—" : `${rate(row.inProcess.facts, row.inProcess.ingestSeconds + row.inProcess.resultsSeconds)}`)).join(" / ")} → ${rows.every((row) => row.inProcess !== undefined && row.inProcess.facts / (row.inProcess.ingestSeconds + row.inProcess.resultsSeconds) >= TARGETS.inProcessFactsPerSecond) ? "met" : "**missed**"}`,
    `- replay ≥ ${TARGETS.replayRecordsPerSecond.toLocaleString("en-US")} records/s: ${rows.map((row) => rate(row.lines, row.replaySeconds)).join(" / ")} → ${rows.every((row) => row.replaySeconds !== undefined && row.lines / row.replaySeconds >= TARGETS.replayRecordsPerSecond) ? "met" : "**missed**"}`,
    `- peak RSS ≤ 1.5 GiB at 1M: replay ${mib(at1M?.replayRssBytes)} → ${at1M?.replayRssBytes !== undefined && at1M.replayRssBytes <= TARGETS.rssAt1MBytes ? "met" : "**missed**"}`,
  ];
  return [
    HEADING,
    "",
    `Measured ${date} on ${machine}. Workload: \`agentops generate --facts N --seed ${DEFAULT_SEED}\` (≈ 79% metric facts, 21% agent events, 0.08% rejected lines).`,
    "",
    "Command: `npm run bench` (= `node_modules/.bin/node bench/engine.bench.ts`; files reused from bench/out/ when unchanged).",
    "",
    "In-process = facts parsed into memory first (parse rate shown separately), then `engine.ingest` of every metric fact + one final `results()`, timed, in a fresh child process (`bench/engine-inprocess.ts`). Replay = `node bin/agentops replay --input <file> --output <tmp>` end to end (read, parse, engine, run monitor, write) under `/usr/bin/time -v`; records/s counts every line of the file.",
    "",
    ...table,
    "",
    ...notes,
    ...(notes.length > 0 ? [""] : []),
    `The machine (${cpus().length} CPUs) is shared with other work while this runs (Kafka, registry, other benchmarks and tests): the load column shows how contended each measurement was; with load above the CPU count, throughput figures are lower bounds.`,
    "",
    `Growth (per size, in order): in-process facts/s ${rows.map((row) => (row.inProcess === undefined ? "—" : rate(row.inProcess.facts, row.inProcess.ingestSeconds + row.inProcess.resultsSeconds))).join(" → ")}; in-process peak RSS ${rows.map((row) => mib(row.inProcess?.peakRssBytes)).join(" → ")}; replay records/s ${rows.map((row) => rate(row.lines, row.replaySeconds)).join(" → ")}; replay peak RSS ${rows.map((row) => mib(row.replayRssBytes)).join(" → ")}. Replay peak RSS grows linearly with the facts held (the engine keeps every accepted fact so late data stays exact): bin/agentops raises node's heap limit for that reason.`,
    "",
    "Targets:",
    ...verdicts,
    "",
  ].join("\n");
}

mkdirSync(OUT, { recursive: true });
const date = execFileSync("date", ["-u"], { encoding: "utf8" }).trim();
const rows: Row[] = [];
for (const size of SIZES) rows.push(await measure(size));
const section = renderSection(rows, date);
process.stdout.write(`${section}\n`);
if (writeResults) {
  writeResultsSection(HEADING, section);
  log(`wrote section to ${RESULTS}`);
}
