import { forwardCall } from "../../ingest/hook/hook-forward.ts";
import { startWarmServer } from "../../ingest/hook/hook-autostart.ts";
import {
  DEFAULT_LOOP_GUARD_AFTER,
  DEFAULT_SHELL_TOOLS,
  defaultSpoolDir,
  LOOP_GUARD_AFTER_RANGE,
  readServerFile,
  sameSettings,
} from "../../ingest/hook/hook-settings.ts";
import type { HookOptions } from "./hook-in-process.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { CLUSTER_FLAGS, integerFlag, listFlag, parseFlags, stringFlag, type ParsedFlags } from "../flags.ts";

const USAGE = `Usage: agentops hook claude-code [--deadline-ms 500] [--on-undecided ask|deny|allow]
         [--loop-guard ask|deny [--loop-guard-after 4]] [--spool DIR] [--shell-tools GLOB,...]
         [--max-body-bytes N] [--warm-server auto|off]
         [--listen HOST:PORT [--workers N] [--idle-timeout SECONDS]
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
DIR/hook-decisions.ndjson. When a --listen server runs on the same spool with the same
--deadline-ms, --on-undecided, --loop-guard(-after), --shell-tools and --max-body-bytes, a call is
forwarded to it (it judges and records it; a deny still exits 2); otherwise it is judged in this
process, and when no server runs on the spool one is started in the background for the calls
after it (--warm-server auto, the default: loopback, an ephemeral port, the same flags; it exits
after 30 idle minutes). --warm-server off judges every call in process.

  --loop-guard ask|deny   also stop a call that repeats an operation which already failed the
                          same way 4 times in the session with nothing gained since (the run
                          monitor's loop-failing-operation); register the command for PostToolUse
                          and PostToolUseFailure too, which feed it. Off by default.
  --loop-guard-after N    failures of one operation before the guard stops the next attempt
                          (default ${DEFAULT_LOOP_GUARD_AFTER}, ${LOOP_GUARD_AFTER_RANGE.min} to ${LOOP_GUARD_AFTER_RANGE.max}; needs --loop-guard)

  --shell-tools GLOB,...  tool names (\`*\` globs) whose input's command/cmd is a shell command
                          (default ${DEFAULT_SHELL_TOOLS.join(",")})
  --max-body-bytes N      hook input larger than this is undecided (default 1048576)
  --listen HOST:PORT      serve the same hook warm over HTTP instead, for a "type": "http" hook
                          (POST the hook input as application/json to /; GET /healthz)
  --workers N             analysis worker threads of the HTTP form (default 2)
  --idle-timeout SECONDS  the HTTP form exits after this long without a call (default: never)
  --allowed-hosts NAME,...     Host names accepted besides loopback names and the bound address
  --allowed-origins ORIGIN,... browser Origins accepted (none by default)

Limits and what fails closed: docs/security.md. settings.json snippets: docs/ingest.md.`;

/** A call's body is bounded because recording it costs main-thread time in proportion to its size. */
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

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
        "loop-guard": { type: "string" },
        "loop-guard-after": { type: "string" },
        "shell-tools": { type: "string" },
        "max-body-bytes": { type: "string" },
        spool: { type: "string" },
        listen: { type: "string" },
        workers: { type: "string" },
        "warm-server": { type: "string" },
        "idle-timeout": { type: "string" },
        "allowed-hosts": { type: "string" },
        "allowed-origins": { type: "string" },
        ...CLUSTER_FLAGS,
      },
      "hook",
    );
    const [agent, ...extra] = flags.positionals;
    if (agent !== "claude-code" || extra.length > 0) {
      throw new UsageError(
        "agent",
        `"${flags.positionals.join(" ")}" is not a supported agent`,
        "run `agentops hook claude-code`",
      );
    }
    const onUndecided = stringFlag(flags, "on-undecided") ?? "ask";
    if (onUndecided !== "ask" && onUndecided !== "deny" && onUndecided !== "allow") {
      throw new UsageError("--on-undecided", `"${onUndecided}" is not ask, deny or allow`, "e.g. --on-undecided ask");
    }
    const loopGuard = stringFlag(flags, "loop-guard") ?? "off";
    if (loopGuard !== "off" && loopGuard !== "ask" && loopGuard !== "deny") {
      throw new UsageError("--loop-guard", `"${loopGuard}" is not ask, deny or off`, "e.g. --loop-guard ask");
    }
    const { min, max } = LOOP_GUARD_AFTER_RANGE;
    const loopGuardAfter = integerFlag(flags, "loop-guard-after", DEFAULT_LOOP_GUARD_AFTER, min, max);
    if (loopGuard === "off" && flags.values["loop-guard-after"] !== undefined) {
      throw new UsageError(
        "--loop-guard-after",
        "is set but the loop guard is off",
        `add --loop-guard ask (or deny), e.g. --loop-guard ask --loop-guard-after ${loopGuardAfter}`,
      );
    }
    const shellTools = flags.values["shell-tools"] === undefined ? DEFAULT_SHELL_TOOLS : listFlag(flags, "shell-tools");
    const options: HookOptions = {
      deadlineMs: integerFlag(flags, "deadline-ms", 500, 1, 600_000),
      onUndecided,
      loopGuard,
      loopGuardAfter,
      shellTools,
      maxBodyBytes: integerFlag(flags, "max-body-bytes", DEFAULT_MAX_BODY_BYTES, 1024, 1024 * 1024 * 1024),
      spoolDir: stringFlag(flags, "spool") ?? defaultSpoolDir(),
    };
    const listen = stringFlag(flags, "listen");
    if (listen !== undefined) return (await import("./hook-in-process.ts")).serve(flags, listen, options);
    const warmServer = stringFlag(flags, "warm-server") ?? "auto";
    if (warmServer !== "auto" && warmServer !== "off") {
      throw new UsageError("--warm-server", `"${warmServer}" is not auto or off`, "e.g. --warm-server off");
    }
    return runOnce(flags, options, warmServer === "auto" ? ["hook", ...argv] : undefined);
  },
};

/**
 * One call, as a `"type": "command"` hook: forwarded to the warm server of the same spool when one
 * runs with the same settings (a Node start and a round trip), else judged in this process. With
 * `serverArgv` (--warm-server auto), a spool without a live server gets one for the next calls; a
 * server with other settings is left alone (it is someone's own `--listen`).
 */
async function runOnce(
  flags: ParsedFlags,
  options: HookOptions,
  serverArgv: readonly string[] | undefined,
): Promise<number> {
  const text = await readStdin(options.maxBodyBytes);
  const server = text === undefined ? undefined : readServerFile(options.spoolDir);
  let serverGone = server === undefined || !alive(server.pid);
  if (text !== undefined && server !== undefined && sameSettings(server, options)) {
    const forwarded = await forwardCall(text, server);
    if (forwarded.kind === "answer") {
      process.stdout.write(forwarded.stdout);
      process.stderr.write(forwarded.stderr);
      return forwarded.code;
    }
    if (forwarded.kind === "late") {
      return (await import("./hook-in-process.ts")).answerUndecided(forwarded.why, options);
    }
    serverGone = true;
  }
  if (text !== undefined && serverGone && serverArgv !== undefined) startWarmServer(options.spoolDir, serverArgv);
  return (await import("./hook-in-process.ts")).judgeInProcess(flags, options, text);
}

/** Whether a process with this pid exists (one of another user's counts: it is not ours to replace). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
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
