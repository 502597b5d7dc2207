import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CALL_MS, inputTokens, outputTokens } from "../support/genai-app.ts";
import { uniqueName } from "../support/kafka.ts";
import {
  killAllProcessors,
  NODE,
  NODE_FLAGS,
  REPO_ROOT,
  runAgentopsOk,
  startOtlpReceiver,
  startProcessor,
  type OtlpReceiver,
  testDir,
  waitFor,
} from "../support/processes.ts";

/**
 * Issue #35 §4 on the shared broker: a GenAI app (the OpenTelemetry JS SDK, GenAI semantic
 * conventions, in a process of its own) configured only as docs/ingest.md says, exporting to
 * `agentops otlp`, gets published operational metrics from `agentops run`, not NOT_AVAILABLE: once
 * with the resource attributes the docs give, once with the documented explicit mapping of
 * `gen_ai.agent.name` as the role. An app that sets neither is told what to set: by the receiver's
 * `/metrics` and by the summary it prints when it stops.
 */

const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) child.kill("SIGTERM");
  await killAllProcessors();
});

async function startReceiver(prefix: string, extraArgs: readonly string[]): Promise<OtlpReceiver> {
  const receiver = await startOtlpReceiver(prefix, extraArgs);
  children.push(receiver.child);
  return receiver;
}

/** Runs test/support/genai-app.ts with only the environment the docs name, and waits for it to export. */
function runGenAiApp(env: Record<string, string>, runs: number, calls: number, agent: string, start: string) {
  return new Promise<void>((resolve, reject) => {
    const app = spawn(
      NODE,
      [...NODE_FLAGS, join(REPO_ROOT, "test/support/genai-app.ts"), String(runs), String(calls), agent, start],
      // No inherited OTEL_* variable may configure the app behind the docs' back.
      { cwd: REPO_ROOT, stdio: ["ignore", "inherit", "inherit"], env: { PATH: process.env["PATH"] ?? "", ...env } },
    );
    app.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`the GenAI app exited ${String(code)}`))));
  });
}

type Result = Record<string, unknown> & { coverage: { numerator: number; denominator: number } };

const sorted = (cohort: Record<string, string>): string =>
  JSON.stringify(Object.fromEntries(Object.entries(cohort).sort()));

