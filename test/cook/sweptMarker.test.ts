/**
 * A no-op cook skips the walk of Saved/Cooked for stale files, and the encode of
 * AssetRegistry.bin, only when nothing can have changed: the swept marker
 * (Intermediates/CookedOutputs.json) is removed by any write into Saved/Cooked, so what a writer
 * leaves there (a temp file of a killed run, an output of an asset that stopped shipping) is
 * still swept by the next cook.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { cookProject } from '../../cook/cookProject.js';
import { writeOutput } from '../../cook/cookAsset.js';
import { CACHE_FILE_NAME, CookCache } from '../../cook/cookCache.js';
import { SWEPT_MARKER_FILE } from '../../cook/cookedOutputs.js';
import { COST_TABLE_FILE } from '../../cook/remote/costTable.js';
import { decodeCookedRegistry } from '../../src/format/cookedRegistry.js';
import { hard, prop } from '../../src/format/packageBuilder.js';
import { TEMP_MARKER } from '../../src/util/atomicWrite.js';
import { initHash } from '../../src/util/hash.js';
import { g, tempDir, writeFixture, writeProject } from './helpers.js';

const mesh = (i: number) => ({ exports: [{ guid: g(0x100 + i), name: `Mesh${i}`, className: '/Script/Engine.CStaticMesh', properties: [prop.str('Label', `m${i}`)] }] });
const map = (n: number) => ({
  imports: Array.from({ length: n }, (_, i) => hard(g(0x100 + i))),
  exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.str('Label', 'main')] }],
});

let dir: string;
let marker: string;
let cooked: string;
beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-swept-');
  const files: Parameters<typeof writeProject>[2] = { 'Content/Maps/Main.lasset': map(4) };
  for (let i = 0; i < 4; i++) files[`Content/Meshes/Mesh${i}.lasset`] = mesh(i);
  await writeProject(dir, { name: 'Swept', cookRoots: ['/Game/Maps/Main'] }, files);
  marker = path.join(dir, 'Intermediates', SWEPT_MARKER_FILE);
  cooked = path.join(dir, 'Saved/Cooked');
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** A full cook of `projectDir` (default: the suite's project) that must succeed. */
const cook = async (projectDir = dir) => {
  const s = await cookProject({ projectDir, report: false });
  expect(s.ok).toBe(true);
  return s;
};

