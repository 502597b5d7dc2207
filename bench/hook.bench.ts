/**
 * `npm run bench:hook`: latency of `agentops hook claude-code`.
 *
 * - Warm: the HTTP form (`--listen`), which Claude Code calls as a `"type": "http"` hook: one
 *   process, analysers loaded once in worker threads. Round trip measured by the client (fetch on
 *   localhost), over a mix of documented PreToolUse inputs, sequentially. Two mixes: commands an
 *   agent repeats (the analyser's memo hits) and commands never seen before (every one parsed).
 * - Crafted: the hostile inputs of issue #31 against the same warm server with the default 500 ms
 *   deadline; each must be answered (deny or ask) within the deadline + 50 ms.
 * - Loop guard: two warm servers, `--loop-guard ask` and off, called alternately with the same
 *   session of PreToolUse calls; the guarded one also takes each call's PostToolUse(Failure).
 * - Command form, one process per call, as a `"type": "command"` hook runs it: forwarded to the
 *   warm server of its spool (the thin client); judged in process (`--warm-server off`); and with
 *   no server at first (`--warm-server auto`): the first call, then the calls once the server it
 *   started is up. Reference: a bare Node start (`node -e 0`), measured alternately with them.
 *
 * Target (issue #11): p99 < 50 ms warm. Spools to a temp dir (no Kafka), like a laptop.
 *
 *   node bench/hook.bench.ts [--no-write]
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { freePort } from "../test/support/free-port.ts";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { argv } from "node:process";
import { fileURLToPath } from "node:url";
import { publishResultsSection } from "./results-section.ts";
import { readServerFile } from "../src/ingest/hook/hook-settings.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const NODE = join(ROOT, "node_modules/.bin/node");
const AGENTOPS = join(ROOT, "bin/agentops");
const WARMUP = 200;
const MEASURED = 2_000;
const COMMAND_RUNS = 30;
const IN_PROCESS_RUNS = 10;
const CRAFTED_RUNS = 5;
const GUARD_WARMUP = 100;
const GUARD_MEASURED = 1_000;
const DEADLINE_MS = 500;
const HOOK_ARGV = ["--disable-warning=ExperimentalWarning", AGENTOPS, "hook", "claude-code"];
const HEADING = "## Claude Code hook: latency and crafted input (issue #31)";

/** The inputs of issue #31, and an ordinary line at the parser's size bound. */
const CRAFTED: Readonly<Record<string, string>> = {
  "`rm -rf /` + 4,000 × ` && true` (33 KB)": `rm -rf /${" && true".repeat(4_000)}`,
  "5,000 nested subshells": `${"(".repeat(5_000)}rm -rf /${")".repeat(5_000)}`,
  "7,000 nested braces": `${"{ ".repeat(7_000)}rm -rf /; ${"}; ".repeat(7_000)}`,
  "100,000 nested `$(echo …)` (1 MB)": `${"echo $(".repeat(100_000)}rm -rf /${")".repeat(100_000)}`,
  "`echo $(` depth 20 around `rm -rf /`": `${"echo $(".repeat(20)}rm -rf /${")".repeat(20)}`,
  "`rm -rf /` + 30,000 × ` | cat` (180 KB)": `rm -rf /${" | cat".repeat(30_000)}`,
  "`rm -rf /` + 2,300 × `; true` (14 KB, parsed)": `rm -rf /${"; true".repeat(2_300)}`,
  "`rm -rf / # \\ud800`": "rm -rf / # \ud800",
};

const REPEATED = [
  "ls",
  "npm test",
  "git status",
  "rm -rf /",
  "cat package.json | jq .scripts",
  "rm -rf .git",
  "git push --force origin main",
  "grep -rn TODO src",
  "rm -rf node_modules",
  "find . -name '*.log' -delete",
];

function input(command: string, i: number, event = "PreToolUse", extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    session_id: "bench-session",
    prompt_id: "550e8400-e29b-41d4-a716-446655440000",
    transcript_path: "/home/user/.claude/projects/x/t.jsonl",
    cwd: "/home/user/my-project",
    permission_mode: "default",
    hook_event_name: event,
    tool_name: "Bash",
    tool_input: { command, description: "bench", timeout: 120000, run_in_background: false },
    tool_use_id: `toolu_${i}`,
    ...extra,
  });
}

/** Every third call of the loop-guard session fails, with an error that repeats. */
function result(command: string, i: number): string {
  if (i % 3 !== 0)
    return input(command, i, "PostToolUse", { tool_response: { stdout: "ok", stderr: "", interrupted: false } });
  return input(command, i, "PostToolUseFailure", {
    error: `Exit code 1\nerror: ${command} failed`,
    is_interrupt: false,
  });
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (value: number) => value.toFixed(2);
  return `p50 ${f(percentile(sorted, 50))} ms, p90 ${f(percentile(sorted, 90))} ms, **p99 ${f(percentile(sorted, 99))} ms**, max ${f(sorted.at(-1) ?? Number.NaN)} ms (n = ${sorted.length})`;
}

