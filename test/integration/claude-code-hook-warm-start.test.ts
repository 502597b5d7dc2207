import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readServerFile, type ServerEntry } from "../../src/ingest/hook/hook-settings.ts";
import { documentedInput, runHook, startHookServer, withoutKafka, type HookHealth } from "../support/hook-process.ts";
import { testDir, waitFor } from "../support/processes.ts";

/**
 * The command form with no server on its spool (`--warm-server auto`, the default): the call is
 * judged in its own process and a warm server is started in the background for the next ones,
 * which are forwarded to it; a server started so exits when idle.
 */
const AUTO = ["--deadline-ms", "60000", "--warm-server", "auto"];

describe("agentops hook claude-code --warm-server auto", () => {
  it("judges the first call in process, starts a warm server, and forwards the next call to it", async () => {
    const spool = testDir("agentops-hook-auto-");
    const env = withoutKafka(spool);
    let entry: ServerEntry | undefined;
    try {
      const first = await runHook(documentedInput("rm -rf /", "auto", "toolu_auto1"), env, AUTO);
      expect(first.code).toBe(2);
      expect(first.stderr).toMatch(/fs-delete-critical-path/);
      entry = await waitFor("the started server's file", () => readServerFile(spool), {
        timeoutMs: 120_000,
        intervalMs: 100,
      });
      expect(entry.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(existsSync(join(spool, "hook-server.starting"))).toBe(false);
      const second = await runHook(documentedInput("ls", "auto", "toolu_auto2"), env, AUTO);
      expect(second).toEqual({ code: 0, stdout: "", stderr: "" });
      const health = (await (await fetch(`${entry.url}healthz`)).json()) as HookHealth;
      expect(health.judged).toBe(1);
    } finally {
      if (entry !== undefined) process.kill(entry.pid, "SIGTERM");
    }
    await waitFor("the server gone", () => (readServerFile(spool) === undefined ? true : undefined));
  }, 300_000);

  it("--warm-server off starts nothing", async () => {
    const spool = testDir("agentops-hook-auto-");
    const run = await runHook(documentedInput("ls", "off", "toolu_off"), withoutKafka(spool), [
      "--deadline-ms",
      "60000",
      "--warm-server",
      "off",
    ]);
    expect(run.code).toBe(0);
    expect(existsSync(join(spool, "hook-server.starting"))).toBe(false);
    expect(readServerFile(spool)).toBeUndefined();
  });
});

describe("agentops hook claude-code --listen --idle-timeout", () => {
  it("exits after the idle time without a call and removes its server file", async () => {
    const server = await startHookServer(["--idle-timeout", "2"]);
    try {
      expect(readServerFile(server.spool)?.url).toBe(server.url);
      await waitFor("the idle server's exit", () => (server.child.exitCode === null ? undefined : true), {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
      expect(server.child.exitCode).toBe(0);
      expect(readServerFile(server.spool)).toBeUndefined();
    } finally {
      server.stop();
    }
  });
});
