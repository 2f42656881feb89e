/** The cook cache's record arena grows by doubling while small and by an eighth once large. */
import { describe, expect, it } from 'vitest';
import { Arena } from '../../cook/cookCacheCodec.js';

describe('cook cache arena', () => {
  it('doubles while small and keeps what it held', () => {
    const a = new Arena();
    a.buf.fill(7, 0, 100);
    a.used = 100;
    a.reserve(70_000);
    expect(a.buf.byteLength).toBe(1 << 17);
    expect([...a.buf.subarray(0, 100)].every((b) => b === 7)).toBe(true);
  });

  it('a full 32 MiB arena asked for one more record grows to 36 MiB, not 64 (a replayed journal line at a million entries)', () => {
    const full = Buffer.alloc(32 << 20, 3);
    const a = new Arena(full, full.byteLength);
    a.reserve(200);
    expect(a.buf.byteLength).toBe(36 << 20);
    expect(a.buf[(32 << 20) - 1]).toBe(3);
    // Several steps when one is not enough.
    const b = new Arena(Buffer.alloc(32 << 20), 32 << 20);
    b.reserve(10 << 20);
    expect(b.buf.byteLength).toBeGreaterThanOrEqual(42 << 20);
    expect(b.buf.byteLength).toBeLessThan(48 << 20);
  });
});