function spoolEnv(): NodeJS.ProcessEnv {
  const spool = mkdtempSync(join(tmpdir(), "hook-bench-"));
  const project = { HOME: "/home/user", CLAUDE_PROJECT_DIR: "/home/user/my-project" };
  const env: NodeJS.ProcessEnv = { ...process.env, AGENTOPS_SPOOL_DIR: spool, ...project };
  delete env["KAFKA_BROKERS"];
  return env;
}

interface WarmResult {
  readonly repeated: string;
  readonly unseen: string;
  readonly crafted: string[];
  /** The command form forwarding to this server, and bare Node starts measured alternately with it. */
  readonly forwarded: string;
  readonly bareNode: string;
}

interface WarmServer {
  readonly child: ChildProcess;
  readonly env: NodeJS.ProcessEnv;
  /** The answers given so far: allow, deny, ask, or the HTTP status. */
  readonly answers: string[];
  /** One POST of a hook input; the client-side round trip in ms. */
  call(body: string): Promise<number>;
}

async function startWarm(args: readonly string[] = []): Promise<WarmServer> {
  const port = await freePort();
  const env = spoolEnv();
  const argv = [...HOOK_ARGV, "--listen", `127.0.0.1:${port}`, ...args];
  const child = spawn(NODE, argv, { env, stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
  const url = `http://127.0.0.1:${port}/`;
  const answers: string[] = [];
  const call = async (body: string): Promise<number> => {
    const started = performance.now();
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
    const text = await response.text();
    const elapsed = performance.now() - started;
    answers.push(
      text === ""
        ? "allow"
        : ((JSON.parse(text) as { hookSpecificOutput?: { permissionDecision?: string } }).hookSpecificOutput
            ?.permissionDecision ?? `http ${response.status}`),
    );
    return elapsed;
  };
  return { child, env, answers, call };
}

async function warm(): Promise<WarmResult> {
  const { child, env, answers, call } = await startWarm();
  try {
    for (let i = 0; i < WARMUP; i++) await call(input(REPEATED[i % REPEATED.length] ?? "ls", i));
    const repeated: number[] = [];
    for (let i = 0; i < MEASURED; i++) repeated.push(await call(input(REPEATED[i % REPEATED.length] ?? "ls", i)));
    const unseen: number[] = [];
    for (let i = 0; i < MEASURED; i++)
      unseen.push(await call(input(`ls -la build-${i} && rm -rf out/tmp-${i} | grep -v x${i}`, i)));
    const crafted: string[] = [];
    for (const [name, command] of Object.entries(CRAFTED)) {
      const samples: number[] = [];
      answers.length = 0;
      for (let i = 0; i < CRAFTED_RUNS; i++) samples.push(await call(input(command, i)));
      const worst = Math.max(...samples);
      const given = [...new Set(answers)].join(", ");
      await call(input("rm -rf /", 0));
      const within = worst <= DEADLINE_MS + 50 ? "yes" : "**no**";
      crafted.push(
        `| ${name.replaceAll("|", "\\|")} | ${given} | ${worst.toFixed(1)} ms | ${within} | ${answers.at(-1) ?? "?"} |`,
      );
    }
    const forwarded: number[] = [];
    const bareNode: number[] = [];
    for (let i = 0; i < COMMAND_RUNS; i++) {
      bareNode.push(await timedProcess(["-e", "0"], env, ""));
      forwarded.push(await timedProcess(HOOK_ARGV, env, input(REPEATED[i % REPEATED.length] ?? "ls", i)));
    }
    return {
      repeated: summary(repeated),
      unseen: summary(unseen),
      crafted,
      forwarded: summary(forwarded),
      bareNode: summary(bareNode),
    };
  } finally {
    child.kill("SIGTERM");
  }
}

/** Wall time of one process of the project's node, stdin given, until it exits. */
async function timedProcess(args: readonly string[], env: NodeJS.ProcessEnv, stdin: string): Promise<number> {
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const child = execFile(NODE, args, { env }, () => resolve());
    child.stdin?.end(stdin);
  });
  return performance.now() - started;
}

/** The command form that judges every call in process: every call loads the analyser. */
async function inProcess(): Promise<string> {
  const env = spoolEnv();
  const samples: number[] = [];
  for (let i = 0; i < IN_PROCESS_RUNS; i++) {
    samples.push(
      await timedProcess([...HOOK_ARGV, "--warm-server", "off"], env, input(REPEATED[i % REPEATED.length] ?? "ls", i)),
    );
  }
  return summary(samples);
}

interface GuardResult {
  readonly off: string;
  readonly on: string;
  readonly results: string;
  readonly asked: number;
}

