import { execFile } from "node:child_process";
import { join } from "node:path";
import { NODE, NODE_FLAGS, REPO_ROOT } from "./processes.ts";

export interface TimedCliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly seconds: number;
}

/**
 * Runs `agentops` with exactly the connection environment given: every KAFKA_*, SCHEMA_REGISTRY_*
 * and AGENTOPS_* variable of the test process is dropped first, so a case sees only its own settings.
 */
export function agentopsWithEnv(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  timeoutMs = 170_000,
): Promise<TimedCliRun> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(KAFKA_|SCHEMA_REGISTRY_|AGENTOPS_)/.test(name)),
  );
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      NODE,
      [...NODE_FLAGS, join(REPO_ROOT, "bin/agentops"), ...args],
      { cwd: REPO_ROOT, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, env: { ...base, ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        resolve({ code, stdout, stderr, seconds: (Date.now() - started) / 1000 });
      },
    );
  });
}

/** No stack frame ("    at fn (file:line)") and no kafkajs error class name in a message meant for people. */
export function hasStackTrace(text: string): boolean {
  return /^\s+at .+:\d+/m.test(text) || /KafkaJS\w+Error/.test(text);
}
