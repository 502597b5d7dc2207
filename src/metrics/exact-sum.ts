/**
 * An exact integer sum that can go past 2^53 − 1 (contract revision 2 §1: "sums are exact
 * integers; a sum that would pass 2^53 − 1 is never rounded or published as infinite"). It stays a
 * plain number while every partial sum is a safe integer (the hot path: one addition and one
 * check) and switches to a bigint only while it is out of that range, so adding a contribution and
 * subtracting it again always restores the previous value exactly, whatever the order.
 */
export class ExactSum {
  private small = 0;
  private big: bigint | undefined;

  add(delta: number | bigint, sign: 1 | -1 = 1): void {
    if (this.big === undefined && typeof delta === "number") {
      const next = this.small + sign * delta;
      if (Number.isSafeInteger(next)) {
        this.small = next;
        return;
      }
    }
    const total = (this.big ?? BigInt(this.small)) + BigInt(sign) * BigInt(delta);
    if (total >= MIN_SAFE && total <= MAX_SAFE) {
      this.small = Number(total);
      this.big = undefined;
    } else {
      this.big = total;
    }
  }

  /** The sum exactly: a number while safe, a bigint past ±(2^53 − 1). */
  get exact(): number | bigint {
    return this.big ?? this.small;
  }

  /** A sum holding `value` (what `exact` gave). */
  static of(value: number | bigint): ExactSum {
    const sum = new ExactSum();
    sum.add(value);
    return sum;
  }

  /** The sum, or undefined when it is past ±(2^53 − 1) and a number could not hold it exactly. */
  get safe(): number | undefined {
    return this.big === undefined ? this.small : undefined;
  }

  get isZero(): boolean {
    return this.big === undefined && this.small === 0;
  }
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

/** a + b exactly: a number while safe, a bigint past 2^53 − 1 (per-unit money of many costs). */
export function addExact(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === "number" && typeof b === "number") {
    const sum = a + b;
    if (Number.isSafeInteger(sum)) return sum;
  }
  const total = BigInt(a) + BigInt(b);
  return total <= MAX_SAFE ? Number(total) : total;
}

/** The na_reason of a result whose exact sum does not fit a JSON number without rounding. */
export const SUM_PAST_SAFE_INTEGER =
  "N/A when the exact sum exceeds 2^53 − 1 (9007199254740991): it is never rounded or published as infinite";
