/**
 * The cook cache never vouches for an output it did not write: a renamed asset, an asset that
 * stopped shipping, and an output replaced behind the cache's back all re-cook or drop the entry.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CACHE_FILE_NAME, CookCache } from '../../cook/cookCache.js';
import { cookProject } from '../../cook/cookProject.js';
import { hard, prop, ref } from '../../src/format/packageBuilder.js';
import { initHash } from '../../src/util/hash.js';
import { asset, g, tempDir, writeProject } from './helpers.js';

beforeAll(initHash);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

async function project(): Promise<string> {
  const dir = await tempDir();
  dirs.push(dir);
  await writeProject(dir, { cookRoots: ['/Game/Maps/Main'] }, {
    'Content/Maps/Main.lasset': {
      imports: [hard(g(2)), hard(g(3))],
      exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.object('A', ref.import(0)), prop.object('B', ref.import(1))] }],
    },
    'Content/Props/Rock.lasset': asset(g(2), 'Rock'),
    'Content/Props/Tree.lasset': asset(g(3), 'Tree'),
  });
  return dir;
}

/** The cache as the next cook sees it (snapshot plus journal). */
async function cacheEntries(dir: string): Promise<Record<string, { cookedFile: string }>> {
  const { cache } = await CookCache.load(path.join(dir, 'Intermediates', CACHE_FILE_NAME), path.join(dir, 'Saved/Cooked'));
  const out: Record<string, { cookedFile: string }> = {};
  for (const guid of [g(1), g(2), g(3)]) {
    const e = cache.peek(guid);
    if (e) out[guid] = e;
  }
  return out;
}

describe('cook cache integrity', () => {
  it('re-cooks a renamed asset under its new path and drops the old output', async () => {
    const dir = await project();
    expect(await cookProject({ projectDir: dir })).toMatchObject({ ok: true, cooked: 3 });
    await fsp.mkdir(path.join(dir, 'Content/Moved'));
    // Same GUID and bytes, new folder: the package path changes, its cooked bytes do not.
    await fsp.rename(path.join(dir, 'Content/Props/Rock.lasset'), path.join(dir, 'Content/Moved/Rock.lasset'));
    const again = await cookProject({ projectDir: dir });
    expect(again).toMatchObject({ ok: true, cooked: 1, cached: 2, recooked: { output: 1 } });
    expect((await cacheEntries(dir))[g(2)].cookedFile).toBe('Game/Moved/Rock.lasset');
    await expect(fsp.stat(path.join(dir, 'Saved/Cooked/Game/Moved/Rock.lasset'))).resolves.toBeTruthy();
    await expect(fsp.stat(path.join(dir, 'Saved/Cooked/Game/Props/Rock.lasset'))).rejects.toThrow();
  });

  it('forgets an asset that stopped shipping together with its output', async () => {
    const dir = await project();
    await cookProject({ projectDir: dir });
    expect(Object.keys(await cacheEntries(dir))).toContain(g(3));
    // Main no longer references Tree; Tree stays on disk but is not cooked.
    await writeProject(dir, { cookRoots: ['/Game/Maps/Main'] }, {
      'Content/Maps/Main.lasset': {
        imports: [hard(g(2))],
        exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.object('A', ref.import(0))] }],
      },
    });
    expect(await cookProject({ projectDir: dir })).toMatchObject({ ok: true, cooked: 1, cached: 1 });
    expect(Object.keys(await cacheEntries(dir)).sort()).toEqual([g(1), g(2)]);
    await expect(fsp.stat(path.join(dir, 'Saved/Cooked/Game/Props/Tree.lasset'))).rejects.toThrow();
  });

  it('re-cooks when an output was replaced by other bytes of the same size', async () => {
    const dir = await project();
    await cookProject({ projectDir: dir });
    const out = path.join(dir, 'Saved/Cooked/Game/Props/Rock.lasset');
    const bytes = await fsp.readFile(out);
    bytes[bytes.length - 1] ^= 0xff;
    await fsp.writeFile(out, bytes);
    // Make sure the mtime really moved on coarse-clock filesystems.
    const later = new Date(Date.now() + 5_000);
    await fsp.utimes(out, later, later);
    const again = await cookProject({ projectDir: dir });
    expect(again).toMatchObject({ ok: true, cooked: 1, cached: 2, recooked: { output: 1 } });
    expect((await fsp.readFile(out)).equals(bytes)).toBe(false);
  });
});
