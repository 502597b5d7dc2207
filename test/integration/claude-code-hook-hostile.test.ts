import { existsSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decisionOf, documentedInput, runHook, startHookServer, withoutKafka } from "../support/hook-process.ts";
import type { HookServerProcess } from "../support/hook-process.ts";
import { testDir, waitFor } from "../support/processes.ts";

/**
 * The hook under the inputs of issue #31, as real processes: each crafted command gets a verdict
 * within the deadline and never a silent allow; one call cannot change another's verdict; the
 * HTTP form judges only hook calls, from loopback, of bounded size.
 */
const crafted: Record<string, string> = {
  "`rm -rf /` and 4,000 × ` && true` (33 KB)": `rm -rf /${" && true".repeat(4_000)}`,
  "5,000 nested subshells": `${"(".repeat(5_000)}rm -rf /${")".repeat(5_000)}`,
  "7,000 nested braces": `${"{ ".repeat(7_000)}rm -rf /; ${"}; ".repeat(7_000)}`,
  "100,000 nested `$(echo …)`": `${"echo $(".repeat(100_000)}rm -rf /${")".repeat(100_000)}`,
  "`rm -rf /` and 30,000 × ` | cat` (180 KB)": `rm -rf /${" | cat".repeat(30_000)}`,
};

describe("agentops hook claude-code (command hook) on crafted input", () => {
  it("answers every crafted command with ask, its reason on stdout, exit 0, never a plain allow", async () => {
    for (const [name, command] of Object.entries(crafted)) {
      const run = await runHook(documentedInput(command), withoutKafka(testDir("agentops-hook-spool-")), []);
      expect([name, run.code]).toEqual([name, 0]);
      const reason = expect.stringMatching(/^agentops could not judge this command: .*bound/) as unknown;
      const output = { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: reason };
      expect(JSON.parse(run.stdout)).toEqual({ hookSpecificOutput: output });
    }
  });

  it("denies a crafted command with --on-undecided deny (exit 2, the reason on stderr)", async () => {
    const command = crafted["5,000 nested subshells"] ?? "";
    const run = await runHook(documentedInput(command), freshSpool(), ["--on-undecided", "deny"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^agentops could not judge this command: the command nests 5000 brackets deep/);
  });

  it("bounds the analysis itself by --deadline-ms: a line that takes longer is ask, with the reason", async () => {
    const slow = `rm -rf ./build${"; true".repeat(2_300)}`;
    const run = await runHook(documentedInput(slow), freshSpool(), ["--deadline-ms", "1"]);
    expect(run.code).toBe(0);
    const reason = "the analysis did not finish within 1 ms and was stopped";
    expect(JSON.parse(run.stdout)).toMatchObject({
      hookSpecificOutput: { permissionDecision: "ask", permissionDecisionReason: reason },
    });
  });

  it("denies 20 nested `$(echo …)` around `rm -rf /` well within the deadline", async () => {
    const command = `${"echo $(".repeat(20)}rm -rf /${")".repeat(20)}`;
    const spool = testDir("agentops-hook-spool-");
    const run = await runHook(documentedInput(command), withoutKafka(spool), []);
    expect(run.code).toBe(2);
    const decision = JSON.parse(readFileSync(join(spool, "hook-decisions.ndjson"), "utf8")) as { decision: string };
    expect(decision.decision).toBe("block");
  });

  it("a deny exits 2 even when the call cannot be recorded (a lone surrogate), naming no Kafka", async () => {
    const spool = testDir("agentops-hook-spool-");
    const run = await runHook(documentedInput("rm -rf / # \ud800"), withoutKafka(spool));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^agentops blocked this as destructive \(fs-delete-critical-path/);
    expect(run.stderr).not.toMatch(/Kafka|at \w+ \(/);
    const decision = JSON.parse(readFileSync(join(spool, "hook-decisions.ndjson"), "utf8")) as Record<string, unknown>;
    const unrecorded = expect.stringMatching(/Lone surrogate/) as unknown;
    expect(decision).toMatchObject({ decision: "block", answer: "deny", unrecorded });
  });

  it("judges Write to /etc/passwd and an MCP shell tool", async () => {
    const env = withoutKafka(testDir("agentops-hook-spool-"));
    const write = await runHook(
      documentedInput("", "s", "t1", "Write", { file_path: "/etc/passwd", content: "x" }),
      env,
    );
    expect(write.code).toBe(2);
    expect(write.stderr).toMatch(/fs-write-system-file: write of system file \/etc\/passwd/);
    const mcp = await runHook(documentedInput("", "s", "t2", "mcp__shell__run", { command: "rm -rf /" }), env);
    expect(mcp.code).toBe(2);
  });
});

describe("agentops hook claude-code --listen on crafted input", () => {
  let server: HookServerProcess;

  beforeAll(async () => {
    server = await startHookServer(["--workers", "2"]);
  });

  afterAll(() => {
    server.stop();
  });

  it("answers each crafted command with ask in time, and still denies every destructive command after them", async () => {
    for (const [name, command] of Object.entries(crafted)) {
      const answer = await server.call(documentedInput(command, "crafted"));
      expect([name, decisionOf(answer).decision]).toEqual([name, "ask"]);
    }
    const decisions = join(server.spool, "hook-decisions.ndjson");
    const elapsed = await waitFor("the crafted calls recorded", () => {
      const text = existsSync(decisions) ? readFileSync(decisions, "utf8").trim() : "";
      const lines =
        text === ""
          ? []
          : text.split("\n").map((line) => JSON.parse(line) as { session_id: string; elapsed_ms: number });
      const crafted_ = lines.filter((line) => line.session_id === "crafted");
      return crafted_.length === Object.keys(crafted).length ? crafted_.map((line) => line.elapsed_ms) : undefined;
    });
    // From the request's arrival to the answer, measured by the server; the slack is for timers
    // firing late on a shared two-core machine (bench:hook records the worst case measured).
    for (const ms of elapsed) expect(ms).toBeLessThan(500 + 250);
    for (const command of ["rm -rf /", "sudo rm -rf /", "rm -rf ~", "find / -delete", "git push --force origin main"]) {
      expect([command, decisionOf(await server.call(documentedInput(command))).decision]).toEqual([command, "deny"]);
    }
  });

  it("answers a quick call while a slow one is analysed", async () => {
    const patient = await startHookServer(["--workers", "2", "--deadline-ms", "60000"]);
    try {
      const slow = `rm -rf ./build${"; true".repeat(2_300)}`;
      const order: string[] = [];
      await Promise.all([
        patient
          .call(documentedInput(slow, "s", "slow"))
          .then((answer) => order.push(`slow:${decisionOf(answer).decision}`)),
        patient
          .call(documentedInput("rm -rf /", "s", "quick"))
          .then((answer) => order.push(`quick:${decisionOf(answer).decision}`)),
      ]);
      expect(order).toEqual(["quick:deny", "slow:allow"]);
    } finally {
      patient.stop();
    }
  });

  it("takes only POST application/json on /, from loopback Hosts, without a browser Origin; records no other", async () => {
    const body = documentedInput("rm -rf /", "web", "web-1");
    const json = { "content-type": "application/json" };
    expect((await fetch(`${server.url}anything`, { method: "PUT", headers: json, body })).status).toBe(404);
    expect((await fetch(server.url, { method: "PUT", headers: json, body })).status).toBe(405);
    expect((await fetch(server.url, { method: "POST", headers: { "content-type": "text/plain" }, body })).status).toBe(
      415,
    );
    const fromPage = { ...json, origin: "https://example.com" };
    expect((await fetch(server.url, { method: "POST", headers: fromPage, body })).status).toBe(403);
    expect(await statusWithHost(server.url, "rebound.example.com", body)).toBe(421);
    expect(await statusWithHost(server.url, "localhost", body)).toBe(200);
    const decisions = join(server.spool, "hook-decisions.ndjson");
    const recordedText = () => (existsSync(decisions) ? readFileSync(decisions, "utf8") : "");
    const recorded = await waitFor("the loopback call recorded", () =>
      recordedText().includes('"session_id":"web"') ? recordedText() : undefined,
    );
    expect(recorded.split("\n").filter((line) => line.includes('"session_id":"web"'))).toHaveLength(1);
  });

  it("refuses a body over the limit at once without reading it whole", async () => {
    const started = performance.now();
    const status = await new Promise<number>((resolve, reject) => {
      const headers = { "content-type": "application/json", "content-length": String(600 * 1024 * 1024) };
      const call = request(server.url, { method: "POST", headers }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      call.on("error", reject);
      call.write(Buffer.alloc(64 * 1024, 0x20));
    });
    expect(status).toBe(413);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(decisionOf(await server.call(documentedInput("rm -rf /"))).decision).toBe("deny");
  });

  it("answers ask at a 1 ms deadline; the worker stops on its own; /healthz counts it and recycled workers", async () => {
    const tight = await startHookServer(["--deadline-ms", "1", "--workers", "1"]);
    try {
      const answer = decisionOf(await tight.call(documentedInput(`rm -rf ./build${"; true".repeat(2_300)}`)));
      expect(answer).toEqual({ decision: "ask", reason: "the analysis did not finish within 1 ms and was stopped" });
      const health = await tight.health();
      const recycled = { timeout: 0, crash: 0, failure: 0 };
      expect(health).toMatchObject({ status: "ok", workers: 1, judged: 1, undecided: 1, recycled });
    } finally {
      tight.stop();
    }
  });
});

function freshSpool(): NodeJS.ProcessEnv {
  return withoutKafka(testDir("agentops-hook-spool-"));
}

/** A POST with a chosen Host header (fetch does not let one set it). */
function statusWithHost(url: string, host: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = request(url, { method: "POST", headers: { host, "content-type": "application/json" } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    call.on("error", reject);
    call.end(body);
  });
}
