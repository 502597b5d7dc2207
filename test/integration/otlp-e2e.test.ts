import type { ChildProcess } from "node:child_process";
import { OTLPLogExporter as JsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { afterAll, describe, expect, it } from "vitest";
import { uniqueName } from "../support/kafka.ts";
import {
  killAllProcessors,
  runAgentopsOk,
  startOtlpReceiver,
  startProcessor,
  testDir,
  waitFor,
} from "../support/processes.ts";
import { emitClaudeCodeSession } from "../support/otel-sdk.ts";

/**
 * Done-when of issue #11 on the shared broker: a Claude Code session exported over OTLP/HTTP
 * (JSON and protobuf, by the real SDK exporters) to `agentops otlp` becomes model calls, costs and
 * tool steps; an `agentops run` processor turns them into metrics and alerts, read back with
 * `agentops results` and `agentops alerts`.
 */

const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) child.kill("SIGTERM");
  await killAllProcessors();
});

describe("Claude Code over OTLP → agentops otlp → agentops run → results and alerts", () => {
  it("a session's rm -rf / alerts, and its calls are measured by the attribution tuple", async () => {
    const dir = testDir("agentops-otlp-e2e-");
    const prefix = uniqueName("otlp-e2e");
    // A shared, loaded machine can take minutes to start a JVM-backed processor group.
    await startProcessor({ topicPrefix: prefix, name: "otlp-e2e", dir }, 300_000);
    const receiver = await startOtlpReceiver(prefix);
    children.push(receiver.child);
    const { url } = receiver;

    const overProtobuf = uniqueName("cc-proto");
    const overJson = uniqueName("cc-json");
    await emitClaudeCodeSession(new ProtoLogExporter({ url: `${url}/v1/logs` }), overProtobuf, [
      "ls -la",
      "npm test",
      "rm -rf /",
    ]);
    await emitClaudeCodeSession(
      new JsonLogExporter({ url: `${url}/v1/logs` }),
      overJson,
      ["git status", "npm run build"],
      Date.parse("2026-11-30T10:05:00.000Z"),
    );

    const alerts = await waitFor(
      "the destructive alert",
      async () => {
        const { stdout } = await runAgentopsOk(["alerts", "--json", "--topic-prefix", prefix]);
        const parsed = stdout
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        return parsed.some((alert) => alert["run_id"] === overProtobuf) ? parsed : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 3_000 },
    );
    expect(
      alerts.filter((alert) => alert["run_id"] === overProtobuf).map((alert) => [alert["rule_id"], alert["severity"]]),
    ).toContainEqual(["fs-delete-critical-path", "critical"]);
    expect(alerts.some((alert) => alert["run_id"] === overJson)).toBe(false);

    const cohort = {
      model: "claude-sonnet-5",
      provider: "anthropic",
      role: "implementer",
      runtime: "claude-code@2.1.240",
    };
    // Result cohorts are maps with sorted keys.
    const sameCohort = (result: Record<string, unknown>, expected: Record<string, string>) =>
      JSON.stringify(result["cohort"]) === JSON.stringify(Object.fromEntries(Object.entries(expected).sort()));
    const results = await waitFor(
      "token usage of the five calls",
      async () => {
        const { stdout } = await runAgentopsOk(["results", "--json", "--topic-prefix", prefix]);
        const parsed = stdout
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        const input = parsed.find(
          (result) =>
            result["metric_id"] === "operational-token-usage" && sameCohort(result, { ...cohort, direction: "input" }),
        );
        return input !== undefined && (input["coverage"] as { numerator: number }).numerator === 5 ? parsed : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 3_000 },
    );
    const tokens = results.find(
      (result) =>
        result["metric_id"] === "operational-token-usage" && sameCohort(result, { ...cohort, direction: "input" }),
    );
    // 5 calls × 5200 input tokens, each reported by Claude Code.
    expect(tokens).toMatchObject({ status: "PUBLISHED", value: 26_000, coverage: { numerator: 5, denominator: 5 } });
    // The client's cost estimate is reported, and honestly not eligible money: no sum is published from it.
    const cost = results.filter((result) => result["metric_id"] === "operational-attributable-cost");
    expect(cost.length).toBeGreaterThan(0);
    expect(cost.every((result) => result["status"] !== "PUBLISHED")).toBe(true);
    const latency = results.find(
      (result) => result["metric_id"] === "operational-latency-ms" && sameCohort(result, cohort),
    );
    expect(latency).toMatchObject({ status: "PUBLISHED", value: 2100, coverage: { numerator: 5, denominator: 5 } });
  }, 600_000);
});
