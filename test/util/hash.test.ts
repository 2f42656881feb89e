import xxhash from 'xxhash-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createXxh64, hex8, initHash, xxh64 } from '../../src/util/hash.js';

describe('xxh64 of large inputs', () => {
  beforeAll(initHash);

  it('hashing 64 MiB does not leave the hasher holding 64 MiB (its wasm memory never shrinks)', () => {
    const big = Buffer.alloc(64 << 20, 0x5a);
    const before = process.memoryUsage().external;
    xxh64(big);
    const h = createXxh64();
    h.update(big);
    h.digest();
    expect((process.memoryUsage().external - before) / 2 ** 20).toBeLessThan(8);
  });

  it('gives the one-shot digest across the piece boundaries, whole and streamed in odd pieces', async () => {
    const reference = await xxhash();
    const piece = 1 << 20;
    for (const n of [0, 1, piece - 1, piece, piece + 1, 3 * piece + 5]) {
      const bytes = Buffer.alloc(n);
      for (let i = 0; i < n; i++) bytes[i] = (i * 2654435761) >>> 24;
      const want = reference.h64Raw(bytes, 0n);
      expect(xxh64(bytes), `${n} bytes`).toBe(want);
      const h = createXxh64();
      for (let at = 0; at < n; at += 777_777) h.update(bytes.subarray(at, at + 777_777));
      expect(h.digest(), `${n} bytes streamed`).toBe(want);
    }
  });
});

describe('hex8', () => {
  it('is toString(16) padded to 8 digits for every byte in every position and random u32s', () => {
    const want = (n: number) => n.toString(16).padStart(8, '0');
    const values = [0, 1, 0xf, 0x10, 0xff, 0x100, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];
    for (let b = 0; b < 256; b++) for (let shift = 0; shift < 32; shift += 8) values.push((b << shift) >>> 0);
    let x = 0x9e3779b9;
    for (let i = 0; i < 10_000; i++) values.push((x = (Math.imul(x, 1664525) + 1013904223) >>> 0));
    for (const n of values) expect(hex8(n), String(n)).toBe(want(n));
  });
});
