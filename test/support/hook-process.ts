import { execFile, spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { freePort } from "./free-port.ts";
import { NODE, REPO_ROOT, testDir, waitFor } from "./processes.ts";

/**
 * `agentops hook claude-code` as Claude Code runs it, for the hook's tests: the documented
 * PreToolUse input, the command form (stdin in, exit code and streams out) and the warm HTTP form
 * as a real server process.
 */
const AGENTOPS = join(REPO_ROOT, "bin/agentops");
const HOOK_ARGV = ["--disable-warning=ExperimentalWarning", AGENTOPS, "hook", "claude-code"];

export function documentedInput(
  command: string,
  sessionId = "abc123",
  toolUseId = "toolu_01ABC123",
  toolName = "Bash",
  toolInput: Record<string, unknown> = {
    command,
    description: "Run test suite",
    timeout: 120000,
    run_in_background: false,
  },
): string {
  return JSON.stringify({
    session_id: sessionId,
    prompt_id: "550e8400-e29b-41d4-a716-446655440000",
    transcript_path: "/home/user/.claude/projects/.../transcript.jsonl",
    cwd: "/home/user/my-project",
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: toolName,
    tool_input: toolInput,
    tool_use_id: toolUseId,
  });
}

export interface HookRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function withoutKafka(spool: string): NodeJS.ProcessEnv {
  const project = { HOME: "/home/user", CLAUDE_PROJECT_DIR: "/home/user/my-project" };
  const env: NodeJS.ProcessEnv = { ...process.env, AGENTOPS_SPOOL_DIR: spool, ...project };
  delete env["KAFKA_BROKERS"];
  return env;
}

/**
 * Runs the hook as Claude Code does: stdin in, exit code and streams out. Tests that are not about
 * the deadline give the analysis a minute, so a loaded machine cannot turn their verdict undecided.
 * No warm server is started in the background (`--warm-server off`) unless `args` say `auto`:
 * each test's spool would otherwise keep one running until it idles out.
 */
export function runHook(
  stdin: string,
  env: NodeJS.ProcessEnv,
  args: readonly string[] = ["--deadline-ms", "60000"],
): Promise<HookRun> {
  return new Promise((resolve) => {
    const argv = [...HOOK_ARGV, "--warm-server", "off", ...args];
    const options = { cwd: REPO_ROOT, env, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 };
    const child = execFile(NODE, argv, options, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr });
    });
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(stdin);
  });
}

export interface HookHealth {
  readonly status: string;
  readonly recycled: Record<string, number>;
  readonly judged: number;
  readonly undecided: number;
}

export interface HookServerProcess {
  readonly url: string;
  readonly spool: string;
  readonly child: ChildProcess;
  /** POSTs a hook input as Claude Code does; the answer and the client-side latency. */
  call(body: string): Promise<{ status: number; text: string; ms: number }>;
  health(): Promise<HookHealth>;
  stop(): void;
}

/** Starts `agentops hook claude-code --listen` on a free port and waits until it answers. */
export async function startHookServer(args: readonly string[] = []): Promise<HookServerProcess> {
  const port = await freePort();
  const spool = testDir("agentops-hook-spool-");
  const argv = [...HOOK_ARGV, "--listen", `127.0.0.1:${port}`, ...args];
  const child = spawn(NODE, argv, { cwd: REPO_ROOT, env: withoutKafka(spool), stdio: ["ignore", "pipe", "pipe"] });
  child.stderr.resume();
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  const url = `http://127.0.0.1:${port}/`;
  // The line comes once every analysis worker has loaded.
  const listening = () => (stdout.includes("listening on") ? true : undefined);
  await waitFor("the hook server's listening line", listening, { timeoutMs: 120_000, intervalMs: 50 });
  return {
    url,
    spool,
    child,
    async call(body) {
      const started = performance.now();
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
      const text = await response.text();
      return { status: response.status, text, ms: performance.now() - started };
    },
    async health() {
      return (await (await fetch(`${url}healthz`)).json()) as HookHealth;
    },
    stop() {
      child.kill("SIGTERM");
    },
  };
}

/** The permission decision of an HTTP answer: deny, ask, or allow for the empty 200. */
export function decisionOf(answer: { status: number; text: string }): { decision: string; reason: string } {
  if (answer.status !== 200) return { decision: `http ${answer.status}`, reason: answer.text };
  if (answer.text === "") return { decision: "allow", reason: "" };
  type Output = { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
  const output = (JSON.parse(answer.text) as Output).hookSpecificOutput;
  return { decision: output.permissionDecision, reason: output.permissionDecisionReason };
}
