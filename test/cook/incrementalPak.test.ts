/**
 * A chunk pak whose content changed is rebuilt from the pak it replaces: the blocks of every
 * cooked entry that did not change are copied from the old pak (checked against the cooked file's
 * hash, never re-read from Saved/Cooked nor recompressed), and the result is byte-identical to a
 * pak built from scratch. A damaged block in the old pak is never copied.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookProject } from '../../cook/cookProject.js';
import { hard, prop } from '../../src/format/packageBuilder.js';
import { decodeCooked } from '../../src/format/cookedPackage.js';
import { initHash } from '../../src/util/hash.js';
import { PakReader } from '../../pak/PakReader.js';
import { Random } from '../../samples/generate/random.js';
import { g, tempDir, writeFixture, writeProject } from './helpers.js';
import { copySampleProject } from '../helpers/sampleProject.js';

const MESHES = 24;
const CONFIG = { name: 'IncrementalPak', cookRoots: ['/Game/Maps/Main'], textures: { encoder: 'rgba8' } };

/** Native-tail filler that compresses somewhat; every fifth mesh spans several 64 KiB blocks. */
function filler(i: number): Uint8Array {
  const rnd = new Random(1000 + i);
  const out = new Uint8Array(i % 5 === 0 ? 150_000 + i : 2_000 + 37 * i);
  for (let k = 0; k < out.length; k++) out[k] = rnd.nextU32() % 7 === 0 ? rnd.nextU32() & 0xff : 0x41 + (k % 13);
  return out;
}

/** A text asset that DEFLATE shrinks, differently at each level (words in a random order). */
function bigText(label: string): string {
  const rnd = new Random(77);
  const words = ['<div>', 'menu', 'item', 'class="row"', '</div>', 'button', 'label', 'icon', 'span', 'style'];
  let out = `<rml>${label}`;
  while (out.length < 40_000) out += ` ${words[rnd.nextU32() % words.length]}${rnd.nextU32() % 50}`;
  return `${out}</rml>`;
}

function mesh(i: number, label: string) {
  return { exports: [{ guid: g(0x100 + i), name: `Mesh${i}`, className: '/Script/Engine.CStaticMesh', properties: [prop.str('Label', label)], tail: filler(i) }] };
}

async function writeSample(dir: string): Promise<void> {
  const files: Parameters<typeof writeProject>[2] = {
    'Content/Maps/Main.lasset': {
      imports: Array.from({ length: MESHES }, (_, i) => hard(g(0x100 + i))),
      exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.str('Label', 'main')] }],
    },
    'Content/UI/Menu.rml': { text: '<rml>menu</rml>', guid: g(2) },
    'Content/UI/Big.rml': { text: bigText('v1'), guid: g(3) },
  };
  for (let i = 0; i < MESHES; i++) files[`Content/Meshes/Mesh${i}.lasset`] = mesh(i, 'v1');
  await writeProject(dir, CONFIG, files);
}

const mainPak = (dir: string) => path.join(dir, 'Saved/Paks/Main.pak');

/** A from-scratch cook of a copy of `dir`'s sources: the full rebuild to compare with. */
async function fullRebuild(dir: string): Promise<Buffer> {
  const fresh = await tempDir('lc-incpak-fresh-');
  try {
    await copySampleProject(fresh, dir);
    const s = await cookProject({ projectDir: fresh, report: false });
    expect(s.ok).toBe(true);
    return await fsp.readFile(mainPak(fresh));
  } finally {
    await fsp.rm(fresh, { recursive: true, force: true });
  }
}

async function verified(file: string): Promise<PakReader> {
  const pak = await PakReader.open(file);
  await pak.verify();
  return pak;
}