describe('the swept marker of Saved/Cooked', () => {
  it('is written by a cook that swept; a no-op keeps AssetRegistry.bin as it is', async () => {
    await cook();
    expect(fs.existsSync(marker)).toBe(true);
    const registry = path.join(cooked, 'AssetRegistry.bin');
    const before = await fsp.stat(registry, { bigint: true });
    const bytes = await fsp.readFile(registry);
    const markerBefore = await fsp.stat(marker, { bigint: true });
    const s = await cook();
    expect(s.cooked).toBe(0);
    expect((await fsp.stat(registry, { bigint: true })).mtimeNs).toBe(before.mtimeNs);
    expect((await fsp.readFile(registry)).equals(bytes)).toBe(true);
    // The marker says the same and nothing removed it: not written again (no fsync on a no-op).
    const markerAfter = await fsp.stat(marker, { bigint: true });
    expect([markerAfter.ino, markerAfter.mtimeNs]).toEqual([markerBefore.ino, markerBefore.mtimeNs]);
    // An output deleted by hand: its re-cook's write removes the marker, the same set ships with the
    // same registry, so the marker says the same as before and must be written again.
    await fsp.rm(path.join(cooked, 'Game/Meshes/Mesh0.lasset'));
    expect((await cook()).cooked).toBe(1);
    expect(fs.existsSync(marker)).toBe(true);
    // The walk was skipped: a file copied in by hand (no cook's write) is still there after a no-op.
    const byHand = path.join(cooked, 'Game/ByHand.txt');
    await fsp.writeFile(byHand, 'x');
    await cook();
    expect(fs.existsSync(byHand)).toBe(true);
  });

  it('opening the project removes the temp files a killed run left beside the paks, the caches and the report, not a live writer\'s', async () => {
    // Temps of a writer that is gone (pid 2^22 + 1 is above Linux's pid_max), and one of this live process.
    const gone = ['Saved/Paks/Main.pak', 'Intermediates/CookCache.bin', 'Saved/Reports/cook.html'].map((rel) => path.join(dir, `${rel}${TEMP_MARKER}4194305-0-0`));
    const live = path.join(dir, `Saved/Reports/cook.json${TEMP_MARKER}${process.pid}-0-0`);
    for (const f of [...gone, live]) {
      await fsp.mkdir(path.dirname(f), { recursive: true });
      await fsp.writeFile(f, 'half');
    }
    (await Cooker.open({ projectDir: dir })).close();
    expect(gone.filter((f) => fs.existsSync(f))).toEqual([]);
    expect(fs.existsSync(live)).toBe(true);
    await fsp.rm(live);
  });

  it('goes with the first write into Saved/Cooked, so the next cook sweeps what was left there', async () => {
    const stray = path.join(cooked, 'Game/Meshes/Stray.lasset');
    writeOutput(stray, new Uint8Array([1, 2, 3]));
    expect(fs.existsSync(marker)).toBe(false);
    // A temp file of a writer that is gone (pid 2^22 + 1 is above Linux's pid_max).
    const temp = path.join(cooked, `Game/Meshes/Mesh0.lasset${TEMP_MARKER}4194305-0-0`);
    await fsp.writeFile(temp, 'half');
    await cook();
    expect(fs.existsSync(stray)).toBe(false);
    expect(fs.existsSync(temp)).toBe(false);
    expect(fs.existsSync(path.join(cooked, 'Game/ByHand.txt'))).toBe(false);
    expect(fs.existsSync(marker)).toBe(true);
  });

  it('a cook that ships less sweeps the outputs that no longer ship, and a stale registry is never read back', async () => {
    await writeFixture(dir, 'Content/Maps/Main.lasset', map(3));
    const s = await cook();
    expect(s.assets).toBe(4);
    expect(fs.existsSync(path.join(cooked, 'Game/Meshes/Mesh3.lasset'))).toBe(false);
    const reg = decodeCookedRegistry(await fsp.readFile(path.join(cooked, 'AssetRegistry.bin')), 'AssetRegistry.bin');
    expect(reg.assets.map((a) => a.guid)).not.toContain(g(0x103));
    // AssetRegistry.bin replaced behind the cook's back (same inputs): not trusted, re-encoded.
    const file = path.join(cooked, 'AssetRegistry.bin');
    const good = await fsp.readFile(file);
    await fsp.writeFile(file, Buffer.alloc(good.byteLength));
    await cook();
    expect((await fsp.readFile(file)).equals(good)).toBe(true);
  });

  it('a package a cook worker writes removes the marker as well: a cook that then fails leaves none', async () => {
    await cook();
    expect(fs.existsSync(marker)).toBe(true);
    await writeFixture(dir, 'Content/Meshes/Mesh1.lasset', { exports: [{ guid: g(0x101), name: 'Mesh1', className: '/Script/Engine.CStaticMesh', properties: [prop.str('Label', 'edited')] }] });
    await fsp.writeFile(path.join(dir, 'Content/Meshes/Mesh2.lasset'), (await fsp.readFile(path.join(dir, 'Content/Meshes/Mesh2.lasset'))).subarray(0, 60));
    const s = await cookProject({ projectDir: dir, report: false });
    expect(s.ok).toBe(false);
    expect(s.cooked).toBe(1);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('an entry cooked outside the plan (a lone asset cook) is forgotten by the next full cook, which re-cooks one asset', async () => {
    // Fix what the test before broke, and cook clean: the marker is there.
    await writeFixture(dir, 'Content/Meshes/Mesh2.lasset', mesh(2));
    await cook();
    expect(fs.existsSync(marker)).toBe(true);
    const loose = g(0x1ff);
    await writeFixture(dir, 'Content/Unused/Loose.lasset', { exports: [{ guid: loose, name: 'Loose', className: '/Script/Engine.CStaticMesh' }] });
    const cooker = await Cooker.open({ projectDir: dir });
    try {
      expect((await cooker.cookAsset(cooker.registry.get(loose)!)).status).toBe('cooked');
    } finally {
      cooker.close();
    }
    const cacheHas = async (guid: string) => {
      const { cache } = await CookCache.load(path.join(dir, 'Intermediates', CACHE_FILE_NAME), cooked);
      cache.close();
      return cache.peek(guid) !== undefined;
    };
    expect(await cacheHas(loose)).toBe(true);
    // The same assets ship as at the last sweep, one of them re-cooked: the entry outside them still goes.
    await writeFixture(dir, 'Content/Meshes/Mesh0.lasset', { exports: [{ guid: g(0x100), name: 'Mesh0', className: '/Script/Engine.CStaticMesh', properties: [prop.str('Label', 'again')] }] });
    const s = await cook();
    expect(s.cooked).toBe(1);
    // Its write removed the marker, and the same set ships: the marker is written again as it was.
    expect(fs.existsSync(marker)).toBe(true);
    expect(await cacheHas(loose)).toBe(false);
    expect(fs.existsSync(path.join(cooked, 'Game/Unused/Loose.lasset'))).toBe(false);
    await fsp.rm(path.join(dir, 'Content/Unused'), { recursive: true });
  });
});

describe('a cook that changed nothing under Saved/Cooked', () => {
  let proj: string;
  beforeAll(async () => {
    proj = await tempDir('lc-swept-same-');
    const files: Parameters<typeof writeProject>[2] = {
      'Content/Maps/Main.lasset': map(2),
      // A second root shipping Mesh2 alone.
      'Content/Maps/Other.lasset': { imports: [hard(g(0x102))], exports: [{ guid: g(2), name: 'Other', className: '/Script/Engine.CWorld', properties: [prop.str('Label', 'other')] }] },
    };
    for (let i = 0; i < 3; i++) files[`Content/Meshes/Mesh${i}.lasset`] = mesh(i);
    await writeProject(proj, { name: 'Same', cookRoots: ['/Game/Maps/Main', '/Game/Maps/Other'] }, files);
  });
  afterAll(async () => {
    await fsp.rm(proj, { recursive: true, force: true });
  });
  const cookIt = () => cook(proj);
  const cacheHas = async (guid: string) => {
    const { cache } = await CookCache.load(path.join(proj, 'Intermediates', CACHE_FILE_NAME), path.join(proj, 'Saved/Cooked'));
    cache.close();
    return cache.peek(guid) !== undefined;
  };

  it('still forgets the cache entries of what stopped shipping when nothing re-cooked', async () => {
    await cookIt();
    await cookIt();
    expect(await cacheHas(g(0x102))).toBe(true);
    // Only the config changes: every asset that still ships comes from the cache.
    await fsp.writeFile(path.join(proj, 'lumina-cook.json'), JSON.stringify({ name: 'Same', cookRoots: ['/Game/Maps/Main'] }));
    const s = await cookIt();
    expect([s.cooked, s.cached]).toEqual([0, s.assets]);
    expect(await cacheHas(g(0x102))).toBe(false);
    expect(fs.existsSync(path.join(proj, 'Saved/Cooked/Game/Meshes/Mesh2.lasset'))).toBe(false);
    const costs = await fsp.readFile(path.join(proj, 'Saved', COST_TABLE_FILE), 'utf8');
    expect(costs).not.toContain(g(0x102));
    expect(costs).toContain(g(0x101));
  });

  it('writes the cook cost table again when it is gone', async () => {
    await cookIt();
    const costs = path.join(proj, 'Saved', COST_TABLE_FILE);
    const before = await fsp.readFile(costs);
    await fsp.rm(costs);
    const s = await cookIt();
    expect(s.cooked).toBe(0);
    expect((await fsp.readFile(costs)).equals(before)).toBe(true);
  });
});
