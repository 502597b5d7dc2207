import { describe, expect, it } from "vitest";
import { parseFact } from "../../../src/contract/parse-fact.ts";
import { observationDigest } from "../../../src/contract/observation-digest.ts";
import { IMPORTERS, importLogs, logFiles } from "../../../src/ingest/importers/import-logs.ts";
import type { Fact, ImportFormat } from "../../../src/ingest/importers/run-builder.ts";
import { replayAgentEvents } from "../../support/replay-agent-events.ts";
import type { AgentEvent } from "../../../src/contract/facts.ts";

/**
 * Each format's sample log (samples/importers/<format>/, written by the project in the format's
 * documented shape) is imported, checked against the observation contract, and imported again.
 */
const BASE_TIME = Date.parse("2026-01-01T00:00:00Z");

function run(format: ImportFormat): { facts: Fact[]; summary: ReturnType<typeof importLogs> } {
  const facts: Fact[] = [];
  const files = logFiles([`samples/importers/${format}`], IMPORTERS[format]);
  const summary = importLogs(format, files, { baseTimeMs: BASE_TIME }, (fact) => facts.push(fact));
  return { facts, summary };
}

const steps = (facts: Fact[]) => facts.filter((fact) => fact["type"] === "agent_step");
const byType = (facts: Fact[], type: string) => facts.filter((fact) => fact["type"] === type);

describe.each(Object.keys(IMPORTERS) as ImportFormat[])("importer %s", (format) => {
  it("writes facts the contract accepts, with unique ids, and the same facts on a second import", () => {
    const first = run(format);
    expect(first.facts.length).toBeGreaterThan(0);
    for (const fact of first.facts) expect(parseFact(fact)).toMatchObject({ ok: true });
    expect(new Set(first.facts.map((fact) => fact["fact_id"])).size).toBe(first.facts.length);
    expect(JSON.stringify(run(format).facts)).toBe(JSON.stringify(first.facts));
  });

  it("numbers steps by log order, and a sandbox event carries the seq of its tool call", () => {
    const { facts } = run(format);
    const seqs = steps(facts).map((step) => step["seq"]);
    expect(seqs).toEqual(seqs.map((_, index) => index));
    for (const event of byType(facts, "sandbox_event")) {
      const call = steps(facts).find((step) => step["seq"] === event["seq"] && step["run_id"] === event["run_id"]);
      expect(call?.["kind"]).toBe("tool_call");
    }
  });

  it("replays through the run monitor (every agent event parses)", () => {
    const events = run(format)
      .facts.map((fact) => parseFact(fact))
      .flatMap((parsed) =>
        parsed.ok && (parsed.fact.type === "agent_step" || parsed.fact.type === "sandbox_event")
          ? [parsed.fact as AgentEvent]
          : [],
      );
    expect(events.length).toBeGreaterThan(0);
    expect(() => replayAgentEvents(events)).not.toThrow();
  });
});

