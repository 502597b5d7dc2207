import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  admitSeq,
  emptySeenSeqs,
  rangesOfSeqs,
  seenCount,
  wellFormedRanges,
  type SeqVerdict,
} from "../../../src/tripwires/seen-seqs.ts";

/** The dedupe window as it was defined before the ranges: a sorted list of the seqs, the lowest dropped first. */
function referenceWindow(window: number) {
  const seen: number[] = [];
  let floor = 0;
  return {
    admit(seq: number): SeqVerdict {
      if (seq < floor) return "late";
      if (seen.includes(seq)) return "duplicate";
      seen.push(seq);
      seen.sort((left, right) => left - right);
      if (seen.length > window) floor = (seen.shift() ?? 0) + 1;
      return "new";
    },
    state: () => ({ seqs: [...seen], floor }),
  };
}

describe("seen seqs as ranges", () => {
  it("give the same verdicts, set and floor as the sorted list, in any arrival order", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 24 }),
        fc.array(fc.oneof(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 5 })), { maxLength: 200 }),
        (window, seqs) => {
          const reference = referenceWindow(window);
          const seen = emptySeenSeqs();
          for (const seq of seqs) {
            expect(admitSeq(seen, seq, window)).toBe(reference.admit(seq));
            expect(wellFormedRanges(seen.ranges)).toBe(true);
            expect(seen.ranges).toEqual(rangesOfSeqs(reference.state().seqs));
            expect(seen.floor).toBe(reference.state().floor);
            expect(seenCount(seen)).toBe(reference.state().seqs.length);
          }
        },
      ),
    );
  });

  it("hold a full window of in-order seqs as one range", () => {
    const seen = emptySeenSeqs();
    for (let seq = 0; seq < 2000; seq++) admitSeq(seen, seq, 512);
    expect(seen).toEqual({ ranges: [1488, 1999], floor: 1488 });
  });

  it("refuse ranges admitSeq would never build", () => {
    expect(wellFormedRanges([1, 3, 4, 6])).toBe(false); // adjacent: one range
    expect(wellFormedRanges([5, 3])).toBe(false);
    expect(wellFormedRanges([1, 2, 4])).toBe(false);
    expect(wellFormedRanges([1, 2, 4, 4])).toBe(true);
  });
});
