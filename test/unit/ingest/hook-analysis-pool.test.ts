import { afterEach, describe, expect, it } from "vitest";
import { AnalysisPool, type RecycleCause } from "../../../src/ingest/hook/analysis-pool.ts";
import type { HookSubject } from "../../../src/ingest/hook/claude-code-hook.ts";

/**
 * The hook's analysis workers: a deadline that stops an analysis and replaces its worker, calls
 * judged side by side, and a pool that keeps judging after any of that.
 */
const context = { cwd: "/work/repo", workspaceRoot: "/work/repo", home: "/home/dev" };
const shell = (command: string): HookSubject => ({ kind: "shell", command });
/** Within the parser's bounds (16 KiB) and far slower to analyse than a millisecond. */
const SLOW = `rm -rf ./build${"; true".repeat(2_300)}`;
const pools: AnalysisPool[] = [];

async function startedPool(workers: number, onRecycle?: (cause: RecycleCause) => void): Promise<AnalysisPool> {
  const pool = new AnalysisPool({ workers, maxHeapMb: 256, ...(onRecycle === undefined ? {} : { onRecycle }) });
  pools.push(pool);
  await pool.ready(120_000);
  return pool;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

describe("hook analysis pool", () => {
  it("answers undecided at the deadline (with the reason); the worker stops that analysis itself and judges the next call", async () => {
    const causes: RecycleCause[] = [];
    const pool = await startedPool(1, (cause) => causes.push(cause));
    const started = performance.now();
    const late = await pool.judge(shell(SLOW), context, 1);
    expect(late).toEqual({
      decision: "undecided",
      findings: [],
      reason: "the analysis did not finish within 1 ms and was stopped",
    });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect((await pool.judge(shell("rm -rf /"), context, 60_000)).decision).toBe("block");
    expect(causes).toEqual([]);
    // The cut-short analysis was not remembered: with time it gets its verdict.
    expect((await pool.judge(shell(SLOW), context, 60_000)).decision).toBe("allow");
  });

  it("answers a quick call while another worker is busy with a slow one", async () => {
    const pool = await startedPool(2);
    const order: string[] = [];
    const slow = pool.judge(shell(SLOW), context, 60_000).then((verdict) => order.push(`slow:${verdict.decision}`));
    const quick = pool
      .judge(shell("rm -rf /"), context, 60_000)
      .then((verdict) => order.push(`quick:${verdict.decision}`));
    await Promise.all([slow, quick]);
    expect(order).toEqual(["quick:block", "slow:allow"]);
  });

  it("makes a call that waits for a free worker past its deadline undecided", async () => {
    const pool = await startedPool(1);
    const busy = pool.judge(shell(SLOW), context, 60_000);
    expect(await pool.judge(shell("ls"), context, 1)).toEqual({
      decision: "undecided",
      findings: [],
      reason: "no analyser was free within 1 ms",
    });
    expect((await busy).decision).toBe("allow");
  });
});