describe("a GenAI app connected as docs/ingest.md says", () => {
  it("gets published operational metrics, and is told what is missing when it sets nothing", async () => {
    const dir = testDir("agentops-genai-docs-");
    const prefix = uniqueName("genai-docs");
    // A shared, loaded machine can take minutes to start a JVM-backed processor group.
    await startProcessor({ topicPrefix: prefix, name: "genai-docs", dir }, 300_000);
    const plain = await startReceiver(prefix, []);
    // The docs' example mapping, verbatim.
    const mapping = join(dir, "mapping.json");
    writeFileSync(mapping, '{ "role": ["agentops.role", "gen_ai.agent.name"] }\n');
    const mapped = await startReceiver(prefix, ["--mapping", mapping]);

    // 1. The resource attributes of "What a GenAI app sets to get figures".
    await runGenAiApp(
      {
        OTEL_SERVICE_NAME: "support-agent",
        OTEL_EXPORTER_OTLP_ENDPOINT: plain.url,
        OTEL_RESOURCE_ATTRIBUTES: "agentops.role=writer,agentops.runtime=openai-agents@0.4",
      },
      2,
      3,
      "Support Bot",
      "2026-11-30T10:00:00.000Z",
    );
    // 2. gen_ai.agent.name read as the role by the explicit mapping; the runtime still on the resource.
    await runGenAiApp(
      {
        OTEL_SERVICE_NAME: "triage-agent",
        OTEL_EXPORTER_OTLP_ENDPOINT: mapped.url,
        OTEL_RESOURCE_ATTRIBUTES: "agentops.runtime=openai-agents@0.4",
      },
      2,
      2,
      "triage",
      "2026-11-30T11:00:00.000Z",
    );
    // 3. Only the endpoint: the app, whose calls the operational metrics must leave out.
    await runGenAiApp(
      { OTEL_SERVICE_NAME: "bare-agent", OTEL_EXPORTER_OTLP_ENDPOINT: plain.url },
      1,
      2,
      "Bare Bot",
      "2026-11-30T12:00:00.000Z",
    );

    const base = { model: "gpt-5-2026-08-07", provider: "openai", runtime: "openai-agents@0.4" };
    const writer = { ...base, role: "writer" };
    const triage = { ...base, role: "triage" };
    const find = (results: Result[], metric: string, cohort: Record<string, string>): Result | undefined =>
      results.find((result) => result["metric_id"] === metric && JSON.stringify(result["cohort"]) === sorted(cohort));
    const results = await waitFor(
      "the operational metrics of both apps",
      async () => {
        const { stdout } = await runAgentopsOk(["results", "--json", "--topic-prefix", prefix]);
        const parsed = stdout
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line) as Result);
        const done = [
          [writer, 6],
          [triage, 4],
        ] as const;
        return done.every(
          ([cohort, calls]) =>
            find(parsed, "operational-token-usage", { ...cohort, direction: "output" })?.coverage.numerator === calls,
        )
          ? parsed
          : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 3_000 },
    );

    const sum = (calls: number[], tokens: (call: number) => number): number =>
      calls.reduce((total, call) => total + tokens(call), 0);
    for (const [cohort, calls] of [
      [writer, [0, 1, 2, 3, 4, 5]],
      [triage, [0, 1, 2, 3]],
    ] as const) {
      const n = calls.length;
      const covered = { numerator: n, denominator: n };
      expect(find(results, "operational-token-usage", { ...cohort, direction: "input" })).toMatchObject({
        status: "PUBLISHED",
        value: sum([...calls], inputTokens),
        coverage: covered,
      });
      expect(find(results, "operational-token-usage", { ...cohort, direction: "output" })).toMatchObject({
        status: "PUBLISHED",
        value: sum([...calls], outputTokens),
        coverage: covered,
      });
      expect(find(results, "operational-latency-ms", cohort)).toMatchObject({
        status: "PUBLISHED",
        value: CALL_MS,
        coverage: covered,
      });
      const availability = find(results, "operational-usage-availability", cohort);
      expect(availability).toMatchObject({ status: "PUBLISHED", coverage: covered });
      expect(availability?.["value"]).not.toBeNull();
      // The GenAI conventions carry no cost: the calls are candidates without a linked cost (N/A, never 0), as documented.
      expect(find(results, "operational-attributable-cost", cohort)).toMatchObject({
        status: "NOT_AVAILABLE",
        value: null,
        coverage: { numerator: 0, denominator: n },
      });
    }

    // The bare app's two calls: counted by coordinate with the attribute to set, on /metrics...
    const metrics = await (await fetch(`${plain.url}/metrics`)).text();
    expect(metrics).toContain(
      'agentops_otlp_calls_missing_coordinate_total{attribute="agentops.role",coordinate="role"} 2',
    );
    expect(metrics).toMatch(/agentops_otlp_calls_missing_coordinate_total\{attribute="agentops\.runtime[^}]*\} 2/);
    expect(metrics).not.toContain('coordinate="provider"');
    expect(await (await fetch(`${mapped.url}/metrics`)).text()).not.toContain("calls_missing_coordinate_total{");
    // ...and in the summary printed when the receiver stops.
    const exited = new Promise((resolve) => plain.child.once("exit", resolve));
    plain.child.kill("SIGTERM");
    await exited;
    expect(plain.stdout()).toContain(
      "model calls left out of the operational metrics for want of an attribution coordinate:\n" +
        "  2 without role: set agentops.role\n" +
        "  2 without runtime: set agentops.runtime (or service.name@service.version for claude-code, claude-code-desktop)\n",
    );
  }, 600_000);
});
