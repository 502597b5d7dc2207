/**
 * The seqs of one record type a run has seen, for at-least-once dedupe: the `window` highest
 * distinct seqs, and a floor below which a seq is too old to tell from a redelivery ("late").
 *
 * Kept as ranges of consecutive seqs, [first, last, first, last, …] ascending, with a gap between
 * any two ranges: records mostly arrive in order, so a full window of 512 seqs is one range (two
 * numbers, not 512). Out-of-order arrival splits ranges; at worst (every other seq) a range per
 * seq. The set, the verdicts and the floor are those of a sorted list of the seqs.
 */
export interface SeenSeqs {
  ranges: number[];
  /** Seqs below this are late; it is one above the highest seq dropped from the window. */
  floor: number;
}

export type SeqVerdict = "new" | "duplicate" | "late";

export function emptySeenSeqs(): SeenSeqs {
  return { ranges: [], floor: 0 };
}

/** Records a seq as seen; says whether it was new, a redelivery, or too old to tell. */
export function admitSeq(seen: SeenSeqs, seq: number, window: number): SeqVerdict {
  if (seq < seen.floor) return "late";
  const ranges = seen.ranges;
  const pairs = ranges.length >>> 1;
  // The first range whose last seq is ≥ seq (pairs when none).
  let low = 0;
  let high = pairs;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((ranges[2 * middle + 1] ?? 0) < seq) low = middle + 1;
    else high = middle;
  }
  if (low < pairs && (ranges[2 * low] ?? 0) <= seq) return "duplicate";
  const extendsPrevious = low > 0 && ranges[2 * low - 1] === seq - 1;
  const extendsNext = low < pairs && ranges[2 * low] === seq + 1;
  if (extendsPrevious && extendsNext) {
    ranges[2 * low - 1] = ranges[2 * low + 1] ?? seq;
    ranges.splice(2 * low, 2);
  } else if (extendsPrevious) ranges[2 * low - 1] = seq;
  else if (extendsNext) ranges[2 * low] = seq;
  else if (low === pairs) ranges.push(seq, seq);
  else ranges.splice(2 * low, 0, seq, seq);
  if (seenCount(seen) > window) {
    const dropped = ranges[0] ?? 0;
    if (dropped === ranges[1]) ranges.splice(0, 2);
    else ranges[0] = dropped + 1;
    seen.floor = dropped + 1;
  }
  return "new";
}

export function seenCount(seen: SeenSeqs): number {
  let count = 0;
  for (let index = 0; index < seen.ranges.length; index += 2)
    count += (seen.ranges[index + 1] ?? 0) - (seen.ranges[index] ?? 0) + 1;
  return count;
}

/** Ranges of an ascending list of distinct seqs (how changelog values before the ranges held them). */
export function rangesOfSeqs(seqs: readonly number[]): number[] {
  const ranges: number[] = [];
  for (const seq of seqs) {
    if (ranges.length > 0 && ranges[ranges.length - 1] === seq - 1) ranges[ranges.length - 1] = seq;
    else ranges.push(seq, seq);
  }
  return ranges;
}

/** True for ranges as admitSeq keeps them: pairs, first ≤ last, a gap of at least one seq between ranges. */
export function wellFormedRanges(ranges: readonly number[]): boolean {
  if (ranges.length % 2 !== 0) return false;
  for (let index = 0; index < ranges.length; index += 2) {
    const first = ranges[index] ?? 0;
    const last = ranges[index + 1] ?? 0;
    if (!Number.isInteger(first) || !Number.isInteger(last) || first > last) return false;
    if (index > 0 && first <= (ranges[index - 1] ?? 0) + 1) return false;
  }
  return true;
}
