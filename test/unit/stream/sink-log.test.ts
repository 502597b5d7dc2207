import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { byUtf8 } from "../../../src/contract/code-point-order.ts";
import { diskSinkLog, memorySinkLog, tupleKey } from "../../../src/stream/transports/embedded/sink-log.ts";

const root = mkdtempSync(join(tmpdir(), "agentops-sink-log-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Tuples compared part by part: numbers by value, strings by UTF-8 bytes, a shorter tuple first. */
function compareTuples(left: readonly (string | number)[], right: readonly (string | number)[]): number {
  for (let index = 0; index < Math.min(left.length, right.length); index += 1) {
    const [a, b] = [left[index], right[index]];
    const order = typeof a === "number" && typeof b === "number" ? a - b : byUtf8(String(a), String(b));
    if (order !== 0) return order;
  }
  return left.length - right.length;
}

describe("tupleKey", () => {
  it("sorts in UTF-8 order as the tuples of its parts do, whatever characters the strings hold", () => {
    // Parts of one shape per position (as an alert's key has), strings including 0 and 1 characters and astral ones.
    const text = fc.string({ unit: fc.constantFrom("\u0000", "\u0001", "a", "b", "\u00e9", "\uffff", "\u{1f600}") });
    const number = fc.oneof(
      fc.integer({ min: -(2 ** 53), max: 2 ** 53 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    );
    const tuple = fc.tuple(number, text, fc.nat(), text);
    fc.assert(
      fc.property(fc.array(tuple, { minLength: 2, maxLength: 30 }), (tuples) => {
        const byKey = [...tuples].sort((a, b) => byUtf8(tupleKey(a), tupleKey(b)));
        const byParts = [...tuples].sort(compareTuples);
        expect(byKey.map((t) => tupleKey(t))).toEqual(byParts.map((t) => tupleKey(t)));
      }),
      { numRuns: 300 },
    );
  });

  it("tells -0 from nothing and orders negative before positive numbers", () => {
    expect(tupleKey([-0])).toBe(tupleKey([0]));
    expect(byUtf8(tupleKey([-1.5]), tupleKey([-1]))).toBeLessThan(0);
    expect(byUtf8(tupleKey([-1]), tupleKey([0]))).toBeLessThan(0);
    expect(byUtf8(tupleKey([0]), tupleKey([Number.MIN_VALUE]))).toBeLessThan(0);
  });
});

describe("the sink log", () => {
  it("keeps the latest line per key, forgets deleted keys, and reads back in key order, on disk as in memory", async () => {
    const disk = diskSinkLog(join(root, "sinks"));
    const memory = memorySinkLog();
    try {
      // More entries than one spill holds, written in a scrambled order, some twice and some deleted.
      const count = 45_000;
      for (const log of [disk, memory]) {
        for (let index = 0; index < count; index += 1) {
          const id = (index * 7_919) % count;
          log.set("results", `key-${String(id)}`, `first ${String(id)}`);
          if (id % 3 === 0) log.set("results", `key-${String(id)}`, `second ${String(id)}`);
          if (id % 5 === 0) log.set("results", `key-${String(id)}`, null);
          log.set("deadLetters", tupleKey([index]), `letter ${String(index)}`);
          await log.spill();
        }
        log.set("alerts", "only", "one alert");
        await log.settle();
      }
      const results = [...disk.sorted("results")];
      expect(results).toEqual([...memory.sorted("results")]);
      expect(results).toHaveLength(count - count / 5);
      expect(results.map(([key]) => key)).toEqual(results.map(([key]) => key).sort(byUtf8));
      expect(new Map(results).get("key-3")).toBe("second 3");
      expect(new Map(results).get("key-5")).toBeUndefined();
      const letters = [...disk.sorted("deadLetters")].map(([, line]) => line);
      expect(letters.slice(0, 3)).toEqual(["letter 0", "letter 1", "letter 2"]);
      expect(letters).toHaveLength(count);
      expect([...disk.sorted("alerts")]).toEqual([["only", "one alert"]]);
      expect([...disk.sorted("runStates")]).toEqual([]);
    } finally {
      await disk.close();
    }
  });
});
