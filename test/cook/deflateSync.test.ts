/**
 * The cook compresses small inputs with zlib's synchronous API (and in worker threads); the
 * bytes must be exactly what the asynchronous thread-pool path gives, or a cache or pak built
 * before the change would differ from one built after it.
 */
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { initHash } from '../../src/util/hash.js';
import { BLOCK_SIZE, compressBlocks, deflateEachBlock, windowBitsFor } from '../../src/format/deflateBlocks.js';
import { buildPackage } from '../../src/format/packageBuilder.js';
import { bytesDiff, mixedBytes, noiseBytes } from '../pak/helpers.js';

beforeAll(initHash);

const deflateRawAsync = promisify(zlib.deflateRaw);

describe('single-block DEFLATE', () => {
  it('gives the same bytes as async zlib at every level, for sizes up to one block', async () => {
    const inputs = [
      new Uint8Array(1),
      mixedBytes(100, 3),
      mixedBytes(16_383, 4),
      mixedBytes(16_385, 5),
      mixedBytes(40_000, 6),
      mixedBytes(BLOCK_SIZE, 7),
      noiseBytes(5_000, 8),
      buildPackage({ imports: [], exports: [{ guid: '1'.repeat(32), name: 'A', className: '/Script/Engine.CStaticMesh' }] }),
    ];
    for (const level of [1, 6, 9]) {
      for (const raw of inputs) {
        const [sync] = await deflateEachBlock(raw, { level });
        const ref = await deflateRawAsync(raw, { level });
        expect(bytesDiff(sync, ref), `level ${level}, ${raw.byteLength} bytes`).toBe('same');
      }
    }
  });

  it('fits the window to small blocks without changing a byte: every level, at each window size boundary', async () => {
    // windowBitsFor picks 2^bits - 262 >= size; the sizes either side of each boundary, in
    // repetitive, mixed and random content, must give the default (32 KiB) window's bytes.
    const sizes = [1, 2, 100];
    for (let bits = 9; bits <= 15; bits++) sizes.push((1 << bits) - 263, (1 << bits) - 262, (1 << bits) - 261);
    sizes.push(40_000, BLOCK_SIZE - 1, BLOCK_SIZE);
    let seed = 20;
    for (const size of sizes) {
      const repetitive = new Uint8Array(size).map((_, i) => (i % 97) ^ (i >> 9));
      for (const raw of [repetitive, mixedBytes(size, seed++), noiseBytes(size, seed++)]) {
        expect(windowBitsFor(raw.byteLength, 6)).toBeLessThanOrEqual(15);
        for (const level of [1, 2, 3, 4, 5, 6, 7, 8, 9]) {
          const [ours] = await deflateEachBlock(raw, { level });
          const ref = zlib.deflateRawSync(raw, { level, windowBits: 15 });
          expect(bytesDiff(ours, ref), `level ${level}, ${raw.byteLength} bytes, window bits ${windowBitsFor(raw.byteLength, level)}`).toBe('same');
        }
      }
    }
    expect(windowBitsFor(250, 6)).toBe(9);
    expect(windowBitsFor(251, 6)).toBe(10);
    expect(windowBitsFor(BLOCK_SIZE, 6)).toBe(15);
    expect(windowBitsFor(10, 0)).toBe(15);
  });

  it('leaves multi-block inputs on the async path with the same per-block bytes', async () => {
    const raw = mixedBytes(2 * BLOCK_SIZE + 17, 9);
    const c = await compressBlocks(raw, { level: 6 });
    expect(c.method).toBe(1);
    for (let i = 0; i < c.blocks.length; i++) {
      const ref = await deflateRawAsync(raw.subarray(i * BLOCK_SIZE, Math.min(raw.byteLength, (i + 1) * BLOCK_SIZE)), { level: 6 });
      expect(bytesDiff(c.blocks[i], ref)).toBe('same');
    }
  });
});
