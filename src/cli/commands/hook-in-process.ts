import { orderedProducer } from "../../kafka/client.ts";
import { rmSync } from "node:fs";
import pino from "pino";
import { kafkaSink, type FactSink } from "../../ingest/fact-sink.ts";
import { AnalysisPool } from "../../ingest/hook/analysis-pool.ts";
import { answerJson, answerOf, HookInputError, parseHookInput } from "../../ingest/hook/claude-code-hook.ts";
import { subjectOf, undecided, type HookAnswer } from "../../ingest/hook/claude-code-hook.ts";
import { startHookServer } from "../../ingest/hook/hook-server.ts";
import { answerCall, hookContext, nowMicros, recordHookCall, spoolSink } from "../../ingest/hook/hook-runner.ts";
import { removeServerFile, writeServerFile, type HookSettings } from "../../ingest/hook/hook-settings.ts";
import { startLockPath } from "../../ingest/hook/hook-autostart.ts";
import { loopGuardConfig, openLoopGuard, type LoopGuard } from "../../ingest/hook/loop-guard-store.ts";
import { Telemetry } from "../../stream/runtime/telemetry.ts";
import { connectCluster } from "../cluster-flags.ts";
import { UsageError } from "../command.ts";
import { integerFlag, listFlag, stringFlag, type ParsedFlags } from "../flags.ts";

/*
 * The parts of `agentops hook claude-code` that load the analyser, the contract and the Kafka
 * client: the warm server, and the command form when no server takes its call.
 */

/** Loading the analyser does not depend on the input; this bounds it apart from the analysis. */
const LOAD_TIMEOUT_MS = 10_000;
/** Old-generation heap of one analysis worker; past it V8 stops the worker and the pool replaces it. */
const WORKER_HEAP_MB = 256;

export interface HookOptions extends HookSettings {
  readonly spoolDir: string;
}

/**
 * One call judged in this process, as a `"type": "command"` hook: the exit code is the answer,
 * whatever recording does. `text` is undefined when stdin was over --max-body-bytes.
 */
