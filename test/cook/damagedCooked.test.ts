/**
 * A cooked file damaged in place after its cook, with its size and mtime kept, passes the cook
 * cache's checks. The pak writer checks every cooked file against the hash its cook recorded (and
 * the previous pak's copy of its blocks the same way), so the next cook re-cooks that asset instead
 * of copying the damage into a pak that then fails `pak verify`.
 */
import { execFileSync } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookProject } from '../../cook/cookProject.js';
import { decodeCooked } from '../../src/format/cookedPackage.js';
import { initHash } from '../../src/util/hash.js';
import { PakReader } from '../../pak/PakReader.js';
import { tempDir } from './helpers.js';
import { copySampleProject } from '../helpers/sampleProject.js';

let dir: string;
beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-damaged-');
  await copySampleProject(dir);
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('a cooked file damaged in place', () => {
  it('is re-cooked, not shipped: the next pak verifies and holds the right bytes', async () => {
    const first = await cookProject({ projectDir: dir });
    expect(first.ok).toBe(true);
    const cooked = path.join(dir, 'Saved/Cooked/Game/Meshes/Rock.lasset');
    const good = await fsp.readFile(cooked);
    const goodRaw = await decodeCooked(good, cooked);

    // Flip bytes near the end of the block data; keep the size and the mtime to the nanosecond
    // (touch -r; fs.utimes rounds), which is all the cook cache looks at.
    const st = await fsp.stat(cooked, { bigint: true });
    const stamp = path.join(dir, 'stamp');
    execFileSync('touch', ['-r', cooked, stamp]);
    const bad = Buffer.from(good);
    for (let i = bad.byteLength - 40; i < bad.byteLength - 20; i++) bad[i] ^= 0x5a;
    await fsp.writeFile(cooked, bad);
    execFileSync('touch', ['-r', stamp, cooked]);
    expect((await fsp.stat(cooked, { bigint: true })).mtimeNs).toBe(st.mtimeNs);

    // The previous Main.pak's copy of the same blocks is damaged too, so no good copy is left.
    const old = await PakReader.open(path.join(dir, 'Saved/Paks/Main.pak'));
    const entry = old.getEntry('/Game/Meshes/Rock.lasset')!;
    await old.close();
    const fh = await fsp.open(path.join(dir, 'Saved/Paks/Main.pak'), 'r+');
    const flip = Buffer.alloc(8);
    await fh.read(flip, 0, 8, entry.offset + entry.storedSize - 30);
    for (let i = 0; i < 8; i++) flip[i] ^= 0x5a;
    await fh.write(flip, 0, 8, entry.offset + entry.storedSize - 30);
    await fh.close();

    // Another asset of the Main chunk changes, so Main.pak is written again.
    const rml = path.join(dir, 'Content/UI/MainMenu.rml');
    await fsp.appendFile(rml, '\n<!-- edited -->\n');

    const second = await cookProject({ projectDir: dir });
    expect(second.ok).toBe(true);
    expect(second.problems).toContainEqual(
      expect.objectContaining({ code: 'COOKED_INVALID', severity: 'warning', file: cooked, message: 'the cooked file no longer matches its hash: cooking the asset again' }),
    );
    const main = second.paks.find((p) => p.chunk === 'Main')!;
    expect(main.written).toBe(true);
    const pak = await PakReader.open(main.file);
    try {
      await pak.verify();
      expect(Buffer.from(await pak.readEntry('/Game/Meshes/Rock.lasset')).equals(Buffer.from(goodRaw))).toBe(true);
    } finally {
      await pak.close();
    }
    // The cooked file itself was repaired, and a third cook finds nothing to do for it.
    expect((await fsp.readFile(cooked)).equals(good)).toBe(true);
    const third = await cookProject({ projectDir: dir });
    expect(third).toMatchObject({ ok: true, cooked: 0 });
    expect(third.problems.filter((p) => p.code === 'COOKED_INVALID')).toEqual([]);
  });
});
