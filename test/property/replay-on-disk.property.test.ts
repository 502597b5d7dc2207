import { execFileSync, spawn } from "node:child_process";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { shippedCatalog } from "../../src/catalog/metric-definitions.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../src/metrics/engine-config.ts";
import { replayFile, type ReplayOutcome } from "../../src/stream/transports/embedded/embedded-replay.ts";
import { withReplayState } from "../../src/stream/transports/embedded/replay-state.ts";
import { generateWorkloadLines } from "../../src/workload/workload.ts";
import { agentopsWithEnv } from "../support/cli-env.ts";
import { NODE, NODE_FLAGS, REPO_ROOT, waitFor } from "../support/processes.ts";

/**
 * Issue #32: a replay keeps the engine's state on disk (LMDB behind the bounded record cache of a
 * Kafka member) by default. On generated workloads (conflicts, redeliveries, re-reports, late
 * facts, invalid lines), in any order, with a cache small enough that nearly every read goes to
 * disk, it writes what the in-memory replay writes, byte for byte; its directory is gone after.
 */
const root = mkdtempSync(join(tmpdir(), "agentops-replay-on-disk-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const CATALOG = shippedCatalog();
let inputs = 0;

function writeInput(lines: readonly string[]): string {
  const input = join(root, `facts-${String((inputs += 1))}.ndjson`);
  writeFileSync(input, `${lines.join("\n")}\n`);
  return input;
}

/** What a replay leaves in the output files, each as the file's text. */
function outputs({ sinks }: ReplayOutcome): Outputs {
  return {
    results: Array.from(sinks.results(), ({ json }) => `${json}\n`).join(""),
    alerts: Array.from(sinks.alerts(), (alert) => `${JSON.stringify(alert)}\n`).join(""),
    runs: Array.from(sinks.runStates(), (run) => `${JSON.stringify(run)}\n`).join(""),
    deadLetters: [...sinks.deadLetterLines()].join("\n"),
  };
}

type Outputs = Record<"results" | "alerts" | "runs" | "deadLetters", string>;

/**
 * Replays `input` and reads its outputs; on disk, over a temporary state directory with a 1 MiB
 * cache and the sink log in it, checked to be used and then removed.
 */
async function replay(input: string, state: "disk" | "memory", stages?: number): Promise<Outputs> {
  let directory: string | undefined;
  const outcome = await withReplayState(state, root, 1, async (where) => {
    directory = where.directory;
    const engineTopology =
      stages === undefined ? {} : { engineTopology: { kind: "stages", partitions: stages } as const };
    const config = {
      engine: DEFAULT_ENGINE_CONFIG,
      tripwires: {},
      ...engineTopology,
      ...(where.engineState === undefined ? {} : { engineState: where.engineState }),
    };
    const replayed = await Effect.runPromise(replayFile({ input }, config, CATALOG, where.sinkLog));
    // The engine's state (and the single engine's published results) and the sinks were on disk.
    if (directory !== undefined) expect(readdirSync(directory)).toEqual(expect.arrayContaining(["sinks"]));
    if (directory !== undefined && stages === undefined)
      expect(readdirSync(join(directory, "engine-0"))).toEqual(expect.arrayContaining(["lmdb", "published-results"]));
    return outputs(replayed);
  });
  if (directory !== undefined) expect(existsSync(directory)).toBe(false);
  return outcome;
}

describe("replay with the engine state on disk", { timeout: 600_000 }, () => {
  it("writes the in-memory replay's results, alerts, run states and dead letters for any order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        async (seed, shuffleSeed) => {
          const lines = generateWorkloadLines({ seed, tasks: 120 }).lines;
          const shuffled =
            fc.sample(fc.shuffledSubarray(lines, { minLength: lines.length, maxLength: lines.length }), {
              seed: shuffleSeed,
              numRuns: 1,
            })[0] ?? lines;
          const input = writeInput(shuffled);
          const memory = await replay(input, "memory");
          const disk = await replay(input, "disk");
          expect(memory.results.split("\n").length).toBeGreaterThan(50);
          expect(disk).toEqual(memory);
        },
      ),
      { numRuns: 4 },
    );
  });

  it("gives the same outputs through the partitioned engine's stages on disk", async () => {
    const input = writeInput(generateWorkloadLines({ seed: 7, tasks: 120 }).lines);
    const memory = await replay(input, "memory");
    expect(await replay(input, "disk", 3)).toEqual(memory);
  });

  it("agentops replay writes the same files on disk (the default) as with --state memory", async () => {
    const input = writeInput(generateWorkloadLines({ seed: 11, tasks: 120 }).lines);
    const files = (state: string): string[] =>
      ["results", "alerts", "dlq"].map((name) => join(root, `cli-${state}-${name}.ndjson`));
    for (const state of ["disk", "memory"]) {
      const [results, alerts, dlq] = files(state) as [string, string, string];
      const stateFlags = state === "disk" ? ["--state-dir", root, "--state-cache-mb", "1"] : ["--state", "memory"];
      const run = await agentopsWithEnv(
        ["replay", "--input", input, "--output", results, "--alerts", alerts, "--dlq", dlq, ...stateFlags],
        {},
      );
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
    }
    const [disk, memory] = [files("disk"), files("memory")].map((paths) =>
      paths.map((path) => readFileSync(path, "utf8")),
    );
    expect(disk?.[0]?.length).toBeGreaterThan(1_000);
    expect(disk).toEqual(memory);
    // The temporary state directory was removed.
    expect(readdirSync(root).filter((name) => name.startsWith("agentops-replay-state-"))).toEqual([]);
  });

  it("removes its state directory when interrupted (SIGINT), and exits 130", async () => {
    const parent = join(root, "interrupted");
    mkdirSync(parent);
    // A named pipe that is never closed: the replay waits on its input until it is interrupted.
    const input = join(root, "facts.fifo");
    execFileSync("mkfifo", [input]);
    const child = spawn(
      NODE,
      [
        ...NODE_FLAGS,
        join(REPO_ROOT, "bin/agentops"),
        "replay",
        "--input",
        input,
        "--output",
        join(root, "never.ndjson"),
        "--state-dir",
        parent,
      ],
      { stdio: "ignore" },
    );
    // The pipe breaks when the replay ends (EPIPE): expected here.
    const writer = createWriteStream(input).on("error", () => undefined);
    writer.write(`${generateWorkloadLines({ seed: 3, tasks: 20 }).lines.join("\n")}\n`);
    const exited = new Promise<number | null>((resolve) =>
      child.on("exit", (code, signal) => resolve(code ?? (signal === "SIGINT" ? 130 : null))),
    );
    await waitFor(
      "the replay's state directory",
      () => (readdirSync(parent).some((name) => name.startsWith("agentops-replay-state-")) ? true : undefined),
      { timeoutMs: 60_000 },
    );
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    writer.destroy();
    expect(readdirSync(parent)).toEqual([]);
  });
});
