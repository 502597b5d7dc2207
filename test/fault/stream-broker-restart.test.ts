import { spawn } from "node:child_process";
import { join } from "node:path";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { topicNames } from "../../src/stream/topic-names.ts";
import { readLatestResults } from "../../src/stream/audit/topic-results.ts";
import { closeAll, connectedProducer, testKafka, uniqueName } from "../support/kafka.ts";
import {
  REPO_ROOT,
  chunks,
  describeDifferences,
  embeddedReplay,
  isAlive,
  killAllProcessors,
  metricSum,
  fetchMetrics,
  produceLines,
  readAlertIds,
  readLines,
  runAgentopsOk,
  startProcessor,
  testDir,
  topicSerde,
  waitFor,
  waitForResults,
  type EmbeddedReplay,
} from "../support/processes.ts";

/**
 * Issue #5, broker restart mid-stream: the local broker is stopped and started again by the ops
 * scripts' own functions with its data kept (`kafka_down`, `kafka_up` with keep-data, as
 * `ops/services.sh up --keep-data` does); the running processor instance recovers by itself
 * (kafkajs reconnects or restarts its consumers) and the final results equal the embedded replay.
 * Only when the integration setup runs the services through ops/ (not the user's own cluster or
 * containers); the broker is brought back up and checked healthy even when the test fails.
 */

const usesOps = inject("servicesSource") === "ops";

let dir: string;
let lines: string[];
let expected: EmbeddedReplay;
let kafka: Kafka;

/** Runs a bash snippet in the repository with the ops helpers sourced; resolves its exit code. */
function opsShell(script: string, timeoutMs = 240_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      "bash",
      ["-c", `set -euo pipefail; source ops/lib/common.sh; source ops/lib/kafka.sh; ${script}`],
      { cwd: REPO_ROOT, stdio: ["ignore", "inherit", "inherit"] },
    );
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve(code ?? 1);
    });
  });
}

/** Whatever happened, leave the broker running (with its data) and healthy for everyone else. */
async function ensureBrokerUp(): Promise<void> {
  if ((await opsShell("kafka_is_running && kafka_health --quiet")) === 0) return;
  const code = await new Promise<number>((resolve) =>
    spawn("bash", ["ops/services.sh", "up", "--keep-data"], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "inherit", "inherit"],
    }).on("exit", (exit) => resolve(exit ?? 1)),
  );
  if (code !== 0) throw new Error(`ops/services.sh up --keep-data exited ${code}: the broker may be down`);
}

beforeAll(async () => {
  if (!usesOps) return;
  dir = testDir("agentops-broker-");
  const facts = join(dir, "facts.ndjson");
  await runAgentopsOk(["generate", "--out", facts, "--tasks", "600", "--seed", "13"]);
  lines = readLines(facts);
  expected = await embeddedReplay(facts, dir);
  kafka = testKafka();
});

afterAll(async () => {
  await killAllProcessors();
  await closeAll();
  if (usesOps) await ensureBrokerUp();
});

describe("broker restart", () => {
  it.skipIf(!usesOps)(
    "mid-stream, with data kept: the processor recovers by itself and the results equal the embedded replay",
    async () => {
      const prefix = uniqueName("broker");
      const topics = topicNames(prefix);
      const serde = topicSerde();
      const [first, second] = chunks(lines, 2);
      const instance = await startProcessor({ topicPrefix: prefix, name: "broker", dir });

      const before = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
      await produceLines(before, serde, topics, first ?? []);
      await before.disconnect();
      await waitFor(
        "results from the first half",
        async () => ((await readLatestResults(kafka, serde, topics.results)).size > 0 ? true : undefined),
        { timeoutMs: 60_000, intervalMs: 1_000 },
      );

      try {
        expect(await opsShell("kafka_down && kafka_up 1")).toBe(0);
      } finally {
        await ensureBrokerUp();
      }

      const after = await connectedProducer(kafka, { idempotent: true, maxInFlightRequests: 1 });
      await produceLines(after, serde, topics, second ?? []);

      const quiet = await waitForResults(kafka, topics.results, expected.results, 240_000, serde);
      expect(
        quiet.comparison.differingKeys,
        describeDifferences(expected.results, quiet.actual, quiet.comparison),
      ).toEqual([]);
      const alertIds = await waitFor(
        "the embedded replay's alerts",
        async () => {
          const ids = await readAlertIds(kafka, topics.alerts, serde);
          return ids.length >= expected.alertIds.length ? ids : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1_000 },
      );
      expect(alertIds).toEqual(expected.alertIds);
      // Recovered by itself: the same process ran throughout, and its groups re-formed.
      expect(isAlive(instance)).toBe(true);
      expect(metricSum(await fetchMetrics(instance), "agentops_rebalances_total")).toBeGreaterThan(3);
    },
  );
});
