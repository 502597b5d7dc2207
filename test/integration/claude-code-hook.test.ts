import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeFact } from "../../src/kafka/serde/decode-fact.ts";
import { readTopicToEnd } from "../../src/kafka/read-topic.ts";
import { topicNames } from "../../src/stream/topic-names.ts";
import { closeAll, serviceEndpoints, testKafka, testRegistry, uniqueName } from "../support/kafka.ts";
import { decisionOf, documentedInput, runHook, startHookServer, withoutKafka } from "../support/hook-process.ts";
import { runAgentopsOk, testDir, waitFor } from "../support/processes.ts";

/**
 * `agentops hook claude-code` as Claude Code runs it: a process fed the documented PreToolUse
 * input on stdin (code.claude.com/docs/en/hooks), answering with the documented exit codes; and
 * its warm HTTP form, answering with the documented JSON decision.
 */

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
    expect(blocked.stderr).toMatch(
      /^agentops blocked this as destructive \(fs-delete-critical-path: recursive delete of \/\)/,
    );
    const allowed = await runHook(documentedInput("ls", "abc123", "toolu_allow"), withoutKafka(spool));
    expect(allowed).toEqual({ code: 0, stdout: "", stderr: "" });

    const facts = readFileSync(join(spool, "facts.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(facts.map((fact) => `${String(fact["type"])}:${String(fact["command"] ?? fact["tool"])}`)).toEqual([
      "agent_step:Bash",
      "sandbox_event:rm -rf /",
      "agent_step:Bash",
      "sandbox_event:ls",
    ]);
    const decisions = readFileSync(join(spool, "hook-decisions.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(decisions.map((decision) => [decision["decision"], decision["rules"]])).toEqual([
      ["block", ["fs-delete-critical-path"]],
      ["allow", []],
    ]);

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
    const run = await runHook(
      documentedInput("rm -rf /", session),
      {
        ...withoutKafka(testDir("agentops-hook-spool-")),
        KAFKA_BROKERS: brokers.join(","),
        SCHEMA_REGISTRY_URL: registryUrl,
      },
      ["--deadline-ms", "60000", "--topic-prefix", prefix],
    );
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
    const server = await startHookServer();
    try {
      const deny = await server.call(documentedInput("rm -rf /"));
      expect(deny.status).toBe(200);
      expect(JSON.parse(deny.text)).toEqual({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: expect.stringMatching(/fs-delete-critical-path/) as unknown,
        },
      });
      expect(decisionOf(await server.call(documentedInput("ls")))).toEqual({ decision: "allow", reason: "" });
      const decisions = await waitFor("both decisions recorded", () => {
        const lines = readFileSync(join(server.spool, "hook-decisions.ndjson"), "utf8").trim().split("\n");
        return lines.length >= 2
          ? lines.map((line) => (JSON.parse(line) as Record<string, unknown>)["decision"])
          : undefined;
      });
      expect(decisions).toEqual(["block", "allow"]);
    } finally {
      server.stop();
    }
  });
});

describe("agentops hook claude-code (command hook) with a warm server of the same spool", () => {
  const settings = ["--deadline-ms", "60000"];

  it("forwards the call to the server (it judges it) and answers with the command form's exit codes", async () => {
    const server = await startHookServer(settings);
    try {
      const env = withoutKafka(server.spool);
      const deny = await runHook(documentedInput("rm -rf /", "fwd", "toolu_fwd1"), env, settings);
      expect(deny.code).toBe(2);
      expect(deny.stderr).toMatch(/fs-delete-critical-path/);
      const allow = await runHook(documentedInput("ls", "fwd", "toolu_fwd2"), env, settings);
      expect(allow).toEqual({ code: 0, stdout: "", stderr: "" });
      expect((await server.health()).judged).toBe(2);
      // Other settings than the server's: the call is judged in process, the server does not see it.
      const other = await runHook(documentedInput("rm -rf /", "fwd", "toolu_fwd3"), env, ["--deadline-ms", "59000"]);
      expect(other.code).toBe(2);
      expect((await server.health()).judged).toBe(2);
    } finally {
      server.stop();
    }
  });

  it("judges in process when the server named by the spool's server file is gone", async () => {
    const server = await startHookServer(settings);
    server.stop();
    await waitFor("the server gone", () => (server.child.exitCode === null ? undefined : true));
    const spool = server.spool;
    const entry = JSON.stringify({
      url: server.url,
      pid: 1,
      deadlineMs: 60000,
      onUndecided: "ask",
      loopGuard: "off",
      loopGuardAfter: 4,
      shellTools: ["Bash"],
      maxBodyBytes: 1048576,
    });
    writeFileSync(join(spool, "hook-server.json"), entry);
    const args = [...settings, "--shell-tools", "Bash"];
    const deny = await runHook(documentedInput("rm -rf /"), withoutKafka(spool), args);
    expect(deny.code).toBe(2);
    expect(deny.stderr).toMatch(/fs-delete-critical-path/);
  });
});
