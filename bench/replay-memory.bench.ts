/**
 * Peak memory of `agentops replay` by input size, with the engine's state on disk (the default)
 * and in memory (`--state memory`): the replay runs as a child with bin/agentops's node flags, and
 * its /proc status is sampled every 250 ms for the peak anonymous RSS (the heap and native
 * allocations) beside the kernel's VmHWM (which also counts LMDB's mapped pages: page cache the
 * kernel reclaims under a memory limit). CPU seconds are the child's own (user + system), which a
 * shared machine's load disturbs less than wall time. Runs alternate between the states.
 *
 *   npm run bench:replay-memory -- --sizes 1000000,3000000 --states disk,memory --runs 1
 *
 * With `--audit PREFIX[,PREFIX…]` it measures the audit instead: `agentops replay --from-topic --verify
 * --topic-prefix PREFIX` over topics a pipeline filled (`npm run bench:kafka -- --facts N
 * --keep-topics` leaves them, and logs their prefix), which must exit 0 (the rebuild equals the
 * results topic). Brokers and registry come from the usual environment (AGENTOPS_BROKERS, …).
 *
 * `--memory-limit-mb N` runs each child in a memory cgroup of its own limited to N MiB, page cache
 * included, as a container's (bench/memory-cgroup.ts): LMDB's mapped pages count in RSS but the
 * kernel reclaims them under a limit, so a run that completes there fits N MiB.
 *
 * Writes the section "Replay memory by input size" of bench/RESULTS.md (not with --no-write).
 */
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { readProcStatus } from "../src/stream/runtime/proc-status.ts";
import { publishResultsSection } from "./results-section.ts";
import { BENCH_OUT, ensureWorkload } from "./workload-file.ts";
import { openMemoryCgroup, type MemoryCgroupUsage } from "./memory-cgroup.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const NODE = `${ROOT}node_modules/.bin/node`;
const HEADING = "## Replay memory by input size";
const MIB = 1024 ** 2;
const SAMPLE_MS = 250;
/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string =>
  argv.includes(name) ? (argv[argv.indexOf(name) + 1] ?? fallback) : fallback;
const SIZES = option("--sizes", "1000000,3000000").split(",").map(Number);
const STATES = option("--states", "disk,memory").split(",");
const RUNS = Number(option("--runs", "1"));
const AUDITS = option("--audit", "")
  .split(",")
  .filter((prefix) => prefix !== "");
const MEMORY_LIMIT_MB = Number(option("--memory-limit-mb", "0"));
/** Workload files already at hand, as `size=path,...` (else generated under bench/out/). */
const GIVEN = new Map(
  option("--inputs", "")
    .split(",")
    .filter((entry) => entry.includes("="))
    .map((entry) => [Number(entry.split("=")[0]), entry.slice(entry.indexOf("=") + 1)] as const),
);

/** The node flags bin/agentops runs with (its shebang line), so the replay runs as `npx agentops replay` does. */
const CLI_NODE_FLAGS = (readFileSync(`${ROOT}bin/agentops`, "utf8").split("\n")[0] ?? "")
  .split(/\s+/)
  .filter((word) => word.startsWith("--"));

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

interface Measured {
  readonly code: number | null;
  readonly wallSeconds: number;
  readonly cpuSeconds: number;
  readonly peakAnonBytes: number;
  readonly hwmBytes: number;
  readonly stderr: string;
  /** Under --memory-limit-mb: the cgroup's peak charge (page cache included) and its OOM kills. */
  readonly limited?: MemoryCgroupUsage;
}

