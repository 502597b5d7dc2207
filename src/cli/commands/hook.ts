import pino from "pino";
import { kafkaSink, type FactSink } from "../../ingest/fact-sink.ts";
import { AnalysisPool } from "../../ingest/hook/analysis-pool.ts";
import { answerJson, answerOf, DEFAULT_SHELL_TOOLS, HookInputError, parsePreToolUseInput } from "../../ingest/hook/claude-code-hook.ts";
import { subjectOf, undecided, type HookAnswer, type UndecidedPolicy } from "../../ingest/hook/claude-code-hook.ts";
import { startHookServer } from "../../ingest/hook/hook-server.ts";
import { defaultSpoolDir, hookContext, nowMicros, recordHookCall, spoolSink } from "../../ingest/hook/hook-runner.ts";
import { Telemetry } from "../../stream/runtime/telemetry.ts";
import { CLUSTER_FLAGS, connectCluster } from "../cluster-flags.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { integerFlag, parseFlags, stringFlag, type ParsedFlags } from "../flags.ts";

const USAGE = `Usage: agentops hook claude-code [--deadline-ms 500] [--on-undecided ask|deny|allow] [--spool DIR]
         [--shell-tools GLOB,...] [--max-body-bytes N] [--listen HOST:PORT [--workers N]
         [--allowed-hosts NAME,...] [--allowed-origins ORIGIN,...]]

A PreToolUse hook for Claude Code. It reads the hook input on stdin and judges what the tool call
would do: a shell command line (Bash and MCP shell tools) with the run monitor's destructive-action
analyser, a file write (Write, Edit, MultiEdit, NotebookEdit) by its path. A critical finding
blocks (exit code 2, the reason on stderr, which Claude sees); anything else is allowed (exit 0,
no output). When no verdict is reached within --deadline-ms (the analysis is stopped), or the
command cannot be read completely (too long, too deep, a syntax error), the call is undecided and
--on-undecided answers: ask (default: Claude Code asks the user, with the reason), deny, or allow.
Every call is recorded: to Kafka when KAFKA_BROKERS is set, else to DIR/facts.ndjson (default
$AGENTOPS_SPOOL_DIR or ~/.agentops/spool) for \`agentops produce\` to send later; verdicts go to
DIR/hook-decisions.ndjson.

  --shell-tools GLOB,...  tool names (\`*\` globs) whose input's command/cmd is a shell command
                          (default ${DEFAULT_SHELL_TOOLS.join(",")})
  --max-body-bytes N      hook input larger than this is undecided (default 1048576)
  --listen HOST:PORT      serve the same hook warm over HTTP instead, for a "type": "http" hook
                          (POST the hook input as application/json to /; GET /healthz)
  --workers N             analysis worker threads of the HTTP form (default 2)
  --allowed-hosts NAME,...     Host names accepted besides loopback names and the bound address
  --allowed-origins ORIGIN,... browser Origins accepted (none by default)

Limits and what fails closed: docs/security.md. settings.json snippets: docs/ingest.md.`;

/** Recording a call costs main-thread time in proportion to its size (about 15 ms per 100 KB here). */
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Loading the analyser does not depend on the input; this bounds it apart from the analysis. */
const LOAD_TIMEOUT_MS = 10_000;
/** Old-generation heap of one analysis worker; past it V8 stops the worker and the pool replaces it. */
const WORKER_HEAP_MB = 256;

interface HookOptions {
  readonly deadlineMs: number;
  readonly onUndecided: UndecidedPolicy;
  readonly shellTools: readonly string[];
  readonly maxBodyBytes: number;
  readonly spoolDir: string;
}

export const hookCommand: CliCommand = {
  name: "hook",
  summary: "Claude Code PreToolUse hook: blocks destructive commands and writes, records every tool call",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(
      argv,
      {
        "deadline-ms": { type: "string" },
        "on-undecided": { type: "string" },
        "shell-tools": { type: "string" },
        "max-body-bytes": { type: "string" },
        spool: { type: "string" },
        listen: { type: "string" },
        workers: { type: "string" },
        "allowed-hosts": { type: "string" },
        "allowed-origins": { type: "string" },
        ...CLUSTER_FLAGS,
      },
      "hook",
    );
    const [agent, ...extra] = flags.positionals;
    if (agent !== "claude-code" || extra.length > 0) {
      throw new UsageError("agent", `"${flags.positionals.join(" ")}" is not a supported agent`, "run `agentops hook claude-code`");
    }
    const onUndecided = stringFlag(flags, "on-undecided") ?? "ask";
    if (onUndecided !== "ask" && onUndecided !== "deny" && onUndecided !== "allow") {
      throw new UsageError("--on-undecided", `"${onUndecided}" is not ask, deny or allow`, "e.g. --on-undecided ask");
    }
    const shellTools = flags.values["shell-tools"] === undefined ? DEFAULT_SHELL_TOOLS : listFlag(flags, "shell-tools");
    const options: HookOptions = {
      deadlineMs: integerFlag(flags, "deadline-ms", 500, 1, 600_000),
      onUndecided,
      shellTools,
      maxBodyBytes: integerFlag(flags, "max-body-bytes", DEFAULT_MAX_BODY_BYTES, 1024, 1024 * 1024 * 1024),
      spoolDir: stringFlag(flags, "spool") ?? defaultSpoolDir(),
    };
    const listen = stringFlag(flags, "listen");
    return listen === undefined ? runOnce(flags, options) : serve(flags, listen, options);
  },
};

