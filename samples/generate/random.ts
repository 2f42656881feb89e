/**
 * A small seeded PRNG (splitmix32) so a seed alone decides every byte the generator writes.
 * Math.random is never used: the same seed must give the same project on every machine.
 */

/** Deterministic random source. Not for cryptography. */
export class Random {
  private state: number;

  constructor(seed: number) {
    // Mix the seed once so nearby seeds (1, 2, 3) do not start on nearby states.
    this.state = (seed ^ 0x9e3779b9) >>> 0;
    this.nextU32();
  }

  /** A uniform unsigned 32-bit integer (splitmix32). */
  nextU32(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  }

  /** A uniform float in [0, 1). */
  next(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  /** A uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A uniform element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /**
   * An index in [0, n) where low indices are far more likely: log-uniform, which is Zipf with
   * exponent 1 in the continuous limit. This is the "a few textures are used everywhere" shape.
   */
  zipf(n: number): number {
    const i = Math.floor(Math.exp(this.next() * Math.log(n + 1))) - 1;
    return Math.min(Math.max(i, 0), n - 1);
  }

  /** 32 lowercase hex digits, never all zero (all zero is the null GUID). */
  guid(): string {
    let s = '';
    for (let i = 0; i < 4; i++) s += this.nextU32().toString(16).padStart(8, '0');
    return s === '0'.repeat(32) ? this.guid() : s;
  }

  /** A child stream: lets one part of the generator change without shifting every later byte. */
  fork(salt: number): Random {
    return new Random((this.nextU32() ^ Math.imul(salt, 0x27d4eb2d)) >>> 0);
  }
}
