/**
 * The pak writer checks every block of a cooked (LCKD) source against the entry's xxh64 before
 * the entry is kept, for small files (read whole, ahead) and big ones (streamed in chunks): a
 * damaged block fails the pak with COOKED_INVALID naming the cooked file, and no pak is written.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCooked } from '../../src/format/cookedPackage.js';
import { initHash, xxh64 } from '../../src/util/hash.js';
import { writePak, type PakSource } from '../../pak/writePak.js';
import { PakReader } from '../../pak/PakReader.js';
import { caught, mixedBytes, noiseBytes, tempDir } from './helpers.js';

let dir: string;
beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-cookedcheck-');
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** Write an LCKD of `raw`, then flip one byte `back` bytes before its end. */
async function damaged(name: string, raw: Uint8Array, back: number): Promise<{ file: string; good: Buffer }> {
  const file = path.join(dir, name);
  const good = Buffer.from(await encodeCooked(raw));
  const bad = Buffer.from(good);
  bad[bad.byteLength - back] ^= 0x01;
  await fsp.writeFile(file, bad);
  return { file, good };
}

describe('writePak checks cooked blocks', () => {
  const cases = [
    { name: 'small DEFLATE', raw: () => mixedBytes(300_000, 3), method: 1 },
    { name: 'small stored', raw: () => noiseBytes(200_000, 4), method: 0 },
    { name: 'big DEFLATE, streamed', raw: () => mixedBytes(24 << 20, 5), method: 1 },
    { name: 'big stored, streamed', raw: () => noiseBytes(9 << 20, 6), method: 0 },
  ];
  for (const c of cases) {
    it(`refuses a damaged ${c.name} file and writes no pak`, async () => {
      const raw = c.raw();
      const { file, good } = await damaged(`${c.name.replace(/\W/g, '_')}.lasset`, raw, 100);
      expect(good[24]).toBe(c.method);
      const out = path.join(dir, `${c.name.replace(/\W/g, '_')}.pak`);
      const e = await caught(() => writePak(out, [{ path: '/Game/A.lasset', kind: 'cooked', file }]));
      expect(e).toMatchObject({ code: 'COOKED_INVALID', file });
      expect(e.message).toMatch(/^(block\[\d+\]: (is not valid DEFLATE|inflates to)|xxh64: raw bytes hash to [0-9a-f]{16}, header says [0-9a-f]{16}: the cooked file changed after it was cooked)/);
      await expect(fsp.stat(out)).rejects.toMatchObject({ code: 'ENOENT' });

      // The undamaged file packs, and the pak verifies.
      await fsp.writeFile(file, good);
      await writePak(out, [{ path: '/Game/A.lasset', kind: 'cooked', file }]);
      const pak = await PakReader.open(out);
      try {
        expect((await pak.verify()).rawBytes).toBe(raw.byteLength);
      } finally {
        await pak.close();
      }
    }, 120_000);
  }
});

/**
 * A source with the size its cook recorded is read without a stat: one byte more than that size is
 * asked for, so a file that grew after its cook fails like one that shrank, and is never shipped
 * cut to its old size (its first bytes would still hash to the recorded file hash).
 */
describe('writePak reads a cooked file at its recorded size', () => {
  it('refuses a file that grew or shrank since its cook, with or without its hash, and writes no pak', async () => {
    const good = Buffer.from(await encodeCooked(mixedBytes(50_000, 11)));
    const cookedXxh64 = xxh64(good);
    const file = path.join(dir, 'Sized.lasset');
    const out = path.join(dir, 'Sized.pak');
    for (const [why, bytes] of [
      ['grew', Buffer.concat([good, Buffer.from('tail')])],
      ['shrank', good.subarray(0, good.byteLength - 1)],
    ] as const) {
      await fsp.writeFile(file, bytes);
      for (const hash of [{ cookedXxh64 }, {}]) {
        const e = await caught(() => writePak(out, [{ path: '/Game/A.lasset', kind: 'cooked', file, size: good.byteLength, ...hash }]));
        expect(e, `${why}, hash ${'cookedXxh64' in hash}`).toMatchObject({ code: 'COOKED_INVALID', file, field: 'size' });
        expect(e.message).toMatch(why === 'grew' ? /the file is more than \d+ bytes, its cook wrote \d+/ : /the file is \d+ bytes, its cook wrote \d+/);
        await expect(fsp.stat(out)).rejects.toMatchObject({ code: 'ENOENT' });
      }
    }
    // At its size the file packs, to the same pak as without the size (statted).
    await fsp.writeFile(file, good);
    await writePak(out, [{ path: '/Game/A.lasset', kind: 'cooked', file, size: good.byteLength, cookedXxh64 }]);
    const sized = await fsp.readFile(out);
    await writePak(out, [{ path: '/Game/A.lasset', kind: 'cooked', file }]);
    expect(sized.equals(await fsp.readFile(out))).toBe(true);
  });

  it('packs many files through its reused read buffers with every entry intact', async () => {
    // Small and large cooked files (some over the 1 MiB stage, so written by reference) and text
    // files, interleaved: a buffer given back while its bytes were still queued would show here.
    const sub = path.join(dir, 'many');
    await fsp.mkdir(sub, { recursive: true });
    const sizes = [300, 2_000_000, 700, 65_536, 1_048_000, 40, 3_000_000, 900, 1_048_576, 5];
    const sources: PakSource[] = [];
    const raws = new Map<string, Uint8Array>();
    for (let k = 0; k < 60; k++) {
      const n = sizes[k % sizes.length] + k;
      const raw = k % 3 === 0 ? noiseBytes(n, 100 + k) : mixedBytes(n, 100 + k);
      const name = `F${String(k).padStart(2, '0')}`;
      if (k % 4 === 3) {
        const file = path.join(sub, `${name}.txt`);
        await fsp.writeFile(file, raw);
        sources.push({ path: `/Game/${name}.txt`, kind: 'file', file });
      } else {
        const file = path.join(sub, `${name}.lasset`);
        const bytes = await encodeCooked(raw);
        await fsp.writeFile(file, bytes);
        sources.push({ path: `/Game/${name}.lasset`, kind: 'cooked', file, size: bytes.byteLength, cookedXxh64: xxh64(bytes) });
      }
      raws.set(sources[k].path, raw);
    }
    const out = path.join(dir, 'Many.pak');
    await writePak(out, sources);
    const pak = await PakReader.open(out);
    try {
      await pak.verify();
      for (const [p, raw] of raws) expect(Buffer.from(await pak.readEntry(p)).equals(raw), p).toBe(true);
    } finally {
      await pak.close();
    }
  }, 120_000);
});
