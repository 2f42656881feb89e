import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DependencyType } from '../../src/format/packageTypes.js';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { findDependencyChain, resolveCookRoots } from '../../src/registry/cookRoots.js';
import { cookProject } from '../../cook/cookProject.js';
import { PakReader } from '../../pak/PakReader.js';
import { registryDeps, registryList, registryReferrers, registryScan, registryWhy } from '../../cli/commands/registry.js';
import { bumpMtime, CLASS_MESH, g, hard, makeProject, soft, type TempProject } from './fixtures.js';

let p: TempProject;

/**
 * Map -> Forest (Hard) -> Oak (Soft, plugin) -> Bark (Hard); Map -> Rock (Hard) -> Bark (Hard);
 * Loose is referenced by nobody; Sky is Primary; Hud.rml is a text asset.
 */
function layout() {
  p.pkg('Content/Maps/Map.lasset', g(1), { imports: [hard(g(2)), hard(g(5))] });
  p.pkg('Content/Env/Forest.lasset', g(2), { imports: [soft(g(3))] });
  p.pkg('Plugins/Foliage/Content/Oak.lasset', g(3), { imports: [hard(g(4))] });
  p.pkg('Content/Env/Bark.lasset', g(4));
  p.pkg('Content/Env/Rock.lasset', g(5), { imports: [hard(g(4)), hard(g(99))] });
  p.pkg('Content/Env/Loose.lasset', g(6));
  p.pkg('Plugins/Foliage/Content/Sky.lasset', g(7), { flags: 1, imports: [hard(g(3))] });
  p.write('Content/UI/Hud.rml', '<rml/>');
  p.write('Content/UI/Hud.rml.lmeta', JSON.stringify({ guid: g(8) }));
}

beforeEach(() => {
  p = makeProject({
    cookRoots: ['/Game/Maps/Map'],
    plugins: [{ name: 'Foliage', path: 'Plugins/Foliage', chunk: 'FoliageChunk', cookRoots: ['/Foliage/Oak', '/Foliage/Nope'] }],
  });
  layout();
});
afterEach(() => p.cleanup());

async function scanned() {
  const reg = await AssetRegistry.open({ config: p.config() });
  await reg.scan();
  return reg;
}

