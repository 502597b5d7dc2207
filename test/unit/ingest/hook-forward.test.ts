import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { forwardCall } from "../../../src/ingest/hook/hook-forward.ts";
import {
  DEFAULT_SHELL_TOOLS,
  readServerFile,
  writeServerFile,
  type ServerEntry,
} from "../../../src/ingest/hook/hook-settings.ts";

/** The command form's thin client against a stand-in server: each reply and what the call becomes. */
let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

async function standIn(status: number, body: string, delayMs = 0): Promise<ServerEntry> {
  server = createServer((request, response) => {
    request.resume();
    setTimeout(() => response.writeHead(status).end(body), delayMs);
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const settings = {
    deadlineMs: 50,
    onUndecided: "ask",
    loopGuard: "off",
    loopGuardAfter: 4,
    shellTools: DEFAULT_SHELL_TOOLS,
    maxBodyBytes: 1024,
  } as const;
  return { url: `http://127.0.0.1:${port}/`, pid: 1, ...settings };
}

function decision(permission: string): string {
  const output = { hookEventName: "PreToolUse", permissionDecision: permission, permissionDecisionReason: "why" };
  return JSON.stringify({ hookSpecificOutput: output });
}

describe("forwardCall", () => {
  it("a deny exits 2 with the reason on stderr", async () => {
    const result = await forwardCall("{}", await standIn(200, decision("deny")));
    expect(result).toEqual({ kind: "answer", code: 2, stdout: "", stderr: "why\n" });
  });

  it("an ask is printed as Claude Code's JSON decision, exit 0", async () => {
    const ask = decision("ask");
    const result = await forwardCall("{}", await standIn(200, ask));
    expect(result).toEqual({ kind: "answer", code: 0, stdout: `${ask}\n`, stderr: "" });
  });

  it("an empty 200 allows with no output", async () => {
    const result = await forwardCall("{}", await standIn(200, ""));
    expect(result).toEqual({ kind: "answer", code: 0, stdout: "", stderr: "" });
  });

  it("a malformed input (400) is the non-blocking exit 1", async () => {
    const result = await forwardCall("{}", await standIn(400, JSON.stringify({ error: "not PreToolUse" })));
    expect(result).toEqual({ kind: "answer", code: 1, stdout: "", stderr: "agentops hook: not PreToolUse\n" });
  });

  it("an error status, an allow decision or a non-decision is not trusted: unavailable", async () => {
    expect((await forwardCall("{}", await standIn(500, "{}"))).kind).toBe("unavailable");
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    expect((await forwardCall("{}", await standIn(200, decision("allow")))).kind).toBe("unavailable");
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    expect((await forwardCall("{}", await standIn(200, "ok"))).kind).toBe("unavailable");
  });

  it("a refused connection is unavailable", async () => {
    const entry = await standIn(200, "");
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    expect((await forwardCall("{}", entry)).kind).toBe("unavailable");
  });

  it("a server that answers after the deadline + grace makes the call late (undecided)", async () => {
    const entry = await standIn(200, decision("deny"), 5_000);
    const started = performance.now();
    const result = await forwardCall("{}", entry);
    expect(result.kind).toBe("late");
    expect(performance.now() - started).toBeLessThan(4_000);
  }, 10_000);
});

describe("the server file", () => {
  it("is followed only to a loopback address", () => {
    const spool = mkdtempSync(join(tmpdir(), "agentops-hook-file-"));
    const settings = {
      deadlineMs: 500,
      onUndecided: "ask",
      loopGuard: "off",
      loopGuardAfter: 4,
      shellTools: DEFAULT_SHELL_TOOLS,
      maxBodyBytes: 1024,
    } as const;
    for (const url of ["http://127.0.0.1:4319/", "http://localhost:4319/", "http://[::1]:4319/"]) {
      writeServerFile(spool, { url, pid: 1, ...settings });
      expect(readServerFile(spool)?.url).toBe(url);
    }
    for (const url of ["http://203.0.113.7:4319/", "http://evil.example:80/", "http://0.0.0.0:4319/"]) {
      writeServerFile(spool, { url, pid: 1, ...settings });
      expect(readServerFile(spool), url).toBeUndefined();
    }
  });
});
