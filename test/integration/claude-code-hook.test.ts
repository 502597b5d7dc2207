import { execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { freePort } from "../support/free-port.ts";
import { join } from "node:path";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeFact } from "../../src/kafka/serde/decode-fact.ts";
import { readTopicToEnd } from "../../src/kafka/read-topic.ts";
import { topicNames } from "../../src/stream/topic-names.ts";
import { closeAll, serviceEndpoints, testKafka, testRegistry, uniqueName } from "../support/kafka.ts";
import { NODE, REPO_ROOT, runAgentopsOk, sleep, testDir, waitFor } from "../support/processes.ts";

/**
 * `agentops hook claude-code` as Claude Code runs it: a process fed the documented PreToolUse
 * input on stdin (code.claude.com/docs/en/hooks), answering with the documented exit codes; and
 * its warm HTTP form, answering with the documented JSON decision.
 */

const AGENTOPS = join(REPO_ROOT, "bin/agentops");

function documentedInput(command: string, sessionId = "abc123", toolUseId = "toolu_01ABC123"): string {
  return JSON.stringify({
    session_id: sessionId,
    prompt_id: "550e8400-e29b-41d4-a716-446655440000",
    transcript_path: "/home/user/.claude/projects/.../transcript.jsonl",
    cwd: "/home/user/my-project",
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command, description: "Run test suite", timeout: 120000, run_in_background: false },
    tool_use_id: toolUseId,
  });
}

interface HookRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the hook as Claude Code does: stdin in, exit code and streams out. */
function runHook(stdin: string, env: NodeJS.ProcessEnv, args: readonly string[] = []): Promise<HookRun> {
  return new Promise((resolve) => {
    const child = execFile(NODE, ["--disable-warning=ExperimentalWarning", AGENTOPS, "hook", "claude-code", "--deadline-ms", "120000", ...args], { cwd: REPO_ROOT, env, timeout: 180_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr });
    });
    child.stdin?.end(stdin);
  });
}

function withoutKafka(spool: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENTOPS_SPOOL_DIR: spool, HOME: "/home/user", CLAUDE_PROJECT_DIR: "/home/user/my-project" };
  delete env["KAFKA_BROKERS"];
  return env;
}

let kafka: Kafka;

beforeAll(() => {
  kafka = testKafka();
});

afterAll(async () => {
  await closeAll();
});

describe("agentops hook claude-code (command hook)", () => {
  it("blocks `rm -rf /` with exit code 2 and the reason on stderr; allows `ls` with exit 0 and no output; spools both", async () => {
    const spool = testDir("agentops-hook-spool-");
    const blocked = await runHook(documentedInput("rm -rf /", "abc123", "toolu_block"), withoutKafka(spool));
    expect(blocked.code).toBe(2);
    expect(blocked.stderr).toMatch(/^agentops blocked this command as destructive \(fs-delete-critical-path: recursive delete of \/\)/);
    const allowed = await runHook(documentedInput("ls", "abc123", "toolu_allow"), withoutKafka(spool));
    expect(allowed).toEqual({ code: 0, stdout: "", stderr: "" });

    const facts = readFileSync(join(spool, "facts.ndjson"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(facts.map((fact) => `${String(fact["type"])}:${String(fact["command"] ?? fact["tool"])}`)).toEqual(["agent_step:Bash", "sandbox_event:rm -rf /", "agent_step:Bash", "sandbox_event:ls"]);
    const decisions = readFileSync(join(spool, "hook-decisions.ndjson"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(decisions.map((decision) => [decision["decision"], decision["rules"]])).toEqual([["block", ["fs-delete-critical-path"]], ["allow", []]]);

    // The spool is an ordinary facts file: `agentops produce` sends it.
    const prefix = uniqueName("hook-spool");
    const produced = await runAgentopsOk(["produce", "--input", join(spool, "facts.ndjson"), "--topic-prefix", prefix]);
    expect(produced.stdout).toMatch(/^sent 4 records/);
  });

  it("a malformed input is a non-blocking error (exit 1) naming the problem", async () => {
    const run = await runHook('{"hook_event_name":"PreToolUse"}', withoutKafka(testDir("agentops-hook-spool-")));
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("agentops hook: session_id is missing\n");
  });

  it("with KAFKA_BROKERS set it records to the agent-events topic", async () => {
    const prefix = uniqueName("hook-kafka");
    const { brokers, registryUrl } = serviceEndpoints();
    const session = uniqueName("session");
    const run = await runHook(documentedInput("rm -rf /", session), { ...withoutKafka(testDir("agentops-hook-spool-")), KAFKA_BROKERS: brokers.join(","), SCHEMA_REGISTRY_URL: registryUrl }, ["--topic-prefix", prefix]);
    expect(run.code).toBe(2);
    const registry = testRegistry();
    const received = await waitFor("the hook's records on the agent-events topic", async () => {
      const facts: Record<string, unknown>[] = [];
      await readTopicToEnd(kafka, topicNames(prefix).agentEvents, async (message) => {
        const decoded = await decodeFact(registry, message.value);
        if (decoded.ok) facts.push(decoded.fact as unknown as Record<string, unknown>);
      });
      return facts.length >= 2 ? facts : undefined;
    });
    expect(received.map((fact) => [fact["type"], fact["run_id"]])).toEqual([
      ["agent_step", session],
      ["sandbox_event", session],
    ]);
  });
});

describe("agentops hook claude-code --listen (HTTP hook)", () => {
  it("answers a deny for `rm -rf /` and an empty 200 for `ls`, as Claude Code's HTTP hooks read them", async () => {
    const port = await freePort();
    const spool = testDir("agentops-hook-spool-");
    const child = spawn(NODE, ["--disable-warning=ExperimentalWarning", AGENTOPS, "hook", "claude-code", "--listen", `127.0.0.1:${port}`], { cwd: REPO_ROOT, env: withoutKafka(spool), stdio: ["ignore", "pipe", "pipe"] });
    try {
      await waitFor("the hook server", async () => ((await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: documentedInput("true") }).catch(() => undefined))?.status === 200 ? true : undefined), { timeoutMs: 120_000 });
      const deny = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", headers: { "content-type": "application/json" }, body: documentedInput("rm -rf /") });
      expect(deny.status).toBe(200);
      expect(await deny.json()).toEqual({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: expect.stringMatching(/fs-delete-critical-path/) as unknown } });
      const allow = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", headers: { "content-type": "application/json" }, body: documentedInput("ls") });
      expect(allow.status).toBe(200);
      expect(await allow.text()).toBe("");
      await sleep(500);
      expect(readFileSync(join(spool, "hook-decisions.ndjson"), "utf8")).toMatch(/"decision":"block"/);
    } finally {
      child.kill("SIGTERM");
    }
  });
});

