import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { kafkaSink, type FactSink } from "../../ingest/fact-sink.ts";
import { HookInputError, parsePreToolUseInput, shellCommandOf, type HookVerdict } from "../../ingest/hook/claude-code-hook.ts";
import { decideWithin, defaultSpoolDir, hookContext, loadAnalyser, recordHookCall, spoolSink, type LoadedAnalyser } from "../../ingest/hook/hook-runner.ts";
import { Telemetry } from "../../stream/runtime/telemetry.ts";
import { CLUSTER_FLAGS, connectCluster } from "../cluster-flags.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { integerFlag, parseFlags, stringFlag, type ParsedFlags } from "../flags.ts";

const USAGE = `Usage: agentops hook claude-code [--deadline-ms 5000] [--spool DIR] [--listen HOST:PORT]

A PreToolUse hook for Claude Code. It reads the hook input on stdin, judges a Bash command with
the run monitor's destructive-action analyser, and blocks a critical finding (exit code 2, the
reason on stderr, which Claude sees); anything else is allowed (exit 0, no output). If the
analyser is not ready within --deadline-ms, the call is allowed and the verdict "undecided" is
recorded. Every call is recorded: to Kafka when KAFKA_BROKERS is set, else to DIR/facts.ndjson
(default $AGENTOPS_SPOOL_DIR or ~/.agentops/spool) for \`agentops produce\` to send later;
verdicts go to DIR/hook-decisions.ndjson.

  --listen HOST:PORT  serve the same hook warm over HTTP instead, for a "type": "http" hook
                      (POST the hook input; the answer is Claude Code's JSON decision)

settings.json snippets: docs/ingest.md.`;

export const hookCommand: CliCommand = {
  name: "hook",
  summary: "Claude Code PreToolUse hook: blocks destructive commands, records every tool call",
  usage: USAGE,
  async run(argv) {
    // Loading starts before anything else: it is what the deadline waits for.
    const analyser = loadAnalyser();
    analyser.catch(() => undefined);
    const flags = parseFlags(argv, { "deadline-ms": { type: "string" }, spool: { type: "string" }, listen: { type: "string" }, ...CLUSTER_FLAGS }, "hook");
    const [agent, ...extra] = flags.positionals;
    if (agent !== "claude-code" || extra.length > 0) throw new UsageError("agent", `"${flags.positionals.join(" ")}" is not a supported agent`, "run `agentops hook claude-code`");
    const deadlineMs = integerFlag(flags, "deadline-ms", 5000, 1, 600_000);
    const spoolDir = stringFlag(flags, "spool") ?? defaultSpoolDir();
    const listen = stringFlag(flags, "listen");
    return listen === undefined ? runOnce(flags, analyser, deadlineMs, spoolDir) : serve(flags, listen, analyser, deadlineMs, spoolDir);
  },
};

async function runOnce(flags: ParsedFlags, analyser: Promise<LoadedAnalyser>, deadlineMs: number, spoolDir: string): Promise<number> {
  const started = performance.now();
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  let input;
  try {
    input = parsePreToolUseInput(Buffer.concat(chunks).toString("utf8"));
  } catch (error) {
    if (!(error instanceof HookInputError)) throw error;
    // Exit 1 is Claude Code's non-blocking error: the message is shown, the call goes on.
    process.stderr.write(`agentops hook: ${error.message}\n`);
    return 1;
  }
  const context = hookContext(input);
  const verdict = await decideWithin(shellCommandOf(input), context, analyser, deadlineMs);
  const elapsedMs = performance.now() - started;
  if (verdict.decision === "block") process.stderr.write(`${verdict.reason}\n`);
  const sink = await recordingSink(flags, spoolDir);
  try {
    await recordHookCall(input, context, verdict, elapsedMs, nowMicros(), sink, spoolDir);
  } catch (error) {
    process.stderr.write(`agentops hook: could not record to Kafka (${error instanceof Error ? error.message : String(error)}); spooled to ${spoolDir}\n`);
    await recordHookCall(input, context, verdict, elapsedMs, nowMicros(), spoolSink(spoolDir), spoolDir);
  } finally {
    await sink.close();
  }
  return verdict.decision === "block" ? 2 : 0;
}

async function serve(flags: ParsedFlags, listen: string, analyser: Promise<LoadedAnalyser>, deadlineMs: number, spoolDir: string): Promise<number> {
  const match = /^(.+):(\d{1,5})$/.exec(listen);
  if (match === null) throw new UsageError("--listen", `"${listen}" is not HOST:PORT`, "e.g. --listen 127.0.0.1:4319");
  const sink = await recordingSink(flags, spoolDir);
  // Recording happens after the answer, one call at a time, in arrival order.
  let recording: Promise<unknown> = Promise.resolve();
  const server = createServer((request, response) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      void (async () => {
        let input;
        try {
          input = parsePreToolUseInput(Buffer.concat(chunks).toString("utf8"));
        } catch (error) {
          response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
          return;
        }
        const context = hookContext(input);
        const verdict = await decideWithin(shellCommandOf(input), context, analyser, deadlineMs);
        answerHttp(response, verdict);
        const elapsedMs = performance.now() - started;
        const at = nowMicros();
        recording = recording.then(() => recordHookCall(input, context, verdict, elapsedMs, at, sink, spoolDir)).catch((error: unknown) => process.stderr.write(`agentops hook: could not record (${error instanceof Error ? error.message : String(error)})\n`));
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(Number(match[2]), match[1], () => resolve());
  });
  await analyser;
  const address = server.address() as AddressInfo;
  process.stdout.write(`agentops hook claude-code listening on http://${address.address}:${address.port}/\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await recording;
  await sink.close();
  return 0;
}

/** Claude Code's HTTP hook answer: a JSON deny blocks; an empty 200 leaves the call to the normal permission flow. */
function answerHttp(response: ServerResponse, verdict: HookVerdict): void {
  if (verdict.decision !== "block") {
    response.writeHead(200).end();
    return;
  }
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: verdict.reason } }));
}

async function recordingSink(flags: ParsedFlags, spoolDir: string): Promise<FactSink> {
  if (process.env["KAFKA_BROKERS"] === undefined && stringFlag(flags, "brokers") === undefined) return spoolSink(spoolDir);
  const { kafka, serde, topics } = await connectCluster(flags, "agentops-hook");
  await serde.registerAll();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return kafkaSink(producer, serde, topics, new Telemetry());
}

function nowMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}
