import { beforeAll, describe, expect, it } from 'vitest';
import { initHash, xxh64 } from '../../src/util/hash.js';
import { BLOCK_SIZE, compressBlocks, decompressBlock, inflateBlocks } from '../../src/format/deflateBlocks.js';
import { COOKED_FIXED_HEADER, decodeCooked, encodeCooked, parseCookedHeader } from '../../src/format/cookedPackage.js';
import { errors } from '../../src/errors.js';
import { bytesDiff, caught, mixedBytes, noiseBytes } from './helpers.js';

beforeAll(initHash);

const fail = (field: string, why: string, offset?: number) => errors.cookedInvalid('x.lasset', field, why, offset);

describe('deflateBlocks', () => {
  it('cuts into 64 KiB blocks that inflate back, with both engines giving raw DEFLATE', async () => {
    const raw = mixedBytes(3 * BLOCK_SIZE + 123);
    for (const engine of ['zlib', 'fflate'] as const) {
      const c = await compressBlocks(raw, { engine });
      expect(c.method).toBe(1);
      expect(c.blocks.length).toBe(4);
      expect(bytesDiff(inflateBlocks(c.method, c.blocks, raw.byteLength, fail), raw)).toBe('same');
    }
  });

  it('stores data DEFLATE cannot shrink, and an empty input as zero blocks', async () => {
    const noise = noiseBytes(BLOCK_SIZE + 10);
    const c = await compressBlocks(noise);
    expect(c.method).toBe(0);
    expect(c.blocks.map((b) => b.byteLength)).toEqual([BLOCK_SIZE, 10]);
    expect(await compressBlocks(new Uint8Array(0))).toEqual({ method: 0, blocks: [] });
  });

  it('rejects a block that inflates to the wrong size or is not DEFLATE', async () => {
    const c = await compressBlocks(mixedBytes(BLOCK_SIZE));
    expect(() => decompressBlock(c.blocks[0], 1000, fail, 'block[0]', 99)).toThrow(
      expect.objectContaining({ code: 'COOKED_INVALID', message: 'block[0]: inflates to more than 1000 bytes', offset: 99 }),
    );
    expect(() => decompressBlock(c.blocks[0], BLOCK_SIZE - 1, fail)).toThrow(
      expect.objectContaining({ message: `block: inflates to ${BLOCK_SIZE} bytes, expected ${BLOCK_SIZE - 1}` }),
    );
    expect(() => decompressBlock(c.blocks[0], BLOCK_SIZE + 5, fail)).toThrow(
      expect.objectContaining({ message: `block: inflates to ${BLOCK_SIZE} bytes, expected ${BLOCK_SIZE + 5}` }),
    );
    expect(() => decompressBlock(new Uint8Array([0xff, 0xff, 0xff]), 10, fail)).toThrow(expect.objectContaining({ code: 'COOKED_INVALID' }));
  });
});

describe('cooked package container', () => {
  it('round-trips compressible, incompressible and empty payloads', async () => {
    for (const raw of [mixedBytes(200_000), noiseBytes(70_000), new Uint8Array(0)]) {
      const lckd = await encodeCooked(raw);
      const h = parseCookedHeader(lckd, 'x.lasset');
      expect(h.rawSize).toBe(raw.byteLength);
      expect(h.xxh64).toBe(xxh64(raw));
      expect(h.blockCount).toBe(Math.ceil(raw.byteLength / BLOCK_SIZE));
      expect(h.dataOffset).toBe(COOKED_FIXED_HEADER + 4 * h.blockCount);
      expect(bytesDiff(await decodeCooked(lckd, 'x.lasset'), raw)).toBe('same');
    }
  });

  it('is deterministic', async () => {
    const raw = mixedBytes(150_000, 3);
    expect(bytesDiff(await encodeCooked(raw), await encodeCooked(raw))).toBe('same');
  });

  it('rejects hostile headers naming field and offset', async () => {
    const good = await encodeCooked(mixedBytes(100_000));
    const bad = (mutate: (b: Uint8Array, v: DataView) => void): Uint8Array => {
      const b = good.slice();
      mutate(b, new DataView(b.buffer));
      return b;
    };
    expect(await caught(() => parseCookedHeader(bad((b) => (b[0] = 0)), 'x'))).toMatchObject({ code: 'COOKED_INVALID', field: 'magic', offset: 0 });
    expect(await caught(() => parseCookedHeader(bad((_, v) => v.setUint32(4, 2, true)), 'x'))).toMatchObject({
      message: 'version: version 2 is not supported (this reads 1)',
    });
    expect(await caught(() => parseCookedHeader(bad((_, v) => v.setUint32(29, 3, true)), 'x'))).toMatchObject({
      message: 'blockCount: 3 blocks, but rawSize 100000 needs 2',
      offset: 29,
    });
    expect(await caught(() => parseCookedHeader(bad((_, v) => v.setUint32(33, v.getUint32(33, true) + 1, true)), 'x'))).toMatchObject({
      field: 'blockSizes',
    });
    expect(await caught(() => parseCookedHeader(good.subarray(0, 20), 'x'))).toMatchObject({
      message: 'header: needs 33 bytes at offset 0 but the file ends at 20',
    });
    expect(await caught(() => parseCookedHeader(good.subarray(0, good.byteLength - 1), 'x'))).toMatchObject({ field: 'blockSizes' });
    expect(await caught(() => decodeCooked(bad((b) => (b[b.byteLength - 1] ^= 0xff)), 'x'))).toMatchObject({ code: 'COOKED_INVALID' });
    expect(await caught(() => decodeCooked(bad((b) => (b[16] ^= 1)), 'x'))).toMatchObject({ field: 'xxh64', offset: 16 });
  });
});