describe("what each format maps to", () => {
  it("claude-code: tool_use with its tool_result, is_error as status, one model call per streamed message id", () => {
    const { facts, summary } = run("claude-code");
    const calls = steps(facts).filter((step) => step["kind"] === "tool_call");
    expect(calls.map((call) => [call["tool"], call["status"]])).toEqual([
      ["Bash", "error"],
      ["Edit", "ok"],
      ["Bash", "ok"],
    ]);
    expect(calls[0]?.["input"]).toBe(
      '{"command":"python -m pytest tests/test_math.py -q","description":"Run the failing test"}',
    );
    expect(calls[0]?.["observation_digest"]).toBe(
      observationDigest("F\nAssertionError: assert 3 == 4\n1 failed in 0.12s"),
    );
    const models = byType(facts, "model_call");
    expect(models).toHaveLength(4);
    // msg_01 was streamed as two lines: the last usage counts.
    expect(models[0]).toMatchObject({
      call_id: "5f0c1d2e-0000-4000-8000-000000000001/msg_01",
      input_tokens: 1200,
      output_tokens: 48,
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      runtime: "claude-code",
      usage_source: "PROVIDER",
      provenance: { basis: "DIRECT_HOST" },
    });
    expect(models[0]?.["role"]).toBeUndefined();
    expect(
      byType(facts, "sandbox_event").map((event) => [event["kind"], event["command"] ?? event["path"], event["cwd"]]),
    ).toEqual([
      ["exec", "python -m pytest tests/test_math.py -q", "/home/dev/app"],
      ["file_write", "/home/dev/app/src/math.py", "/home/dev/app"],
      ["exec", "python -m pytest tests/test_math.py -q", "/home/dev/app"],
    ]);
    expect(summary.unmapped).toEqual({
      'line type "summary" (not a step)': 1,
      "thinking block (reasoning, not a step)": 1,
    });
  });

  it("codex: function calls with exit codes from both output forms, apply_patch as a file write, token_count as model calls", () => {
    const { facts } = run("codex");
    const calls = steps(facts).filter((step) => step["kind"] === "tool_call");
    expect(calls.map((call) => [call["tool"], call["status"]])).toEqual([
      ["shell", "ok"],
      ["shell", "error"],
      ["apply_patch", undefined],
    ]);
    expect(
      byType(facts, "sandbox_event").map((event) => [
        event["kind"],
        event["command"] ?? event["path"],
        event["exit_code"],
      ]),
    ).toEqual([
      ["exec", "ls *.py", 0],
      ["exec", "python app.py", 1],
      ["file_write", "app.py", undefined],
    ]);
    expect(calls[1]?.["observation_digest"]).toBe(observationDigest("ModuleNotFoundError: No module named 'utils'\n"));
    expect(
      byType(facts, "model_call").map((call) => [call["model"], call["input_tokens"], call["output_tokens"]]),
    ).toEqual([
      ["gpt-5-codex", 2100, 30],
      ["gpt-5-codex", 2300, 25],
    ]);
    expect(steps(facts).every((step) => step["run_id"] === "0199aa00-0000-7000-8000-000000000002")).toBe(true);
  });

  it("swe-agent: derived event times (base + step index ms) flagged DERIVED, tools by command word", () => {
    const { facts, summary } = run("swe-agent");
    const calls = steps(facts);
    expect(calls.map((call) => call["tool"])).toEqual(["find_file", "open", "edit", "bash", "submit"]);
    expect(calls.map((call) => call["event_time"])).toEqual(
      [0, 1, 2, 3, 4].map((index) => new Date(BASE_TIME + index).toISOString()),
    );
    expect(calls.every((call) => (call["provenance"] as { basis: string }).basis === "DERIVED")).toBe(true);
    expect(calls[3]?.["status"]).toBe("error"); // a traceback
    expect(calls[0]?.["status"]).toBeUndefined(); // unknown, never guessed ok
    expect(byType(facts, "sandbox_event").map((event) => [event["kind"], event["command"] ?? event["path"]])).toEqual([
      ["file_read", "src/math.py"],
      ["file_write", "/repo/src/math.py"],
      ["exec", "python -m pytest -q"],
    ]);
    expect(summary.unmapped).toEqual({ "token usage only as run totals (info.model_stats), no model_call": 1 });
  });

  it("mini-swe-agent: one bash block is a tool call with its return code; a format error and its reply are messages", () => {
    const { facts } = run("mini-swe-agent");
    expect(steps(facts).map((step) => [step["kind"], step["actor"], step["status"]])).toEqual([
      ["message", "user", undefined],
      ["tool_call", "assistant", "ok"],
      ["message", "assistant", undefined],
      ["message", "environment", undefined],
      ["tool_call", "assistant", "error"],
      ["tool_call", "assistant", undefined],
    ]);
    expect(
      byType(facts, "model_call").map((call) => [call["call_id"], call["input_tokens"], call["output_tokens"]]),
    ).toHaveLength(4);
    const exec = byType(facts, "sandbox_event")[1];
    expect(exec).toMatchObject({
      command: "sed -i 's/ - 1//' src/math.py && python -m pytest -q",
      exit_code: 1,
      event_time: "2026-03-01T10:00:10.000Z",
      provenance: { basis: "DIRECT_HOST" },
    });
  });

  it("openhands: actions with their observations by cause, exit codes, zone-less times read as UTC and flagged DERIVED", () => {
    const { facts, summary } = run("openhands");
    expect(steps(facts).map((step) => [step["kind"], step["tool"], step["status"]])).toEqual([
      ["message", undefined, undefined],
      ["tool_call", "execute_bash", "error"],
      ["tool_call", "str_replace_editor", "ok"],
      ["tool_call", "finish", undefined],
    ]);
    expect(steps(facts)[1]).toMatchObject({
      event_time: "2026-03-01T10:00:03.000Z",
      provenance: { basis: "DERIVED" },
      input: '{"command":"python -m pytest -q","is_input":false}',
    });
    expect(byType(facts, "model_call")).toHaveLength(3);
    expect(summary.unmapped).toEqual({ 'action "change_agent_state" (not a step)': 1 });
  });
});

describe("openhands LLM completion logs (trajs/<instance>/*.json of SWE-bench submissions)", () => {
  // A fixture written by the project in the documented shape: {messages, response, fncall_messages, fncall_response}.
  const importFixture = (): { facts: Fact[]; summary: ReturnType<typeof importLogs> } => {
    const facts: Fact[] = [];
    const files = logFiles(["test/fixtures/importers/openhands-completion"], IMPORTERS.openhands);
    const summary = importLogs("openhands", files, { baseTimeMs: BASE_TIME }, (fact) => facts.push(fact));
    return { facts, summary };
  };

  it("reads the function-calling conversation: tool calls paired with their answers by id, the exit-code footer and editor ERROR: as status, the instance folder as run", () => {
    const { facts, summary } = importFixture();
    expect(summary.runs).toBe(1);
    expect(steps(facts).map((step) => [step["kind"], step["tool"], step["status"]])).toEqual([
      ["message", undefined, undefined],
      ["tool_call", "execute_bash", "error"],
      ["tool_call", "str_replace_editor", "ok"],
      ["tool_call", "str_replace_editor", "error"],
      ["tool_call", "execute_bash", "ok"],
      ["tool_call", "finish", undefined],
    ]);
    expect(String(steps(facts)[0]?.["run_id"])).toMatch(/^example__repo-1-[0-9a-f]{12}$/);
    expect(byType(facts, "sandbox_event").map((event) => [event["kind"], event["exit_code"] ?? event["path"]])).toEqual(
      [
        ["exec", 1],
        ["file_write", "/workspace/repo/src/math.py"],
        // The rejected str_replace (ERROR:) wrote nothing: no file event for it.
        ["exec", 0],
      ],
    );
    expect(byType(facts, "model_call")).toHaveLength(1);
    expect(summary.unmapped).toEqual({ "system prompt (not a step)": 1 });
    for (const fact of facts) expect(parseFact(fact)).toMatchObject({ ok: true });
  });
});