describe('queries', () => {
  it('resolves a GUID, package path, object path, virtual path and file path; anything else is ASSET_NOT_FOUND', async () => {
    const reg = await scanned();
    const rock = p.abs('Content/Env/Rock.lasset');
    for (const q of [g(5), g(5).toUpperCase(), '/Game/Env/Rock', '/Game/Env/Rock.Rock', '/Game/Env/Rock.lasset', rock, path.relative(p.dir, rock)]) {
      expect(reg.resolve(q).guid, q).toBe(g(5));
    }
    expect(reg.resolve('/Game/UI/Hud.rml').guid).toBe(g(8));
    expect(reg.byFile(rock)?.guid).toBe(g(5));
    for (const q of ['/Game/Env/Rock.Bark', '/Game/Env/Nope', g(42), 'Rock']) {
      expect(() => reg.resolve(q), q).toThrow(expect.objectContaining({ code: 'ASSET_NOT_FOUND', message: `no asset matches "${q}"` }));
    }
  });

  it('path lookups follow renames, deletes and duplicate GUIDs without an index; all() is one array until a batch changes it', async () => {
    const reg = await scanned();
    const all = reg.all();
    expect(Object.isFrozen(all)).toBe(true);
    expect(reg.all()).toBe(all);
    expect(all.map((r) => r.guid)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map(g));
    // The plugin's folder is not /Game's content, and a virtual path names one mount only.
    expect(reg.byVirtualPath('/Foliage/Oak.lasset')?.guid).toBe(g(3));
    expect(reg.byVirtualPath('/Game/Oak.lasset')).toBeUndefined();
    expect(reg.byPackagePath('/Game/UI/Hud.rml')?.guid).toBe(g(8));
    expect(reg.byPackagePath('/Game/Env/Rock.lasset')).toBeUndefined();

    // A touch that changes nothing keeps the array.
    const bark = p.abs('Content/Env/Bark.lasset');
    bumpMtime(bark);
    await reg.updateFiles([bark]);
    expect(reg.all()).toBe(all);

    // Rock moves to another folder; a copy of Loose claims Loose's GUID from a path that sorts first.
    const oldRock = p.abs('Content/Env/Rock.lasset');
    const newRock = p.abs('Content/Env2/Rock.lasset');
    fs.mkdirSync(path.dirname(newRock));
    fs.renameSync(oldRock, newRock);
    const copy = p.pkg('Content/Env/Aloose.lasset', g(6));
    await reg.updateFiles([oldRock, newRock, copy]);
    expect(() => reg.resolve('/Game/Env/Rock')).toThrow(expect.objectContaining({ code: 'ASSET_NOT_FOUND' }));
    expect(reg.byFile(oldRock)).toBeUndefined();
    expect(reg.resolve('/Game/Env2/Rock').guid).toBe(g(5));
    expect(reg.resolve('/Game/Env2/Rock.lasset').file).toBe(newRock);
    expect(reg.resolve('/Game/Env/Aloose').guid).toBe(g(6));
    // The loser of a duplicate GUID is not an asset, by any path.
    expect(reg.byPackagePath('/Game/Env/Loose')).toBeUndefined();
    expect(reg.byFile(p.abs('Content/Env/Loose.lasset'))).toBeUndefined();
    const after = reg.all();
    expect(after).not.toBe(all);
    expect(after.find((r) => r.guid === g(5))?.virtualPath).toBe('/Game/Env2/Rock.lasset');
    expect(after.find((r) => r.guid === g(6))?.file).toBe(copy);

    // A package whose extension is not lowercase is found by its package path too.
    const big = p.pkg('Content/Env/Big.lasset', g(9));
    fs.renameSync(big, p.abs('Content/Env/Big.LASSET'));
    await reg.scan();
    expect(reg.resolve('/Game/Env/Big').guid).toBe(g(9));
    expect(reg.resolve('/Game/Env/Big.LASSET').guid).toBe(g(9));
  });

  it('keeps the reverse map up to date as files change', async () => {
    const reg = await scanned();
    expect(reg.referrers(g(4))).toEqual([
      { guid: g(3), type: DependencyType.Hard },
      { guid: g(5), type: DependencyType.Hard },
    ]);
    expect(reg.referrers(g(99))).toEqual([{ guid: g(5), type: DependencyType.Hard }]);

    // Rock stops importing Bark; Loose starts (Soft); Oak is deleted.
    const rock = p.pkg('Content/Env/Rock.lasset', g(5), { imports: [hard(g(99))] });
    bumpMtime(rock);
    const loose = p.pkg('Content/Env/Loose.lasset', g(6), { imports: [soft(g(4))] });
    bumpMtime(loose);
    const oak = p.abs('Plugins/Foliage/Content/Oak.lasset');
    fs.rmSync(oak);
    await reg.updateFiles([rock, loose, oak]);
    expect(reg.referrers(g(4))).toEqual([{ guid: g(6), type: DependencyType.Soft }]);
    expect(reg.referrers(g(3))).toEqual([
      { guid: g(2), type: DependencyType.Soft },
      { guid: g(7), type: DependencyType.Hard },
    ]);
    expect(reg.dependencies(g(5))).toEqual([{ guid: g(99), type: DependencyType.Hard }]);

    // A full scan from the cache agrees with the incremental state.
    const fresh = await scanned();
    for (const guid of [g(3), g(4), g(99)]) expect(fresh.referrers(guid)).toEqual(reg.referrers(guid));
  });
});

