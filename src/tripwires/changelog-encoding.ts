/** Packing of the changelog value: hashes interned into a table, seq lists as differences, flags as digits. */

/**
 * Interns the hashes of one value being written. The keys are already uniformly distributed
 * 53-bit hashes, so their low bits index an open-addressed table directly: several times faster
 * than a Map, which hashes each double again. The slots are module-level scratch, reset after
 * every use (serializeRunState is synchronous, so one value is written at a time).
 */
const SLOT_BITS = 11; // 2,048 slots: well above the most hashes a run state can hold (~500 with the default bounds)
const SLOT_MASK = (1 << SLOT_BITS) - 1;
const slotValues = new Float64Array(1 << SLOT_BITS);
const slotIndexes = new Int32Array(1 << SLOT_BITS).fill(-1);

export class HashTable {
  readonly values: number[] = [];
  private readonly usedSlots: number[] = [];

  ref(value: number): number {
    let slot = (value >>> 0) & SLOT_MASK;
    for (;;) {
      const index = slotIndexes[slot] ?? -1;
      if (index === -1) break;
      if (slotValues[slot] === value) return index;
      slot = (slot + 1) & SLOT_MASK;
    }
    // A table that fills up (only with bounds far above the defaults) degrades to a linear scan.
    if (this.usedSlots.length >= SLOT_MASK) {
      const known = this.values.indexOf(value);
      if (known !== -1) return known;
      this.values.push(value);
      return this.values.length - 1;
    }
    const index = this.values.length;
    this.values.push(value);
    slotValues[slot] = value;
    slotIndexes[slot] = index;
    this.usedSlots.push(slot);
    return index;
  }

  refs(values: readonly number[]): number[] {
    const out = new Array<number>(values.length);
    for (let index = 0; index < values.length; index++) out[index] = this.ref(values[index] ?? 0);
    return out;
  }

  /** Frees the shared slots for the next value. */
  release(): void {
    for (const slot of this.usedSlots) slotIndexes[slot] = -1;
    this.usedSlots.length = 0;
  }
}

export function differences(values: readonly number[]): number[] {
  const out = new Array<number>(values.length);
  let previous = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index] ?? 0;
    out[index] = value - previous;
    previous = value;
  }
  return out;
}

export function undoDifferences(values: readonly number[]): number[] {
  const out = new Array<number>(values.length);
  let previous = 0;
  for (let index = 0; index < values.length; index++) {
    previous += values[index] ?? 0;
    out[index] = previous;
  }
  return out;
}

const DIGITS = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
const digit = (value: number): string => DIGITS[value] ?? String(value);

/** Small non-negative integers (flags, 0–9) as a digit string. */
export function digits(values: readonly number[]): string {
  let text = "";
  for (const value of values) text += digit(value);
  return text;
}

export function undoDigits(text: string): number[] {
  const out = new Array<number>(text.length);
  for (let index = 0; index < text.length; index++) out[index] = text.charCodeAt(index) - 48;
  return out;
}

/** Two parallel 0/1 lists as one digit string: first + 2 × second. */
export function pairDigits(first: readonly number[], second: readonly number[]): string {
  let text = "";
  for (let index = 0; index < first.length; index++) text += digit((first[index] ?? 0) + 2 * (second[index] ?? 0));
  return text;
}