export async function judgeInProcess(
  flags: ParsedFlags,
  options: HookOptions,
  text: string | undefined,
): Promise<number> {
  const started = performance.now();
  if (text === undefined) {
    return give(answerOf(undecided(`the hook input is over ${options.maxBodyBytes} bytes`), options.onUndecided));
  }
  let input;
  try {
    input = parseHookInput(text, options.loopGuard !== "off");
  } catch (error) {
    if (!(error instanceof HookInputError)) throw error;
    // Exit 1 is Claude Code's non-blocking error: the message is shown, the call goes on.
    process.stderr.write(`agentops hook: ${error.message}\n`);
    return 1;
  }
  const subject = subjectOf(input, options.shellTools);
  if (input.event !== "PreToolUse") {
    try {
      loopGuardOf(options)?.after(input, subject);
    } catch (error) {
      guardFailed(error);
    }
    return 0;
  }
  const pool = new AnalysisPool({ workers: 1, maxHeapMb: WORKER_HEAP_MB });
  try {
    const guard = loopGuardOf(options);
    const context = hookContext(input);
    const notLoaded = subject.kind === "shell" || subject.kind === "file-write" ? await loadFailure(pool) : undefined;
    const verdict =
      notLoaded === undefined ? await pool.judge(subject, context, options.deadlineMs) : undecided(notLoaded);
    const { answer, loopReason } = answerCall(input, subject, verdict, options.onUndecided, guard, guardFailed);
    const code = give(answer);
    const elapsedMs = performance.now() - started;
    const call = { input, subject, context, verdict, answer, loopReason, elapsedMs, nowMicros: nowMicros() };
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

function loopGuardOf(options: HookOptions): LoopGuard | undefined {
  return options.loopGuard === "off"
    ? undefined
    : openLoopGuard(options.loopGuard, options.spoolDir, loopGuardConfig(options.loopGuardAfter));
}

function guardFailed(error: unknown): void {
  process.stderr.write(
    `agentops hook: the loop guard's state could not be used (${error instanceof Error ? error.message : String(error)})\n`,
  );
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

/** The answer to a call the warm server took in but did not answer in time. */
export function answerUndecided(why: string, options: HookOptions): number {
  return give(answerOf(undecided(why), options.onUndecided));
}

export async function serve(flags: ParsedFlags, listen: string, options: HookOptions): Promise<number> {
  const match = /^(.+):(\d{1,5})$/.exec(listen);
  if (match === null) throw new UsageError("--listen", `"${listen}" is not HOST:PORT`, "e.g. --listen 127.0.0.1:4319");
  const host = (match[1] ?? "").replace(/^\[(.*)\]$/, "$1");
  // Handled from the start: a stop sent as soon as the listening line is read must not meet the
  // default action (killed by the signal, the server file left behind).
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  process.once("SIGINT", () => stop());
  process.once("SIGTERM", () => stop());
  const logger = pino({ name: "agentops-hook" }, pino.destination(2));
  const workers = integerFlag(flags, "workers", 2, 1, 64);
  const onRecycle = (cause: string, detail: string) => logger.warn({ cause, detail }, "analysis worker replaced");
  const pool = new AnalysisPool({ workers, maxHeapMb: WORKER_HEAP_MB, onRecycle });
  const sink = kafkaConfigured(flags) ? await kafkaRecordingSink(flags) : spoolSink(options.spoolDir);
  const server = await startHookServer({
    ...options,
    loopGuard: loopGuardOf(options),
    host,
    port: Number(match[2]),
    pool,
    sink,
    logger,
    allowedHosts: listFlag(flags, "allowed-hosts"),
    allowedOrigins: listFlag(flags, "allowed-origins"),
  });
  await pool.ready(LOAD_TIMEOUT_MS);
  const { deadlineMs, onUndecided, loopGuard, loopGuardAfter, shellTools, maxBodyBytes, spoolDir } = options;
  // The command form of the same spool and settings forwards its calls here (hook-settings.ts).
  writeServerFile(spoolDir, {
    url: server.url,
    pid: process.pid,
    deadlineMs,
    onUndecided,
    loopGuard,
    loopGuardAfter,
    shellTools,
    maxBodyBytes,
  });
  // A command form that started this server (hook-autostart.ts) waits for this file; it is there now.
  rmSync(startLockPath(spoolDir), { force: true });
  process.stdout.write(`agentops hook claude-code listening on ${server.url}\n`);
  logger.info({ url: server.url, workers, deadlineMs, onUndecided, loopGuard, loopGuardAfter }, "hook listening");
  const idleSeconds = integerFlag(flags, "idle-timeout", 0, 0, 7 * 24 * 3600);
  const onIdle = () => {
    if (server.idleMs() < idleSeconds * 1000) return;
    logger.info({ idleSeconds }, "hook server idle: exiting");
    stop();
  };
  const idleCheck = idleSeconds === 0 ? undefined : setInterval(onIdle, Math.min(idleSeconds * 1000, IDLE_CHECK_MS));
  await stopped;
  clearInterval(idleCheck);
  removeServerFile(spoolDir, server.url);
  // A stop is bounded: a handle left open by a client or a worker must not keep the process alive.
  setTimeout(() => process.exit(0), SHUTDOWN_BOUND_MS).unref();
  await server.close();
  await pool.close();
  await sink.close();
  return 0;
}

const SHUTDOWN_BOUND_MS = 5_000;
const IDLE_CHECK_MS = 10_000;

function kafkaConfigured(flags: ParsedFlags): boolean {
  return process.env["KAFKA_BROKERS"] !== undefined || stringFlag(flags, "brokers") !== undefined;
}

async function kafkaRecordingSink(flags: ParsedFlags): Promise<FactSink> {
  const { kafka, serde, topics } = await connectCluster(flags, "agentops-hook");
  await serde.registerAll();
  const producer = orderedProducer(kafka);
  await producer.connect();
  return kafkaSink(producer, serde, topics, new Telemetry());
}