let dir: string;
beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-incpak-');
  await writeSample(dir);
  const first = await cookProject({ projectDir: dir, report: false });
  expect(first.ok).toBe(true);
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('incremental chunk paks', () => {
  it('a one-asset change copies every other cooked entry from the previous pak, byte-identical to a full rebuild', async () => {
    await writeFixture(dir, 'Content/Meshes/Mesh3.lasset', mesh(3, 'v2'));
    const s = await cookProject({ projectDir: dir, report: false });
    expect(s).toMatchObject({ ok: true, cooked: 1 });
    const main = s.paks.find((p) => p.chunk === 'Main')!;
    // Every package but the edited one (the map and the other meshes) came from the old pak.
    // The text assets and AssetRegistry.bin (same fields: a new label) were copied too, not compressed again.
    expect(main).toMatchObject({ written: true, reused: MESHES, previousDamaged: 0 });
    expect(main.reusedCompressed).toBe(4);
    const bytes = await fsp.readFile(main.file);
    expect(bytes.equals(await fullRebuild(dir))).toBe(true);
    const pak = await verified(main.file);
    await pak.close();
  });

  it('a damaged block in the previous pak is not copied: the cooked file ships, and the pak equals a full rebuild', async () => {
    const before = await PakReader.open(mainPak(dir));
    const victim = before.getEntry('/Game/Meshes/Mesh5.lasset')!;
    await before.close();
    expect(victim.method).toBe(1);
    // Flip bytes inside its second block, in place: the file keeps its size and TOC.
    const fh = await fsp.open(mainPak(dir), 'r+');
    const at = victim.offset + victim.blockSizes[0] + 10;
    const b = Buffer.alloc(16);
    await fh.read(b, 0, 16, at);
    for (let i = 0; i < 16; i++) b[i] ^= 0x5a;
    await fh.write(b, 0, 16, at);
    await fh.close();

    await writeFixture(dir, 'Content/Meshes/Mesh7.lasset', mesh(7, 'v2'));
    const s = await cookProject({ projectDir: dir, report: false });
    expect(s).toMatchObject({ ok: true, cooked: 1 });
    const main = s.paks.find((p) => p.chunk === 'Main')!;
    expect(main).toMatchObject({ written: true, reused: MESHES - 1, previousDamaged: 1 });
    const pak = await verified(main.file);
    const cooked = path.join(dir, 'Saved/Cooked/Game/Meshes/Mesh5.lasset');
    expect(Buffer.from(await pak.readEntry('/Game/Meshes/Mesh5.lasset')).equals(Buffer.from(await decodeCooked(await fsp.readFile(cooked), cooked)))).toBe(true);
    await pak.close();
    expect((await fsp.readFile(main.file)).equals(await fullRebuild(dir))).toBe(true);
  });

  it('a change of nothing rewrites nothing; removing an asset rebuilds without it', async () => {
    const noop = await cookProject({ projectDir: dir, report: false });
    expect(noop).toMatchObject({ ok: true, cooked: 0 });
    expect(noop.paks.every((p) => !p.written)).toBe(true);

    // The map stops importing the last mesh: it leaves the plan and the pak.
    await writeFixture(dir, 'Content/Maps/Main.lasset', {
      imports: Array.from({ length: MESHES - 1 }, (_, i) => hard(g(0x100 + i))),
      exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.str('Label', 'main')] }],
    });
    const s = await cookProject({ projectDir: dir, report: false });
    expect(s).toMatchObject({ ok: true, cooked: 1 });
    const main = s.paks.find((p) => p.chunk === 'Main')!;
    expect(main).toMatchObject({ written: true, reused: MESHES - 1 });
    const pak = await verified(main.file);
    expect(pak.getEntry(`/Game/Meshes/Mesh${MESHES - 1}.lasset`)).toBeUndefined();
    await pak.close();
    expect((await fsp.readFile(main.file)).equals(await fullRebuild(dir))).toBe(true);
  });

  it('an asset cooked since the pak was written comes from its cooked file, not the previous pak (no bytes held: a cache hit)', async () => {
    // A cook without paks re-cooks Mesh2; the next cook takes it from the cache, so only the
    // hash check tells the previous pak's Mesh2 (v1) from the cooked file (v3).
    await writeFixture(dir, 'Content/Meshes/Mesh2.lasset', mesh(2, 'v3'));
    expect(await cookProject({ projectDir: dir, report: false, paks: false })).toMatchObject({ ok: true, cooked: 1 });
    const s = await cookProject({ projectDir: dir, report: false });
    expect(s).toMatchObject({ ok: true, cooked: 0 });
    const main = s.paks.find((p) => p.chunk === 'Main')!;
    expect(main).toMatchObject({ written: true, reused: MESHES - 1, previousDamaged: 0 });
    const pak = await verified(main.file);
    expect(Buffer.from(await pak.readEntry('/Game/Meshes/Mesh2.lasset')).includes(Buffer.from('v3'))).toBe(true);
    await pak.close();
    expect((await fsp.readFile(main.file)).equals(await fullRebuild(dir))).toBe(true);
  });
});