/** PreToolUse latency with the loop guard on and off (alternating), and the guard's result calls. */
async function loopGuard(): Promise<GuardResult> {
  const off = await startWarm();
  const on = await startWarm(["--loop-guard", "ask"]);
  try {
    const offSamples: number[] = [];
    const onSamples: number[] = [];
    const resultSamples: number[] = [];
    for (let i = 0; i < GUARD_WARMUP + GUARD_MEASURED; i++) {
      const command = REPEATED[i % REPEATED.length] ?? "ls";
      const measured = i >= GUARD_WARMUP;
      const offMs = await off.call(input(command, i));
      const onMs = await on.call(input(command, i));
      const resultMs = await on.call(result(command, i));
      if (!measured) continue;
      offSamples.push(offMs);
      onSamples.push(onMs);
      resultSamples.push(resultMs);
    }
    return {
      off: summary(offSamples),
      on: summary(onSamples),
      results: summary(resultSamples),
      asked: on.answers.filter((answer) => answer === "ask").length,
    };
  } finally {
    off.child.kill("SIGTERM");
    on.child.kill("SIGTERM");
  }
}

interface AutoResult {
  readonly first: string;
  readonly later: string;
  readonly bareNode: string;
}

/** The command form on a spool with no server (`--warm-server auto`): the first call, then the rest. */
async function autoStart(): Promise<AutoResult> {
  const env = spoolEnv();
  const spool = env["AGENTOPS_SPOOL_DIR"] ?? "";
  const first = await timedProcess(HOOK_ARGV, env, input("ls", 0));
  const started = performance.now();
  while (readServerFile(spool) === undefined) {
    if (performance.now() - started > 120_000) throw new Error("the started warm server did not come up within 120 s");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const server = readServerFile(spool);
  try {
    const later: number[] = [];
    const bareNode: number[] = [];
    for (let i = 1; i <= COMMAND_RUNS; i++) {
      bareNode.push(await timedProcess(["-e", "0"], env, ""));
      later.push(await timedProcess(HOOK_ARGV, env, input(REPEATED[i % REPEATED.length] ?? "ls", i)));
    }
    return { first: `${first.toFixed(2)} ms (n = 1)`, later: summary(later), bareNode: summary(bareNode) };
  } finally {
    // The server this benchmark's first call started: stopped by its pid, not left to idle out.
    if (server !== undefined) process.kill(server.pid, "SIGTERM");
  }
}

const startLoad = loadavg()[0] ?? 0;
const warmResult = await warm();
const inProcessResult = await inProcess();
const autoResult = await autoStart();
const guardResult = await loopGuard();
const endLoad = loadavg()[0] ?? 0;
const writeResults = !argv.includes("--no-write");
const section = [
  HEADING,
  "",
  `- Date: ${new Date().toUTCString()}`,
  `- Machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), node ${process.version}; 1-min load ${startLoad.toFixed(1)} at start, ${endLoad.toFixed(1)} at end`,
  "- Command: `npm run bench:hook` (= `node bench/hook.bench.ts`); default deadline 500 ms, 2 analysis workers",
  "",
  "| form | mix | latency |",
  "|---|---|---|",
  `| warm: \`agentops hook claude-code --listen\` (HTTP hook), ${WARMUP} warm-up calls | ${REPEATED.length} commands an agent repeats | ${warmResult.repeated} |`,
  `| warm: same process | a never-seen command line per call (parsed every time) | ${warmResult.unseen} |`,
  `| reference: \`node -e 0\`, a bare Node start, alternating with the row below | — | ${warmResult.bareNode} |`,
  `| command hook forwarded: \`agentops hook claude-code\`, a warm server on its spool | repeated commands | ${
    warmResult.forwarded
  } |`,
  `| command hook in process: \`agentops hook claude-code --warm-server off\` | repeated commands | ${inProcessResult} |`,
  `| command hook, no server at first (\`--warm-server auto\`, the default): first call, judged in process while it starts one | \`ls\` | ${autoResult.first} |`,
  `| reference: \`node -e 0\`, alternating with the row below | — | ${autoResult.bareNode} |`,
  `| same, later calls, forwarded to the server the first call started | repeated commands | ${autoResult.later} |`,
  "",
  `Loop guard: two warm servers called alternately, ${GUARD_WARMUP} warm-up calls, the same session; every third call fails with a repeating error (${guardResult.asked} of the guarded server's PreToolUse calls answered ask):`,
  "",
  "| server | call | latency |",
  "|---|---|---|",
  `| \`--listen\` (loop guard off) | PreToolUse, 10 repeated commands | ${guardResult.off} |`,
  `| \`--listen --loop-guard ask\` | PreToolUse, same | ${guardResult.on} |`,
  `| \`--listen --loop-guard ask\` | PostToolUse / PostToolUseFailure of each | ${guardResult.results} |`,
  "",
  `Crafted input, ${CRAFTED_RUNS} calls each to the warm server, client-measured round trip:`,
  "",
  `| input | answers | worst | ≤ ${DEADLINE_MS} + 50 ms | \`rm -rf /\` right after |`,
  "|---|---|---|---|---|",
  ...warmResult.crafted,
  "",
].join("\n");
publishResultsSection(HEADING, section, writeResults, (message) => process.stderr.write(`[bench:hook] ${message}\n`));
