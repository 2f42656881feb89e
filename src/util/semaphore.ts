/**
 * A weighted counting semaphore, first come first served: a large request is not starved by a
 * stream of small ones. Used for the CPU slots child processes share (src/util/runChild.ts) and
 * for the memory decoded textures may hold at once (cook/texture).
 */
export class Semaphore {
  private used = 0;
  private readonly waiting: Array<{ n: number; go: () => void }> = [];

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`Semaphore capacity must be a whole number >= 1, not ${capacity}`);
  }

  /** Units held now. */
  get inUse(): number {
    return this.used;
  }

  /** Requests waiting now. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Wait for `n` units. A request above the capacity waits for the whole capacity (callers that
   * must refuse such requests check {@link capacity} first). Returns the units taken, for release.
   */
  async acquire(n: number): Promise<number> {
    const want = Math.min(this.capacity, Math.max(1, Math.ceil(n)));
    if (this.waiting.length === 0 && this.used + want <= this.capacity) {
      this.used += want;
      return want;
    }
    await new Promise<void>((go) => this.waiting.push({ n: want, go }));
    return want;
  }

  release(n: number): void {
    this.used -= n;
    while (this.waiting.length && this.used + this.waiting[0].n <= this.capacity) {
      const next = this.waiting.shift()!;
      this.used += next.n;
      next.go();
    }
  }

  /** Run `fn` holding `n` units. */
  async with<T>(n: number, fn: () => Promise<T>): Promise<T> {
    const held = await this.acquire(n);
    try {
      return await fn();
    } finally {
      this.release(held);
    }
  }
}