describe('incremental chunk paks: entries the pak compresses itself', () => {
  it('a changed text asset is compressed again, the others are copied; a pak compressed at another level lends none', async () => {
    const own = await tempDir('lc-incpak-text-');
    try {
      await writeSample(own);
      expect((await cookProject({ projectDir: own, report: false })).ok).toBe(true);
      await writeFixture(own, 'Content/UI/Big.rml', { text: bigText('v2'), guid: g(3) });
      const s = await cookProject({ projectDir: own, report: false });
      expect(s).toMatchObject({ ok: true, cooked: 1 });
      const main = s.paks.find((p) => p.chunk === 'Main')!;
      // Menu.rml, AssetRegistry.bin and ShaderCache.bin copied; Big.rml (new bytes) compressed.
      expect(main).toMatchObject({ written: true, reused: MESHES + 1, reusedCompressed: 3 });
      const pak = await verified(main.file);
      expect(Buffer.from(await pak.readEntry('/Game/UI/Big.rml')).toString()).toBe(bigText('v2'));
      await pak.close();
      expect((await fsp.readFile(main.file)).equals(await fullRebuild(own))).toBe(true);

      // Another level: the previous pak's blocks of the same raw bytes are not these blocks.
      const configFile = path.join(own, 'lumina-cook.json');
      const config = JSON.parse(await fsp.readFile(configFile, 'utf8'));
      await fsp.writeFile(configFile, JSON.stringify({ ...config, cook: { ...config.cook, compressionLevel: 1 } }));
      const relevel = await cookProject({ projectDir: own, report: false });
      expect(relevel.ok).toBe(true);
      expect((await fsp.readFile(main.file)).equals(await fullRebuild(own))).toBe(true);
      expect(relevel.paks.find((p) => p.chunk === 'Main')).toMatchObject({ written: true, reusedCompressed: 0 });
    } finally {
      await fsp.rm(own, { recursive: true, force: true });
    }
  });
});

describe('no-op after a cold cook --release at the size where the cache folds mid-cook', () => {
  it('rewrites no pak: the pak records journaled after the fold are read back', async () => {
    // Past 1024 journal lines the cook folds the cache after its cook loop, before the paks, so
    // the pak records live only in the journal (the 1M case); release copies must not matter.
    const big = await tempDir('lc-incpak-big-');
    try {
      const files: Parameters<typeof writeProject>[2] = {
        'Content/Maps/Main.lasset': { exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.str('Label', 'main')] }] },
      };
      for (let i = 0; i < 1100; i++) files[`Content/UI/T${i}.rml`] = { text: `<rml>${i}</rml>`, guid: g(0x1000 + i) };
      await writeProject(big, CONFIG, files);
      const cold = await cookProject({ projectDir: big, report: false, release: 'r1' });
      expect(cold).toMatchObject({ ok: true, cooked: 1101 });
      const noop = await cookProject({ projectDir: big, report: false });
      expect(noop).toMatchObject({ ok: true, cooked: 0, cached: 1101 });
      expect(noop.paks.map((p) => [p.chunk, p.written])).toEqual([['Main', false]]);
    } finally {
      await fsp.rm(big, { recursive: true, force: true });
    }
  });
});
