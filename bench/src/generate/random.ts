/** A small seeded pseudo-random generator, so that a seed always yields the same store. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    // sfc32 seeded through splitmix32 so that nearby seeds give unrelated streams.
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.uint32();
  }

  /** A uniform 32-bit unsigned integer. */
  uint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** A uniform float in [0, 1). */
  next(): number {
    return this.uint32() / 4294967296;
  }

  /** A uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** A standard normal deviate (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** A log-normal deviate with the given median and log-space standard deviation. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** An index in [0, n) drawn with Zipf-like weights (rank r has weight 1/(r+1)^s). */
  zipfIndex(n: number, s = 1.1): number {
    // Inverse-CDF on the continuous approximation: cheap and good enough for "a few hot projects".
    const u = this.next();
    if (s === 1) return Math.min(n - 1, Math.floor(Math.pow(n + 1, u)) - 1);
    const h = (x: number): number => (Math.pow(x, 1 - s) - 1) / (1 - s);
    const x = Math.pow(1 + u * h(n + 1) * (1 - s), 1 / (1 - s));
    return Math.min(n - 1, Math.max(0, Math.floor(x) - 1));
  }

  /** A version-4 UUID built from this generator (deterministic, unlike randomUUID). */
  uuid(): string {
    const hex = (n: number): string => n.toString(16).padStart(8, '0');
    const w = hex(this.uint32()) + hex(this.uint32()) + hex(this.uint32()) + hex(this.uint32());
    const variant = '89ab'[this.uint32() & 3];
    return `${w.slice(0, 8)}-${w.slice(8, 12)}-4${w.slice(13, 16)}-${variant}${w.slice(17, 20)}-${w.slice(20, 32)}`;
  }
}
