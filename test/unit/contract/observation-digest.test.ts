import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  maskObservation,
  observationDigest,
  OBSERVATION_MASKING_RULES,
} from "../../../src/contract/observation-digest.ts";

describe("observation masking (rules as data)", () => {
  it.each(OBSERVATION_MASKING_RULES.map((rule) => [rule.name, rule] as const))(
    "%s masks its example and keeps its look-alike",
    (_name, rule) => {
      expect(maskObservation(rule.example.masks, [rule])).not.toBe(rule.example.masks);
      expect(maskObservation(rule.example.keeps, [rule])).toBe(rule.example.keeps);
    },
  );

  it("property: the same output with different timings, temp paths, pids, addresses and times has one digest", () => {
    const noise = fc.record({
      ms: fc.integer({ min: 0, max: 99_999 }),
      tmp: fc.stringMatching(/^[a-z0-9_]{4,10}$/),
      pid: fc.integer({ min: 1, max: 4_000_000 }),
      addr: fc.bigInt({ min: 0x100000n, max: 0xffffffffffffn }),
      time: fc.date({
        min: new Date("2000-01-01T00:00:00Z"),
        max: new Date("2099-01-01T00:00:00Z"),
        noInvalidDate: true,
      }),
    });
    const render = (n: { ms: number; tmp: string; pid: number; addr: bigint; time: Date }): string =>
      `${n.time.toISOString()} FAILED test_x in ${(n.ms / 1000).toFixed(2)}s\nwrote /tmp/tmp${n.tmp}/out.log\nKilled process ${n.pid}\n<Foo object at 0x${n.addr.toString(16).padStart(12, "0")}>`;
    fc.assert(fc.property(noise, noise, (a, b) => observationDigest(render(a)) === observationDigest(render(b))));
  });

  it("different errors keep different digests", () => {
    expect(observationDigest("AssertionError: 3 != 4")).not.toBe(observationDigest("AssertionError: 3 != 5"));
    expect(observationDigest("x")).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
