import fsp from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashHex, initHash, xxh64 } from '../../src/util/hash.js';
import { encodeCooked } from '../../src/format/cookedPackage.js';
import { writePak } from '../../pak/writePak.js';
import { collectSources } from '../../pak/collectSources.js';
import { PakReader } from '../../pak/PakReader.js';
import { MountedPaks } from '../../pak/MountedPaks.js';
import { buildPatchPak } from '../../pak/buildPatch.js';
import { baseTocHash, describePakFile, readReleaseManifest, writeRelease, writeReleaseManifest } from '../../pak/releaseManifest.js';
import { bytesDiff, caught, mixedBytes, tempDirEach } from './helpers.js';

beforeAll(initHash);

let dir: string;
tempDirEach((d) => (dir = d));

/** Write a cooked tree: .lasset files as LCKD containers, others as plain files. */
async function writeTree(root: string, files: Record<string, Uint8Array>): Promise<void> {
  await fsp.rm(root, { recursive: true, force: true });
  for (const [p, raw] of Object.entries(files)) {
    const f = path.join(root, ...p.slice(1).split('/'));
    await fsp.mkdir(path.dirname(f), { recursive: true });
    await fsp.writeFile(f, p.endsWith('.lasset') ? await encodeCooked(raw) : raw);
  }
}

