import { describe, expect, it } from "vitest";
import { BoundedMemo, memoized } from "../../../src/metrics/memo-map.ts";
import { groupKeyOf, NO_COHORT, resultKey, snapshotScopeOf, windowScopeOf } from "../../../src/metrics/scope.ts";

describe("the bounded memo (interning whose keys grow with time)", () => {
  it("holds at most twice its capacity, keeps what is still used, and creates an evicted value again", () => {
    const memo = new BoundedMemo<number, { n: number }>(100);
    let created = 0;
    const intern = (n: number) =>
      memoized(memo, n, () => {
        created += 1;
        return { n };
      });
    const hot = intern(-1);
    for (let n = 0; n < 10_000; n++) {
      intern(n);
      // A value used all along survives every generation.
      expect(intern(-1)).toBe(hot);
      expect(memo.size).toBeLessThanOrEqual(200);
    }
    expect(created).toBe(10_001);
    const again = intern(0);
    expect(created).toBe(10_002);
    expect(again).toEqual({ n: 0 });
  });

  it("refuses a capacity below 1, naming it", () => {
    expect(() => new BoundedMemo(0)).toThrow(/capacity of at least 1, not 0/);
  });

  it("holds about the 2,048 most recent snapshot scopes: their result keys stay alive with them, so more would grow the heap with every snapshot", () => {
    const cutoff = 1_700_000_000_000;
    const old = snapshotScopeOf("held-0", cutoff);
    const recent: ReturnType<typeof snapshotScopeOf>[] = [];
    for (let index = 1; index <= 3_000; index++) {
      const scope = snapshotScopeOf(`held-${String(index)}`, cutoff);
      if (index > 2_000) recent.push(scope);
    }
    // 3,000 snapshots later the first is made again; the last thousand are still the same objects.
    expect(snapshotScopeOf("held-0", cutoff)).not.toBe(old);
    expect(
      recent.every((scope, position) => snapshotScopeOf(`held-${String(2_001 + position)}`, cutoff) === scope),
    ).toBe(true);
  });

  it("scopes and result keys interned past the bound are equal to the first ones (never compared by identity)", () => {
    const first = snapshotScopeOf("snapshot-0", 1_700_000_000_000);
    const firstWindow = windowScopeOf(0, 3_600_000);
    const firstKey = groupKeyOf("task-cohort-comparison-eligibility", first, NO_COHORT);
    for (let index = 1; index < 40_000; index++) {
      snapshotScopeOf(`snapshot-${String(index)}`, 1_700_000_000_000);
      windowScopeOf(index * 3_600_000, 3_600_000);
    }
    const again = snapshotScopeOf("snapshot-0", 1_700_000_000_000);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    expect(windowScopeOf(0, 3_600_000)).toEqual(firstWindow);
    expect(groupKeyOf("task-cohort-comparison-eligibility", again, NO_COHORT)).toBe(firstKey);
    expect(firstKey).toBe(resultKey("task-cohort-comparison-eligibility", first, NO_COHORT));
  });
});
