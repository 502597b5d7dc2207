/**
 * A seeded pseudo-random generator (mulberry32): the workload's only source of randomness, so a
 * seed and a size always give the same bytes. No Math.random, no wall clock.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("pick from an empty list");
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Picks by relative weight; weights need not sum to 1. */
  weighted<T>(entries: readonly (readonly [T, number])[]): T {
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    let target = this.next() * total;
    for (const [value, weight] of entries) {
      target -= weight;
      if (target < 0) return value;
    }
    const last = entries[entries.length - 1];
    if (last === undefined) throw new RangeError("weighted pick from an empty list");
    return last[0];
  }

  /** A right-skewed positive value around `median` (log-normal-ish; spread ~ factor per sigma). */
  skewed(median: number, spread: number): number {
    // Sum of three uniforms approximates a normal with mean 1.5 and sd 0.5.
    const z = (this.next() + this.next() + this.next() - 1.5) / 0.5;
    return median * Math.pow(spread, z);
  }

  /** `count` hex digits. */
  hex(count: number): string {
    let text = "";
    while (text.length < count)
      text += Math.floor(this.next() * 0x1_0000_0000)
        .toString(16)
        .padStart(8, "0");
    return text.slice(0, count);
  }
}

/** Mixes a seed with stream numbers (murmur3 finaliser) so each batch has its own independent stream. */
export function deriveSeed(seed: number, ...parts: readonly number[]): number {
  let h = seed >>> 0;
  for (const part of [...parts, parts.length]) {
    h = Math.imul(h ^ (part >>> 0), 0x9e3779b1) >>> 0;
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h ^= h >>> 16;
  }
  return h >>> 0;
}
