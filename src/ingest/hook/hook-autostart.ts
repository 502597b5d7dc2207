import { closeSync, mkdirSync, openSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";

/*
 * The command form's warm server on demand: a call that finds no server for its spool starts one
 * in the background (detached, loopback, an ephemeral port, the same flags) and is judged in its
 * own process as before; the calls after it are forwarded. The server exits after an idle time.
 */

/** How long a server started this way waits for a call before it exits. */
export const AUTOSTART_IDLE_SECONDS = 30 * 60;
/** A start that has not written its server file by then is taken as failed and may be retried. */
const START_STALE_MS = 60_000;

export function startLockPath(spoolDir: string): string {
  return join(spoolDir, "hook-server.starting");
}

/**
 * Starts a warm server for this spool unless another call is starting one (the lock file, which
 * the server removes once it serves). `argv` is the command's own argv after `agentops`.
 */
export function startWarmServer(spoolDir: string, argv: readonly string[]): void {
  mkdirSync(spoolDir, { recursive: true });
  if (!takeStartLock(startLockPath(spoolDir))) return;
  const { spawn } = process.getBuiltinModule("node:child_process");
  const script = process.argv[1];
  if (script === undefined) return;
  const serverArgv = [
    ...argv,
    "--spool",
    spoolDir,
    "--listen",
    "127.0.0.1:0",
    "--idle-timeout",
    String(AUTOSTART_IDLE_SECONDS),
  ];
  const child = spawn(process.execPath, [...process.execArgv, script, ...serverArgv], {
    detached: true,
    stdio: "ignore",
  });
  // A failed spawn leaves the lock to go stale; this call is judged in process either way.
  child.on("error", () => undefined);
  child.unref();
}

function takeStartLock(path: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      closeSync(openSync(path, "wx", 0o600));
      return true;
    } catch {
      let age: number;
      try {
        age = Date.now() - statSync(path).mtimeMs;
      } catch {
        continue; // removed in between: try again
      }
      if (age < START_STALE_MS) return false;
      rmSync(path, { force: true });
    }
  }
  return false;
}