/** The child's user + system CPU seconds so far (fields 14 and 15 of /proc/<pid>/stat). */
function cpuSecondsOf(pid: number): number | undefined {
  try {
    const fields =
      readFileSync(`/proc/${String(pid)}/stat`, "utf8")
        .split(") ")[1]
        ?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** What one measured child replays: a facts file, or (an audit) the topics under a prefix. */
type Replayed = { readonly input: string } | { readonly auditPrefix: string };

function replay(what: Replayed, state: string): Promise<Measured> {
  const output = `${BENCH_OUT}replay-memory.results.ndjson`;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const source =
      "input" in what
        ? ["--input", what.input]
        : ["--from-topic", "--verify", "--topic-prefix", what.auditPrefix, "--log-level", "warn"];
    const args = [...CLI_NODE_FLAGS, "bin/agentops", "replay", ...source, "--output", output, "--state", state];
    const cgroup =
      MEMORY_LIMIT_MB > 0
        ? openMemoryCgroup(`agentops-replay-${String(process.pid)}`, MEMORY_LIMIT_MB * MIB)
        : undefined;
    if (typeof cgroup === "string") {
      reject(new Error(`no memory limit could be set: ${cgroup}`));
      return;
    }
    const [file, fileArgs] = cgroup === undefined ? [NODE, args] : cgroup.wrap(NODE, args);
    const child = spawn(file, fileArgs, { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    let peakAnonBytes = 0;
    let hwmBytes = 0;
    let cpuSeconds = 0;
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const sample = (): void => {
      const status = child.pid === undefined ? undefined : readProcStatus(child.pid);
      peakAnonBytes = Math.max(peakAnonBytes, status?.("RssAnon") ?? 0);
      hwmBytes = Math.max(hwmBytes, status?.("VmHWM") ?? 0);
      cpuSeconds = (child.pid === undefined ? undefined : cpuSecondsOf(child.pid)) ?? cpuSeconds;
    };
    const timer = setInterval(sample, SAMPLE_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(timer);
      rmSync(output, { force: true });
      const limited = cgroup?.usage();
      cgroup?.close();
      const wallSeconds = (performance.now() - started) / 1000;
      resolve({
        code,
        wallSeconds,
        cpuSeconds,
        peakAnonBytes,
        hwmBytes,
        stderr,
        ...(limited === undefined ? {} : { limited }),
      });
    });
  });
}

const mib = (bytes: number): string => (bytes / MIB).toFixed(0);

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

/** What each row measures, by its label in the table. */
const subjects = new Map<string, Replayed>();
if (AUDITS.length > 0) for (const prefix of AUDITS) subjects.set(`audit of ${prefix}`, { auditPrefix: prefix });
else
  for (const size of SIZES)
    subjects.set(size.toLocaleString("en-US"), { input: GIVEN.get(size) ?? (await ensureWorkload(size, log)) });
const measured = new Map<string, Measured[]>();
for (let run = 0; run < RUNS; run++) {
  for (const [label, subject] of subjects) {
    for (const state of STATES) {
      log(`replay of ${label}, state ${state} (run ${String(run + 1)}/${String(RUNS)})…`);
      const result = await replay(subject, state);
      const limit =
        result.limited === undefined
          ? ""
          : `; under a ${String(MEMORY_LIMIT_MB)} MiB cgroup limit: peak ${mib(result.limited.peakBytes)} MiB, OOM kills ${String(result.limited.oomKills)}`;
      const memory = `peak RssAnon ${mib(result.peakAnonBytes)} MiB, VmHWM ${mib(result.hwmBytes)} MiB${limit}`;
      const line = `${result.wallSeconds.toFixed(0)} s wall, ${result.cpuSeconds.toFixed(0)} s CPU, ${memory}`;
      const failure = `failed (exit ${String(result.code)}): ${result.stderr.trim().split("\n").pop() ?? ""}`;
      log(`  ${result.code === 0 ? line : failure}`);
      const key = `${label}\u0000${state}`;
      measured.set(key, [...(measured.get(key) ?? []), result]);
    }
  }
}

const rows = [...measured.entries()].map(([key, results]) => {
  const [label = "", state = ""] = key.split("\u0000");
  const ok = results.filter((result) => result.code === 0);
  const limited =
    MEMORY_LIMIT_MB > 0 ? ` ${mib(Math.max(...results.map((result) => result.limited?.peakBytes ?? 0)))} |` : "";
  if (ok.length === 0) return `| ${label} | ${state} | failed | | | |${limited}`;
  const middle = (field: (result: Measured) => number): number => median(ok.map(field));
  const seconds = `${middle((result) => result.wallSeconds).toFixed(0)} | ${middle((result) => result.cpuSeconds).toFixed(0)}`;
  const memory = `${mib(middle((result) => result.peakAnonBytes))} | ${mib(middle((result) => result.hwmBytes))}`;
  return `| ${label} | ${state} | ${seconds} | ${memory} |${limited}`;
});
const section = [
  HEADING,
  "",
  `${new Date().toISOString().slice(0, 10)}, ${String(cpus().length)} cores, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB, ` +
    `load ${loadavg()[0]?.toFixed(1) ?? "?"} at the end (shared machine); ` +
    `\`npm run bench:replay-memory -- ${AUDITS.length > 0 ? `--audit ${AUDITS.join(",")}` : `--sizes ${SIZES.join(",")}`} --states ${STATES.join(",")} --runs ${String(RUNS)}${MEMORY_LIMIT_MB > 0 ? ` --memory-limit-mb ${String(MEMORY_LIMIT_MB)}` : ""}\`. ` +
    `Medians of ${String(RUNS)} run(s), alternating states.`,
  "",
  `| ${AUDITS.length > 0 ? "replayed" : "lines"} | state | wall s | CPU s | peak RssAnon MiB | VmHWM MiB |${MEMORY_LIMIT_MB > 0 ? " cgroup peak MiB |" : ""}`,
  `|---:|---|---:|---:|---:|---:|${MEMORY_LIMIT_MB > 0 ? "---:|" : ""}`,
  ...rows,
  "",
].join("\n");
publishResultsSection(HEADING, section, !argv.includes("--no-write"), log);
