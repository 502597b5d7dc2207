import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EngineFactKeys } from "../../../src/stream/audit/engine-fact-keys.ts";

const root = mkdtempSync(join(tmpdir(), "agentops-engine-fact-keys-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the audit's engine-facts key set on disk", () => {
  it("answers every lookup while its cache stays within budget, for adds and for reads alike", async () => {
    const budget = 256 * 1024;
    const keys = EngineFactKeys.open(root, budget);
    try {
      const count = 40_000;
      const key = (index: number): string => `fact-${String(index).padStart(8, "0")}\u0000sha256:${String(index * 31)}`;
      let peak = 0;
      for (let index = 0; index < count; index += 1) {
        await keys.add(key(index));
        peak = Math.max(peak, keys.cacheStats()?.cachedBytes ?? 0);
      }
      // Every key read back (each a cache miss once evicted), then keys never added.
      for (let index = 0; index < count; index += 1) {
        expect(await keys.has(key(index))).toBe(true);
        peak = Math.max(peak, keys.cacheStats()?.cachedBytes ?? 0);
      }
      for (let index = count; index < count + 5_000; index += 1) expect(await keys.has(key(index))).toBe(false);
      const stats = keys.cacheStats();
      expect(stats?.evictions).toBeGreaterThan(0);
      // Over budget by at most what a commit lets gather before it evicts (MAX_DIRTY_ENTRIES bounds writes; reads stop at the budget).
      expect(peak).toBeLessThan(budget * 2);
    } finally {
      await keys.close();
    }
  });
});