describe('cook roots and why', () => {
  it('lists project, plugin and Primary roots with their chunks, and the declared roots that match nothing', async () => {
    const reg = await scanned();
    expect(resolveCookRoots(reg, p.config())).toEqual({
      roots: [
        { guid: g(1), packagePath: '/Game/Maps/Map', chunk: 'Main', reason: 'project' },
        { guid: g(3), packagePath: '/Foliage/Oak', chunk: 'FoliageChunk', reason: 'plugin' },
        { guid: g(7), packagePath: '/Foliage/Sky', chunk: 'FoliageChunk', reason: 'primary' },
      ],
      missing: ['/Foliage/Nope'],
    });
  });

  it('uses GameStartupMap only when no project roots are set', async () => {
    const config = p.config({ cookRoots: [], GameStartupMap: '/Game/Env/Loose', plugins: [] });
    const reg = await AssetRegistry.open({ config });
    await reg.scan();
    expect(resolveCookRoots(reg, config).roots).toEqual([{ guid: g(6), packagePath: '/Game/Env/Loose', chunk: 'Main', reason: 'startupMap' }]);
  });

  it('finds the shortest chain from a root, and null when nothing reaches the asset', async () => {
    const reg = await scanned();
    expect(findDependencyChain(reg, [g(1)], g(4))).toEqual([{ guid: g(1) }, { guid: g(5), via: DependencyType.Hard }, { guid: g(4), via: DependencyType.Hard }]);
    expect(findDependencyChain(reg, [g(1)], g(3))).toEqual([{ guid: g(1) }, { guid: g(2), via: DependencyType.Hard }, { guid: g(3), via: DependencyType.Soft }]);
    expect(findDependencyChain(reg, [g(1)], g(6))).toBeNull();
  });
});