/** One call, as a `"type": "command"` hook: the exit code is the answer, whatever recording does. */
async function runOnce(flags: ParsedFlags, options: HookOptions): Promise<number> {
  // The worker loads the analyser while stdin is read.
  const pool = new AnalysisPool({ workers: 1, maxHeapMb: WORKER_HEAP_MB });
  try {
    const started = performance.now();
    const text = await readStdin(options.maxBodyBytes);
    if (text === undefined) {
      return give(answerOf(undecided(`the hook input is over ${options.maxBodyBytes} bytes`), options.onUndecided));
    }
    let input;
    try {
      input = parsePreToolUseInput(text);
    } catch (error) {
      if (!(error instanceof HookInputError)) throw error;
      // Exit 1 is Claude Code's non-blocking error: the message is shown, the call goes on.
      process.stderr.write(`agentops hook: ${error.message}\n`);
      return 1;
    }
    const context = hookContext(input);
    const subject = subjectOf(input, options.shellTools);
    const notLoaded = subject.kind === "shell" || subject.kind === "file-write" ? await loadFailure(pool) : undefined;
    const verdict = notLoaded === undefined ? await pool.judge(subject, context, options.deadlineMs) : undecided(notLoaded);
    const answer = answerOf(verdict, options.onUndecided);
    const code = give(answer);
    const elapsedMs = performance.now() - started;
    const call = { input, subject, context, verdict, answer, elapsedMs, nowMicros: nowMicros() };
    const kafka = kafkaConfigured(flags);
    try {
      const sink = kafka ? await kafkaRecordingSink(flags) : spoolSink(options.spoolDir);
      try {
        await recordHookCall(call, sink, options.spoolDir);
      } finally {
        await sink.close();
      }
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      process.stderr.write(`agentops hook: could not record to ${kafka ? "Kafka" : "the spool"} (${why})\n`);
      if (kafka) await recordHookCall(call, spoolSink(options.spoolDir), options.spoolDir).catch(() => undefined);
    }
    return code;
  } finally {
    await pool.close();
  }
}

/** Why the analyser is not there to judge the call, or undefined once it has loaded. */
async function loadFailure(pool: AnalysisPool): Promise<string | undefined> {
  try {
    await pool.ready(LOAD_TIMEOUT_MS);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Writes the answer the command form's way and returns its exit code. */
function give(answer: HookAnswer): number {
  if (answer.permission === "deny") {
    process.stderr.write(`${answer.reason}\n`);
    return 2;
  }
  const json = answerJson(answer);
  if (json !== undefined) process.stdout.write(`${json}\n`);
  return 0;
}

/** stdin as text, or undefined once it passes maxBytes. */
async function readStdin(maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      process.stdin.destroy();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function serve(flags: ParsedFlags, listen: string, options: HookOptions): Promise<number> {
  const match = /^(.+):(\d{1,5})$/.exec(listen);
  if (match === null) throw new UsageError("--listen", `"${listen}" is not HOST:PORT`, "e.g. --listen 127.0.0.1:4319");
  const host = (match[1] ?? "").replace(/^\[(.*)\]$/, "$1");
  const logger = pino({ name: "agentops-hook" }, pino.destination(2));
  const workers = integerFlag(flags, "workers", 2, 1, 64);
  const onRecycle = (cause: string, detail: string) => logger.warn({ cause, detail }, "analysis worker replaced");
  const pool = new AnalysisPool({ workers, maxHeapMb: WORKER_HEAP_MB, onRecycle });
  const sink = kafkaConfigured(flags) ? await kafkaRecordingSink(flags) : spoolSink(options.spoolDir);
  const server = await startHookServer({
    ...options,
    host,
    port: Number(match[2]),
    pool,
    sink,
    logger,
    allowedHosts: listFlag(flags, "allowed-hosts"),
    allowedOrigins: listFlag(flags, "allowed-origins"),
  });
  await pool.ready(LOAD_TIMEOUT_MS);
  process.stdout.write(`agentops hook claude-code listening on ${server.url}\n`);
  const { deadlineMs, onUndecided } = options;
  logger.info({ url: server.url, workers, deadlineMs, onUndecided }, "hook listening");
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.close();
  await pool.close();
  await sink.close();
  return 0;
}

/** A comma-separated flag's values. */
function listFlag(flags: ParsedFlags, name: string): string[] {
  return (stringFlag(flags, name) ?? "").split(",").map((item) => item.trim()).filter((item) => item !== "");
}

function kafkaConfigured(flags: ParsedFlags): boolean {
  return process.env["KAFKA_BROKERS"] !== undefined || stringFlag(flags, "brokers") !== undefined;
}

async function kafkaRecordingSink(flags: ParsedFlags): Promise<FactSink> {
  const { kafka, serde, topics } = await connectCluster(flags, "agentops-hook");
  await serde.registerAll();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return kafkaSink(producer, serde, topics, new Telemetry());
}