describe('patch paks end to end', () => {
  it('base + patch built from the manifest alone serves exactly the new content', async () => {
    const v1: Record<string, Uint8Array> = {
      '/Game/Maps/Main.lasset': mixedBytes(250_000, 1),
      '/Game/Materials/Rock.lasset': mixedBytes(40_000, 2),
      '/Game/Materials/Sand.lasset': mixedBytes(90_000, 3),
      '/Game/UI/Hud.rml': new TextEncoder().encode('<rml>hud v1</rml>'),
      '/Game/UI/Old.rcss': new TextEncoder().encode('body { color: red }'),
      '/Chunk1/Big.lasset': mixedBytes(140_000, 4),
      '/Chunk1/Gone.lasset': mixedBytes(1_000, 5),
    };
    const cooked = path.join(dir, 'Saved', 'Cooked');
    const release = path.join(dir, 'Release', 'v1');
    await writeTree(cooked, v1);
    const all = await collectSources(cooked);
    expect(all.filter((s) => s.kind === 'cooked').length).toBe(5);
    // Two chunk paks, as a release with chunks would ship.
    const main = await writePak(path.join(release, 'Main.pak'), all.filter((s) => s.path.startsWith('/Game/')), { priority: 0 });
    await writePak(path.join(release, 'Chunk1.pak'), all.filter((s) => s.path.startsWith('/Chunk1/')), { priority: 0 });
    const registry = new Uint8Array([0x4c, 0x52, 0x45, 0x47, 1, 0, 0, 0]);
    await writeReleaseManifest(release, {
      name: 'v1',
      paks: [await describePakFile(path.join(release, 'Main.pak')), await describePakFile(path.join(release, 'Chunk1.pak'))],
      registry,
    });
    expect(await fsp.readFile(path.join(release, 'AssetRegistry.bin'))).toEqual(Buffer.from(registry));
    const manifest = await readReleaseManifest(release);
    expect(manifest.paks[0].tocHash).toBe(hashHex(main.tocHash));

    // v2: change one package and one text file, add one, delete one in each chunk; the old cooked tree is gone.
    const v2: Record<string, Uint8Array> = { ...v1 };
    v2['/Game/Materials/Rock.lasset'] = mixedBytes(40_000, 99);
    v2['/Game/UI/Hud.rml'] = new TextEncoder().encode('<rml>hud v2</rml>');
    v2['/Game/Materials/Mud.lasset'] = mixedBytes(70_000, 6);
    delete v2['/Game/UI/Old.rcss'];
    delete v2['/Chunk1/Gone.lasset'];
    await writeTree(cooked, v2);

    const patchFile = path.join(dir, 'Patch', 'v2.pak');
    const summary = await buildPatchPak({ base: await readReleaseManifest(path.join(release, 'release.json')), entries: await collectSources(cooked), out: patchFile });
    expect(summary).toMatchObject({
      added: ['/Game/Materials/Mud.lasset'],
      changed: ['/Game/Materials/Rock.lasset', '/Game/UI/Hud.rml'],
      removed: ['/Chunk1/Gone.lasset', '/Game/UI/Old.rcss'],
      unchanged: 3,
      priority: 1,
    });

    const patch = await PakReader.open(patchFile);
    expect(patch.isPatch).toBe(true);
    expect(patch.toc.priority).toBe(1);
    expect(patch.toc.baseTocHash).toBe(await baseTocHash(manifest));
    expect(patch.entries.map((e) => [e.path, e.method === 2])).toEqual([
      ['/Chunk1/Gone.lasset', true],
      ['/Game/Materials/Mud.lasset', false],
      ['/Game/Materials/Rock.lasset', false],
      ['/Game/UI/Hud.rml', false],
      ['/Game/UI/Old.rcss', true],
    ]);
    await patch.close();

    const m = await MountedPaks.mount([path.join(release, 'Main.pak'), path.join(release, 'Chunk1.pak'), patchFile]);
    try {
      expect(await m.list()).toEqual(Object.keys(v2).sort());
      for (const [p, raw] of Object.entries(v2)) expect(bytesDiff(await m.read(p), raw), p).toBe('same');
      expect(await m.exists('/Game/UI/Old.rcss')).toBe(false);
      expect(await m.exists('/Chunk1/Gone.lasset')).toBe(false);
    } finally {
      await m.close();
    }

    // A second patch against base + first patch: the first patch's tombstones count as removed.
    const relV2 = path.join(dir, 'Release', 'v2');
    await fsp.mkdir(relV2, { recursive: true });
    for (const f of ['Main.pak', 'Chunk1.pak']) await fsp.copyFile(path.join(release, f), path.join(relV2, f));
    await fsp.copyFile(patchFile, path.join(relV2, 'v2.pak'));
    await writeRelease(relV2, { name: 'v2', pakFiles: ['Main.pak', 'Chunk1.pak', 'v2.pak'] });
    const again = await buildPatchPak({ base: await readReleaseManifest(relV2), entries: await collectSources(cooked), out: path.join(dir, 'noop.pak') });
    expect(again).toMatchObject({ added: [], changed: [], removed: [], unchanged: 6, priority: 2 });
  });

  it('writes release.json as the paks are read: the bytes of the manifest described whole, and a pak it cannot accept leaves none', async () => {
    const rel = path.join(dir, 'Release', 'big');
    await fsp.mkdir(rel, { recursive: true });
    const src = path.join(dir, 'one.bin');
    await fsp.writeFile(src, 'x');
    // More entries than one piece of the JSON holds (4096), in two paks.
    const many = Array.from({ length: 9000 }, (_, i) => ({ path: `/Game/F${String(i).padStart(5, '0')}.lasset`, kind: 'file' as const, file: src }));
    await writePak(path.join(rel, 'Main.pak'), many.slice(0, 5000));
    await writePak(path.join(rel, 'Chunk1.pak'), many.slice(5000), { priority: 1 });
    const registry = Buffer.from('registry bytes');
    const shaderCache = Buffer.from('shader cache bytes');
    const streamed = await writeRelease(rel, { name: 'big', pakFiles: ['Main.pak', 'Chunk1.pak'], registry, shaderCache });
    const streamedBytes = await fsp.readFile(streamed);
    const whole = path.join(dir, 'Release', 'whole');
    await fsp.mkdir(whole, { recursive: true });
    const paks = [await describePakFile(path.join(rel, 'Main.pak')), await describePakFile(path.join(rel, 'Chunk1.pak'))];
    await writeReleaseManifest(whole, { name: 'big', paks, registry, shaderCache });
    expect(bytesDiff(streamedBytes, await fsp.readFile(path.join(whole, 'release.json')))).toBe('same');
    expect((await readReleaseManifest(rel)).paks.map((p) => p.entries.length)).toEqual([5000, 4000]);

    // The same pak named twice: refused as writeReleaseManifest refuses it, release.json untouched.
    expect(await caught(() => writeRelease(rel, { name: 'big', pakFiles: ['Main.pak', 'Main.pak'] }))).toMatchObject({ code: 'PATCH_BASE_INVALID' });
    expect((await fsp.readFile(streamed)).equals(streamedBytes)).toBe(true);
    expect((await fsp.readdir(rel)).filter((n) => n.includes('.lctmp-'))).toEqual([]);
  });

  it('rejects a bad base manifest naming the key', async () => {
    await fsp.mkdir(path.join(dir, 'r'));
    expect(await caught(() => readReleaseManifest(path.join(dir, 'r')))).toMatchObject({ code: 'PATCH_BASE_INVALID' });
    const f = path.join(dir, 'r', 'release.json');
    const good = {
      format: 'lumina-release',
      version: 1,
      name: 'v1',
      paks: [{ file: 'Main.pak', priority: 0, mountPoint: '/', tocHash: '00000000000000ff', flags: 0, entries: [{ path: '/A', rawSize: 1, xxh64: hashHex(xxh64(new Uint8Array([1]))), method: 1 }] }],
    };
    await fsp.writeFile(f, JSON.stringify(good));
    expect((await readReleaseManifest(f)).name).toBe('v1');
    const bad = structuredClone(good);
    bad.paks[0].entries[0].xxh64 = 'xyz';
    await fsp.writeFile(f, JSON.stringify(bad));
    expect(await caught(() => readReleaseManifest(f))).toMatchObject({
      code: 'PATCH_BASE_INVALID',
      message: '"paks[0].entries[0].xxh64" is not 16 lowercase hex digits',
    });
    await fsp.writeFile(f, '{');
    expect(await caught(() => readReleaseManifest(f))).toMatchObject({ code: 'PATCH_BASE_INVALID' });
  });
});