describe('registry commands', () => {
  it('list prints one line per asset and --json data', async () => {
    const out = await registryList({ project: p.dir });
    expect(out.text.split('\n')[0]).toBe(`${g(1)}  ${CLASS_MESH}  /Game/Maps/Map`);
    expect(out.text.split('\n').filter(Boolean)).toHaveLength(8);
    expect(out.data[7]).toEqual({ guid: g(8), className: 'Text.rml', packagePath: '/Game/UI/Hud.rml', virtualPath: '/Game/UI/Hud.rml', kind: 'text', flags: 0 });
  });

  it('deps and referrers show Hard/Soft and missing targets', async () => {
    const deps = await registryDeps('/Game/Env/Rock', { project: p.dir });
    expect(deps.data.edges).toEqual([
      { guid: g(4), type: 'Hard', packagePath: '/Game/Env/Bark' },
      { guid: g(99), type: 'Hard', packagePath: null },
    ]);
    expect(deps.text).toContain(`  Hard  ${g(99)}  (missing)\n`);
    const refs = await registryReferrers(g(3), { project: p.dir });
    expect(refs.data.edges).toEqual([
      { guid: g(2), type: 'Soft', packagePath: '/Game/Env/Forest' },
      { guid: g(7), type: 'Hard', packagePath: '/Foliage/Sky' },
    ]);
    await expect(registryDeps('/Game/Nope', { project: p.dir })).rejects.toMatchObject({ code: 'ASSET_NOT_FOUND' });
  });

  it('why prints the shortest chain from any cook root', async () => {
    const why = await registryWhy('/Game/Env/Forest.Forest', { project: p.dir });
    expect(why.data.chain).toEqual([
      { guid: g(1), packagePath: '/Game/Maps/Map' },
      { guid: g(2), packagePath: '/Game/Env/Forest', via: 'Hard' },
    ]);
    // Bark is one step from the plugin root Oak but ships in Main (the map reaches it through
    // Rock), so why names a Main root: the chain of the chunk it ships in, not the shortest one.
    const bark = await registryWhy('/Game/Env/Bark', { project: p.dir });
    expect(bark.data.chunk).toBe('Main');
    expect(bark.data.root).toEqual({ guid: g(1), packagePath: '/Game/Maps/Map', chunk: 'Main', reason: 'project' });
    expect(bark.text).toBe(
      '/Game/Maps/Map (cook root: project, chunk Main)\n  -> /Game/Env/Rock (Hard)\n    -> /Game/Env/Bark (Hard)\nwarning: cook root /Foliage/Nope matches no asset\n',
    );
    const loose = await registryWhy('/Game/Env/Loose', { project: p.dir });
    expect(loose.data).toMatchObject({ root: null, chain: null });
    expect(loose.text.startsWith('/Game/Env/Loose is not reachable from any cook root (3 roots)')).toBe(true);
  });

  it('why shows no soft chain for an asset cook.soft "exclude" leaves out, and agrees with the cook', async () => {
    p.pkg('Content/Maps/Map.lasset', g(1), { imports: [hard(g(2)), hard(g(5)), soft(g(9))] });
    p.pkg('Content/Env/Fog.lasset', g(9));
    const included = await registryWhy('/Game/Env/Fog', { project: p.dir });
    expect(included.data).toMatchObject({ chunk: 'Main', softExcluded: false, chain: [{ guid: g(1) }, { guid: g(9), via: 'Soft' }] });

    p.config({ cook: { soft: 'exclude' } });
    const fog = await registryWhy('/Game/Env/Fog', { project: p.dir });
    expect(fog.data).toMatchObject({ chunk: null, root: null, chain: null, softExcluded: true });
    expect(fog.text.split('\n')[0]).toBe('/Game/Env/Fog is not cooked: only Soft references lead to it and cook.soft is "exclude"');
    // Forest -> Oak is Soft, but Oak is a plugin root itself: it ships in its chunk, from itself.
    const oak = await registryWhy('/Foliage/Oak', { project: p.dir });
    expect(oak.data).toMatchObject({ chunk: 'FoliageChunk', chain: [{ guid: g(3), packagePath: '/Foliage/Oak' }] });

    // Every asset: why's chunk is the pak the cook puts it in (Rock's missing Hard dependency
    // would fail the cook, so it goes first).
    p.pkg('Content/Env/Rock.lasset', g(5), { imports: [hard(g(4))] });
    const summary = await cookProject({ projectDir: p.dir });
    expect(summary.ok).toBe(true);
    const shippedIn = new Map<string, string>();
    for (const pak of summary.paks) {
      const r = await PakReader.open(pak.file);
      for (const e of r.entries) shippedIn.set(e.path, pak.chunk);
      await r.close();
    }
    for (const rel of ['Content/Maps/Map.lasset', 'Content/Env/Forest.lasset', 'Plugins/Foliage/Content/Oak.lasset', 'Content/Env/Bark.lasset', 'Content/Env/Rock.lasset', 'Content/Env/Loose.lasset', 'Plugins/Foliage/Content/Sky.lasset', 'Content/Env/Fog.lasset', 'Content/UI/Hud.rml']) {
      const why = await registryWhy(p.abs(rel), { project: p.dir });
      const vpath = rel.replace(/^Content\//, '/Game/').replace(/^Plugins\/Foliage\/Content\//, '/Foliage/');
      expect(why.data.chunk, rel).toBe(shippedIn.get(vpath) ?? null);
      if (why.data.root) expect(why.data.root.chunk, rel).toBe(why.data.chunk);
    }
  });

  it('scan --ci fails on a missing sidecar without minting it; plain scan mints it', async () => {
    p.write('Content/UI/New.rcss', 'a {}');
    const ci = await registryScan({ project: p.dir, ci: true });
    expect(ci.firstError).toMatchObject({ code: 'LMETA_MISSING', file: p.abs('Content/UI/New.rcss') });
    expect(ci.text).toContain('[LMETA_MISSING] Content/UI/New.rcss: text asset has no .lmeta sidecar');
    expect(fs.existsSync(p.abs('Content/UI/New.rcss.lmeta'))).toBe(false);
    const plain = await registryScan({ project: p.dir });
    expect(plain.firstError).toBeUndefined();
    expect(plain.data).toMatchObject({ assets: 9, problems: [] });
    expect(fs.existsSync(p.abs('Content/UI/New.rcss.lmeta'))).toBe(true);
  });
});
