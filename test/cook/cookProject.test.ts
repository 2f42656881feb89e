import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookProject, type CookSummary } from '../../cook/cookProject.js';
import { Cooker } from '../../cook/Cooker.js';
import { PakReader } from '../../pak/PakReader.js';
import { decodeCooked } from '../../src/format/cookedPackage.js';
import { decodeCookedRegistry } from '../../src/format/cookedRegistry.js';
import { hard, prop, ref, soft } from '../../src/format/packageBuilder.js';
import { decodeExport, parsePackage } from '../../src/format/packageReader.js';
import { encodeProperties } from '../../src/format/properties.js';
import { encodePng } from '../../samples/generate/png.js';
import { initHash } from '../../src/util/hash.js';
import { asset, g, listFiles, tempDir, writeFixture, writeProject } from './helpers.js';
import { copySampleProject } from '../helpers/sampleProject.js';

beforeAll(initHash);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

async function project(config: Record<string, unknown> = {}, extra: Record<string, Parameters<typeof writeFixture>[2]> = {}): Promise<string> {
  const dir = await tempDir();
  dirs.push(dir);
  const png = encodePng({ width: 4, height: 4, color: 'rgb', data: new Uint8Array(48).fill(90) });
  await writeProject(
    dir,
    {
      cookRoots: ['/Game/Maps/Main'],
      plugins: [{ name: 'Foliage', path: 'Plugins/Foliage', cookRoots: ['/Foliage/Trees/Oak'] }],
      textures: { encoder: 'rgba8' },
      ...config,
    },
    {
      'Content/Maps/Main.lasset': {
        imports: [hard(g(2)), soft(g(3)), hard(g(0x30))],
        exports: [
          { guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.object('Rock', ref.import(0)), prop.soft('Sky', g(3)), prop.object('Helper', ref.export(1))] },
          { guid: g(0x101), name: 'EditorHelper', className: '/Script/Editor.CHelper' },
        ],
        thumbnail: { width: 1, height: 1, data: new Uint8Array(4) },
      },
      'Content/Props/Rock.lasset': asset(g(2), 'Rock', { imports: [hard(g(1)), hard(g(5))] }),
      'Content/Env/Sky.lasset': asset(g(3), 'Sky'),
      'Content/Unused/Junk.lasset': asset(g(4), 'Junk'),
      'Content/Tex/Stone.lasset': {
        exports: [{ guid: g(5), name: 'Stone', className: '/Script/Engine.CTexture', properties: [prop.bool('SRGB', true), prop.bytes('SourceData', png), prop.bool('GenerateMips', true)] }],
      },
      'Content/UI/Menu.rml': { text: '<rml><body>menu</body></rml>', guid: g(0x40) },
      'Plugins/Foliage/Content/Trees/Oak.lasset': asset(g(0x31), 'Oak', { imports: [hard(g(0x30)), hard(g(0x32)), hard(g(2))] }),
      'Plugins/Foliage/Content/Trees/Shared.lasset': asset(g(0x30), 'Shared'),
      'Plugins/Foliage/Content/Trees/Leaf.lasset': asset(g(0x32), 'Leaf', { imports: [hard(g(0x31))] }),
      ...extra,
    },
  );
  return dir;
}

async function pakPaths(file: string): Promise<string[]> {
  const pak = await PakReader.open(file);
  try {
    return pak.entries.map((e) => e.path);
  } finally {
    await pak.close();
  }
}

async function pakEntry(file: string, p: string): Promise<Uint8Array> {
  const pak = await PakReader.open(file);
  try {
    return await pak.readEntry(p);
  } finally {
    await pak.close();
  }
}

const errorsOf = (s: CookSummary) => s.problems.filter((p) => p.severity === 'error').map(({ code, message, file }) => ({ code, message, file }));

