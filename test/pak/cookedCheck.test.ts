/**
 * The pak writer checks every block of a cooked (LCKD) source against the entry's xxh64 before
 * the entry is kept, for small files (read whole, ahead) and big ones (streamed in chunks): a
 * damaged block fails the pak with COOKED_INVALID naming the cooked file, and no pak is written.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCooked } from '../../src/format/cookedPackage.js';
import { initHash } from '../../src/util/hash.js';
import { writePak } from '../../pak/writePak.js';
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
