/**
 * The one cook engine: the full cook and the daemon share a Cooker, and a CookStore plugged into
 * it (the remote cache's seam) is asked before a local cook and offered what was cooked.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import type { CookStore, CookStorePublish, StoredCook } from '../../cook/CookStore.js';
import { hard, prop, ref } from '../../src/format/packageBuilder.js';
import { initHash } from '../../src/util/hash.js';
import { asset, g, listFiles, tempDir, writeProject } from './helpers.js';

beforeAll(initHash);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

/** A store in memory, keyed by cook key: a real implementation of the seam, as a remote cache is. */
class MemoryStore implements CookStore {
  readonly blobs = new Map<string, StoredCook>();
  fetches = 0;
  async fetch(req: { key: { key: string } }): Promise<StoredCook | undefined> {
    this.fetches++;
    return this.blobs.get(req.key.key);
  }
  async publish(req: CookStorePublish): Promise<void> {
    const e = req.entry;
    this.blobs.set(req.key.key, { bytes: await fsp.readFile(req.output), xxh64: e.xxh64, rawSize: e.rawSize, strippedExports: e.strippedExports, nulledRefs: e.nulledRefs, texture: e.texture });
  }
}

async function project(): Promise<string> {
  const dir = await tempDir();
  dirs.push(dir);
  return writeProject(dir, { cookRoots: ['/Game/Maps/Main'], textures: { encoder: 'rgba8' } }, {
    'Content/Maps/Main.lasset': {
      imports: [hard(g(2)), hard(g(3))],
      exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.object('A', ref.import(0)), prop.object('B', ref.import(1))] }],
    },
    'Content/Props/Rock.lasset': asset(g(2), 'Rock'),
    'Content/Props/Tree.lasset': asset(g(3), 'Tree', { properties: [prop.str('Label', 'tree')] }),
    'Content/UI/Menu.rml': { text: '<rml/>', guid: g(4) },
  });
}

describe('Cooker', () => {
  it('a second machine with empty caches takes every asset from the store and writes the same paks', async () => {
    const store = new MemoryStore();
    const a = await project();
    const ca = await Cooker.open({ projectDir: a, store });
    const first = await ca.cook();
    ca.close();
    expect(first).toMatchObject({ ok: true, cooked: 4, fetched: 0 });
    expect(store.blobs.size).toBe(4);

    // Another checkout folder: keys hold no absolute path, so they agree.
    const b = await project();
    const cb = await Cooker.open({ projectDir: b, store });
    const second = await cb.cook();
    cb.close();
    expect(second).toMatchObject({ ok: true, cooked: 0, fetched: 4, cached: 0, recooked: { new: 4 } });
    expect(second.assetReports.map((r) => [r.path, r.status])).toEqual([
      ['/Game/Maps/Main.lasset', 'fetched'],
      ['/Game/Props/Rock.lasset', 'fetched'],
      ['/Game/Props/Tree.lasset', 'fetched'],
      ['/Game/UI/Menu.rml', 'fetched'],
    ]);
    for (const f of await listFiles(path.join(a, 'Saved/Paks'))) {
      expect((await fsp.readFile(path.join(b, 'Saved/Paks', f))).equals(await fsp.readFile(path.join(a, 'Saved/Paks', f))), f).toBe(true);
    }
    // Fetched results are in the local cache: the next cook asks the store nothing.
    const before = store.fetches;
    const cc = await Cooker.open({ projectDir: b, store });
    expect(await cc.cook()).toMatchObject({ ok: true, cached: 4, fetched: 0 });
    cc.close();
    expect(store.fetches).toBe(before);
  });

  it('reports why each asset re-cooked, per asset, with the cook key part that changed', async () => {
    const dir = await project();
    const c1 = await Cooker.open({ projectDir: dir });
    await c1.cook();
    c1.close();
    await writeProject(dir, { cookRoots: ['/Game/Maps/Main'], textures: { encoder: 'rgba8' }, cook: { compressionLevel: 1 } }, {
      'Content/Props/Rock.lasset': asset(g(2), 'Rock', { properties: [prop.str('Label', 'rock v2')] }),
    });
    const c2 = await Cooker.open({ projectDir: dir });
    const s = await c2.cook();
    c2.close();
    expect(Object.fromEntries(s.assetReports.map((r) => [r.path, r.reason ?? r.status]))).toEqual({
      '/Game/Maps/Main.lasset': 'settings',
      '/Game/Props/Rock.lasset': 'content',
      '/Game/Props/Tree.lasset': 'settings',
      // No setting touches a copied text asset.
      '/Game/UI/Menu.rml': 'cached',
    });
  });
});