describe('cookProject', () => {
  it('cooks the closure into one pak per chunk (Main first) with the same AssetRegistry.bin in each', async () => {
    const dir = await project();
    const s = await cookProject({ projectDir: dir });
    expect(errorsOf(s)).toEqual([]);
    expect(s).toMatchObject({ ok: true, cooked: 8, cached: 0, failed: 0, assets: 8, softOnly: 1, chunks: ['Main', 'Foliage'] });
    expect(s.strippedExports).toBe(1);
    expect(s.paks.map((p) => [p.chunk, path.basename(p.file), p.written])).toEqual([
      ['Main', 'Main.pak', true],
      ['Foliage', 'Foliage.pak', true],
    ]);
    const main = path.join(dir, 'Saved/Paks/Main.pak');
    const foliage = path.join(dir, 'Saved/Paks/Foliage.pak');
    expect(await pakPaths(main)).toEqual([
      '/AssetRegistry.bin',
      '/Foliage/Trees/Shared.lasset',
      '/Game/Env/Sky.lasset',
      '/Game/Maps/Main.lasset',
      '/Game/Props/Rock.lasset',
      '/Game/Tex/Stone.lasset',
      '/Game/UI/Menu.rml',
      '/ShaderCache.bin',
    ]);
    expect(await pakPaths(foliage)).toEqual(['/AssetRegistry.bin', '/Foliage/Trees/Leaf.lasset', '/Foliage/Trees/Oak.lasset', '/ShaderCache.bin']);

    const regMain = await pakEntry(main, '/AssetRegistry.bin');
    expect(Buffer.from(regMain).equals(Buffer.from(await pakEntry(foliage, '/AssetRegistry.bin')))).toBe(true);
    const reg = decodeCookedRegistry(regMain, 'AssetRegistry.bin');
    expect(reg.assets.map((a) => a.packagePath)).toEqual([
      '/Game/Maps/Main',
      '/Game/Props/Rock',
      '/Game/Env/Sky',
      '/Game/Tex/Stone',
      '/Foliage/Trees/Shared',
      '/Foliage/Trees/Oak',
      '/Foliage/Trees/Leaf',
    ]);
    expect(reg.assets[0]).toMatchObject({ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', dependencies: [{ guid: g(2), type: 0 }, { guid: g(3), type: 1 }, { guid: g(0x30), type: 0 }] });
    expect(reg.textAssets).toEqual([{ guid: g(0x40), path: '/Game/UI/Menu.rml' }]);

    // The map: editor export gone, reference to it nulled, thumbnail gone; the pak entry is the LCKD's raw bytes.
    const lckd = await fsp.readFile(path.join(dir, 'Saved/Cooked/Game/Maps/Main.lasset'));
    const raw = await decodeCooked(lckd, 'Main.lasset');
    expect(Buffer.from(await pakEntry(main, '/Game/Maps/Main.lasset')).equals(Buffer.from(raw))).toBe(true);
    const cooked = parsePackage(raw, '/x/Main.lasset');
    expect(cooked.exports.map((e) => e.objectName)).toEqual(['Main']);
    expect(cooked.thumbnail).toBeNull();
    expect(decodeExport(cooked, 0).map((p) => p.value)).toEqual([ref.import(0), g(3), 0]);

    // The texture carries PlatformData instead of SourceData.
    const tex = parsePackage(await decodeCooked(await fsp.readFile(path.join(dir, 'Saved/Cooked/Game/Tex/Stone.lasset')), 's'), '/x/Stone.lasset');
    expect(decodeExport(tex, 0).map((p) => p.name)).toEqual(['SRGB', 'Width', 'Height', 'MipCount', 'Format', 'PlatformData', 'GenerateMips']);

    // The text asset ships as its bytes; the listing names every entry.
    expect(Buffer.from(await pakEntry(main, '/Game/UI/Menu.rml')).toString()).toBe('<rml><body>menu</body></rml>');
    const listing = await fsp.readFile(path.join(dir, 'Saved/Paks/Foliage.contents.txt'), 'utf8');
    expect(listing.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split('\t')[4])).toEqual(['/AssetRegistry.bin', '/Foliage/Trees/Leaf.lasset', '/Foliage/Trees/Oak.lasset', '/ShaderCache.bin']);
    expect(await listFiles(path.join(dir, 'Saved/Cooked'))).toEqual([
      'AssetRegistry.bin',
      'Foliage/Trees/Leaf.lasset',
      'Foliage/Trees/Oak.lasset',
      'Foliage/Trees/Shared.lasset',
      'Game/Env/Sky.lasset',
      'Game/Maps/Main.lasset',
      'Game/Props/Rock.lasset',
      'Game/Tex/Stone.lasset',
      'Game/UI/Menu.rml',
      'ShaderCache.bin',
    ]);
  });

  it('re-cooks only what changed, and says why', async () => {
    const dir = await project();
    await cookProject({ projectDir: dir });
    const again = await cookProject({ projectDir: dir });
    expect(again).toMatchObject({ ok: true, cooked: 0, cached: 8, recooked: {} });
    expect(again.paks.map((p) => p.written)).toEqual([false, false]);

    await writeFixture(dir, 'Content/Props/Rock.lasset', asset(g(2), 'Rock', { imports: [hard(g(1)), hard(g(5))], properties: [prop.int('Changed', 1)] }));
    const touched = await cookProject({ projectDir: dir });
    expect(touched).toMatchObject({ cooked: 1, cached: 7, recooked: { content: 1 } });
    expect(touched.paks.map((p) => p.written)).toEqual([true, false]);

    await fsp.rm(path.join(dir, 'Saved/Cooked/Foliage/Trees/Leaf.lasset'));
    expect(await cookProject({ projectDir: dir })).toMatchObject({ cooked: 1, recooked: { output: 1 } });
  });

  it('with the outputs statted while the registry scans (LUMINA_PRESTAT_OUTPUTS=1), still re-cooks an output deleted or replaced before the cook', async () => {
    const env = process.env.LUMINA_PRESTAT_OUTPUTS;
    process.env.LUMINA_PRESTAT_OUTPUTS = '1';
    try {
      const dir = await project();
      await cookProject({ projectDir: dir });
      expect(await cookProject({ projectDir: dir })).toMatchObject({ ok: true, cooked: 0, cached: 8 });
      await fsp.rm(path.join(dir, 'Saved/Cooked/Foliage/Trees/Leaf.lasset'));
      const rock = path.join(dir, 'Saved/Cooked/Game/Props/Rock.lasset');
      await fsp.writeFile(`${rock}.tmp`, await fsp.readFile(rock));
      await fsp.rename(`${rock}.tmp`, rock);
      // As cookProject does, with the thread's stats all in before the pass (else the pass stats what it has not).
      const cooker = await Cooker.open({ projectDir: dir, prestatOutputs: true });
      try {
        await cooker.cache.prestatDone();
        expect(await cooker.cook()).toMatchObject({ ok: true, cooked: 2, cached: 6, recooked: { output: 2 } });
      } finally {
        cooker.close();
      }
      expect(await cookProject({ projectDir: dir })).toMatchObject({ ok: true, cooked: 0, cached: 8 });
    } finally {
      if (env === undefined) delete process.env.LUMINA_PRESTAT_OUTPUTS;
      else process.env.LUMINA_PRESTAT_OUTPUTS = env;
    }
  });

  it('re-cooks what a changed setting affects: prefixes every package, texture settings only textures', async () => {
    const dir = await project();
    await cookProject({ projectDir: dir });
    const cfgFile = path.join(dir, 'lumina-cook.json');
    const cfg = JSON.parse(await fsp.readFile(cfgFile, 'utf8'));
    await fsp.writeFile(cfgFile, JSON.stringify({ ...cfg, textures: { encoder: 'rgba8', maxSize: 4096 } }));
    expect(await cookProject({ projectDir: dir })).toMatchObject({ cooked: 1, cached: 7, recooked: { settings: 1 } });
    await fsp.writeFile(cfgFile, JSON.stringify({ ...cfg, textures: { encoder: 'rgba8', maxSize: 4096 }, cook: { editorOnlyClassPrefixes: ['/Script/Editor.', '/Script/Tools.'] } }));
    // Every package, not the text asset.
    expect(await cookProject({ projectDir: dir })).toMatchObject({ cooked: 7, cached: 1, recooked: { settings: 7 } });
    // Traversal-only settings change no cooked bytes.
    await fsp.writeFile(cfgFile, JSON.stringify({ ...cfg, textures: { encoder: 'rgba8', maxSize: 4096 }, cook: { editorOnlyClassPrefixes: ['/Script/Editor.', '/Script/Tools.'], concurrency: 3 } }));
    expect(await cookProject({ projectDir: dir })).toMatchObject({ cooked: 0, cached: 8 });
  });

  it('treats an unreadable cache as a warning and cooks everything', async () => {
    const dir = await project();
    await cookProject({ projectDir: dir });
    await fsp.writeFile(path.join(dir, 'Intermediates/CookCache.json'), '{"version": 1, "entries": {"x": 5}');
    const s = await cookProject({ projectDir: dir });
    expect(s).toMatchObject({ ok: true, cooked: 8, cached: 0 });
    const w = s.problems.find((p) => p.code === 'CACHE_INVALID');
    expect(w).toMatchObject({ severity: 'warning', file: path.join(dir, 'Intermediates/CookCache.json') });
    expect(w!.message).toMatch(/^cache is unusable: .*; cooking everything$/);
  });

  it('follows soft references only with soft "include", reporting them apart', async () => {
    const dir = await project({ cook: { soft: 'exclude' } });
    const s = await cookProject({ projectDir: dir });
    expect(s).toMatchObject({ ok: true, assets: 7, softOnly: 0, softExcluded: 1 });
    expect(await pakPaths(path.join(dir, 'Saved/Paks/Main.pak'))).not.toContain('/Game/Env/Sky.lasset');
  });

  it('a missing Hard dependency fails the cook in every mode, naming its referrer; the last good paks stay', async () => {
    const dir = await project();
    expect((await cookProject({ projectDir: dir })).ok).toBe(true);
    const before = await fsp.readFile(path.join(dir, 'Saved/Paks/Main.pak'));
    await writeFixture(dir, 'Content/Props/Rock.lasset', asset(g(2), 'Rock', { imports: [hard(g(0x99))] }));
    const rock = path.join(dir, 'Content/Props/Rock.lasset');
    for (const ci of [false, true]) {
      const s = await cookProject({ projectDir: dir, ci });
      expect(s.ok).toBe(false);
      expect(errorsOf(s)).toEqual([{ code: 'DEPENDENCY_MISSING', message: `references ${g(0x99)}, which no mounted asset has`, file: rock }]);
      expect(s.paks).toEqual([]);
      // The rest still cooked: Rock's new bytes are cached for the next cook.
      expect(s.assetReports.find((r) => r.path === '/Game/Props/Rock.lasset')).toMatchObject({ status: ci ? 'cached' : 'cooked' });
      expect((await fsp.readFile(path.join(dir, 'Saved/Paks/Main.pak'))).equals(before)).toBe(true);
    }
  });

  it('a missing Soft dependency is a warning, an error under --ci', async () => {
    const dir = await project({}, { 'Content/Props/Rock.lasset': asset(g(2), 'Rock', { imports: [soft(g(0x99))] }) });
    const rock = path.join(dir, 'Content/Props/Rock.lasset');
    const s = await cookProject({ projectDir: dir });
    expect(s.ok).toBe(true);
    expect(s.problems.filter((p) => p.code === 'DEPENDENCY_MISSING')).toEqual([
      { code: 'DEPENDENCY_MISSING', message: `references ${g(0x99)}, which no mounted asset has`, file: rock, severity: 'warning' },
    ]);
    await fsp.rm(path.join(dir, 'Saved'), { recursive: true });
    const ci = await cookProject({ projectDir: dir, ci: true });
    expect(ci.ok).toBe(false);
    expect(errorsOf(ci)).toEqual([{ code: 'DEPENDENCY_MISSING', message: `references ${g(0x99)}, which no mounted asset has`, file: rock }]);
    expect(ci.paks).toEqual([]);
    await expect(fsp.stat(path.join(dir, 'Saved/Paks/Main.pak'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('fails a corrupt package by its path and cooks the others; "verbatim" ships it as it is', async () => {
    const bad = encodeProperties([prop.int('N', 5)]).slice();
    new DataView(bad.buffer).setInt32(20, 2, true);
    const broken = { 'Content/Props/Rock.lasset': { imports: [hard(g(1)), hard(g(5))], exports: [{ guid: g(2), name: 'Rock', className: 'C', data: bad }] } };
    const dir = await project({}, broken);
    const rock = path.join(dir, 'Content/Props/Rock.lasset');
    const s = await cookProject({ projectDir: dir });
    expect(s).toMatchObject({ ok: false, failed: 1, cooked: 7 });
    expect(errorsOf(s)).toEqual([{ code: 'PACKAGE_INVALID', message: expect.stringContaining('property N value'), file: rock }]);
    expect(s.paks).toEqual([]);

    const cfgFile = path.join(dir, 'lumina-cook.json');
    await fsp.writeFile(cfgFile, JSON.stringify({ ...JSON.parse(await fsp.readFile(cfgFile, 'utf8')), cook: { onCookFailure: 'verbatim' } }));
    const v = await cookProject({ projectDir: dir });
    expect(v).toMatchObject({ ok: true, verbatim: 1, failed: 0, cooked: 0, cached: 7 });
    expect(v.problems.find((p) => p.file === rock)).toMatchObject({ code: 'PACKAGE_INVALID', severity: 'warning', message: expect.stringMatching(/^shipped verbatim: /) });
    expect(Buffer.from(await pakEntry(path.join(dir, 'Saved/Paks/Main.pak'), '/Game/Props/Rock.lasset')).equals(await fsp.readFile(rock))).toBe(true);
  });

  it('gives identical paks for identical content in different folders', async () => {
    const a = await project();
    const b = await project();
    await cookProject({ projectDir: a });
    await cookProject({ projectDir: b });
    for (const chunk of ['Main', 'Foliage']) {
      const pa = await fsp.readFile(path.join(a, `Saved/Paks/${chunk}.pak`));
      const pb = await fsp.readFile(path.join(b, `Saved/Paks/${chunk}.pak`));
      expect(pa.equals(pb)).toBe(true);
    }
  });

  it('removes outputs of assets that left the cook', async () => {
    const dir = await project();
    await cookProject({ projectDir: dir });
    await writeFixture(dir, 'Plugins/Foliage/Content/Trees/Oak.lasset', asset(g(0x31), 'Oak', { imports: [hard(g(0x30))] }));
    const s = await cookProject({ projectDir: dir });
    expect(s.assets).toBe(7);
    expect(await listFiles(path.join(dir, 'Saved/Cooked/Foliage'))).toEqual(['Trees/Oak.lasset', 'Trees/Shared.lasset']);
    expect(await pakPaths(path.join(dir, 'Saved/Paks/Foliage.pak'))).toEqual(['/AssetRegistry.bin', '/Foliage/Trees/Oak.lasset', '/ShaderCache.bin']);
  });
});

describe('cook roots', () => {
  const base = { 'Content/Maps/Start.lasset': asset(g(0xa1), 'Start', { imports: [hard(g(0xa2))] }), 'Content/Props/Box.lasset': asset(g(0xa2), 'Box') };

  async function bare(config: Record<string, unknown>, files: Record<string, Parameters<typeof writeFixture>[2]> = base): Promise<string> {
    const dir = await tempDir();
    dirs.push(dir);
    return writeProject(dir, config, files);
  }

  it('no roots at all is COOK_NO_ROOTS naming the config file', async () => {
    const dir = await bare({});
    await expect(cookProject({ projectDir: dir })).rejects.toMatchObject({
      code: 'COOK_NO_ROOTS',
      message: 'nothing to cook: no cook roots are declared and no asset is flagged Primary',
      file: path.join(dir, 'lumina-cook.json'),
    });
  });

  it('a legacy GameStartupMap becomes the root', async () => {
    const s = await cookProject({ projectDir: await bare({ GameStartupMap: '/Game/Maps/Start' }) });
    expect(s).toMatchObject({ ok: true, cooked: 2, chunks: ['Main'] });
  });

  it('an object path works as a root, and a root that does not exist is reported', async () => {
    const dir = await bare({ cookRoots: ['/Game/Maps/Start.Start', '/Game/Maps/Nope'] });
    const s = await cookProject({ projectDir: dir });
    expect(s).toMatchObject({ ok: true, cooked: 2 });
    expect(s.problems).toEqual([
      { code: 'ASSET_NOT_FOUND', message: 'no asset matches "/Game/Maps/Nope"', file: path.join(dir, 'lumina-cook.json'), field: 'cookRoots', severity: 'warning' },
    ]);
  });

  it('an asset flagged Primary is a root, in the chunk of its mount', async () => {
    const dir = await bare(
      { plugins: [{ name: 'Extra', path: 'Plugins/Extra', chunk: 'DLC1' }] },
      { ...base, 'Plugins/Extra/Content/Quest.lasset': asset(g(0xb1), 'Quest', { assetFlags: 1, imports: [hard(g(0xa2))] }) },
    );
    const s = await cookProject({ projectDir: dir });
    // Box is reached only from the plugin's Primary asset, so it ships in that chunk.
    expect(s).toMatchObject({ ok: true, cooked: 2, chunks: ['DLC1'] });
    expect(await pakPaths(path.join(dir, 'Saved/Paks/DLC1.pak'))).toEqual(['/AssetRegistry.bin', '/Extra/Quest.lasset', '/Game/Props/Box.lasset', '/ShaderCache.bin']);
  });
});


describe('the committed sample project', () => {
  it('cooks end to end into Main and Foliage paks that verify', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    await copySampleProject(dir);
    const s = await cookProject({ projectDir: dir, ci: true });
    expect(errorsOf(s)).toEqual([]);
    expect(s.ok).toBe(true);
    expect(s.chunks).toEqual(['Main', 'Foliage']);
    expect(s.strippedExports).toBeGreaterThan(0);
    for (const p of s.paks) {
      const pak = await PakReader.open(p.file);
      try {
        expect((await pak.verify()).entries).toBe(p.entries);
        expect(pak.getEntry('/AssetRegistry.bin')).toBeDefined();
      } finally {
        await pak.close();
      }
    }
    // Nothing from the disabled plugin ships.
    const all = (await Promise.all(s.paks.map((p) => pakPaths(p.file)))).flat();
    expect(all.some((p) => p.startsWith('/Experimental/'))).toBe(false);
    expect((await cookProject({ projectDir: dir, ci: true })).cooked).toBe(0);
  });
});
