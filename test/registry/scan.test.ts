import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.js';
import { DependencyType } from '../../src/format/packageTypes.js';
import { AssetRegistry, type RegistryChange } from '../../src/registry/AssetRegistry.js';
import { bumpMtime, CLASS_MESH, g, hard, makeProject, soft, type TempProject } from './fixtures.js';

let p: TempProject;
beforeEach(() => {
  p = makeProject();
});
afterEach(() => p.cleanup());

const open = (opts: { mintSidecars?: boolean } = {}) => AssetRegistry.open({ config: p.config(), ...opts });

describe('discovery', () => {
  it('finds packages and text assets under /Game and an enabled plugin, with identity, class, flags and dependencies', async () => {
    const rock = p.pkg('Content/Materials/Rock.lasset', g(1), { imports: [hard(g(2)), soft(g(3))], flags: 1 });
    p.pkg('Content/Textures/Stone.lasset', g(2), { className: '/Script/Engine.CTexture' });
    p.pkg('Plugins/Foliage/Content/Trees/Oak.lasset', g(3), { imports: [hard(g(2))] });
    p.write('Content/UI/Hud.rml', '<rml/>');
    p.write('Content/UI/Hud.rml.lmeta', JSON.stringify({ guid: g(4) }));
    // Not assets: dotfiles, temp files of an atomic write, other extensions, dot-folders.
    p.write('Content/.hidden.lasset', 'x');
    p.write('Content/Materials/Rock.lasset.lctmp-1-abcd', 'x');
    p.write('Content/readme.txt', 'x');
    p.write('Content/.git/Stuff.lasset', 'x');

    const reg = await open();
    const r = await reg.scan();
    expect(r).toMatchObject({ assets: 4, read: 4, cached: 0, rehashed: 0, removed: 0, problems: [] });
    expect(reg.get(g(1))).toEqual({
      guid: g(1),
      name: 'Rock',
      className: CLASS_MESH,
      packagePath: '/Game/Materials/Rock',
      virtualPath: '/Game/Materials/Rock.lasset',
      file: rock,
      mount: '/Game',
      kind: 'package',
      flags: 1,
      dependencies: [
        { guid: g(2), type: DependencyType.Hard },
        { guid: g(3), type: DependencyType.Soft },
      ],
      mtimeMs: fs.statSync(rock).mtimeMs,
      size: fs.statSync(rock).size,
      hash: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(reg.get(g(3))).toMatchObject({ packagePath: '/Foliage/Trees/Oak', mount: '/Foliage' });
    expect(reg.get(g(4))).toMatchObject({
      name: 'Hud.rml',
      className: 'Text.rml',
      packagePath: '/Game/UI/Hud.rml',
      virtualPath: '/Game/UI/Hud.rml',
      kind: 'text',
      flags: 0,
      dependencies: [],
    });
    expect(reg.all().map((a) => a.guid)).toEqual([g(1), g(2), g(3), g(4)]);
  });

  it('reports scan progress: files found, how many it reads, how many are read; a warm scan reads none', async () => {
    for (let i = 1; i <= 5; i++) p.pkg(`Content/A${i}.lasset`, g(i));
    const seen: { files: number; toRead: number; read: number }[] = [];
    const reg = await open();
    await reg.scan({ onProgress: (x) => seen.push(x) });
    expect(seen[0]).toEqual({ files: 5, toRead: 5, read: expect.any(Number) });
    expect(seen.at(-1)).toEqual({ files: 5, toRead: 5, read: 5 });
    const warm: typeof seen = [];
    await (await open()).scan({ onProgress: (x) => warm.push(x) });
    expect(warm.at(-1)).toEqual({ files: 5, toRead: 0, read: 0 });
  });

  it('reports a corrupt package and a package without an asset export as one problem each, naming the file, and scans the rest', async () => {
    p.pkg('Content/A.lasset', g(1));
    const bad = p.write('Content/Broken.lasset', 'definitely not a package, but long enough for a header..........');
    const noAsset = p.pkg('Content/Renamed.lasset', g(2));
    fs.renameSync(noAsset, p.abs('Content/Moved.lasset'));
    p.pkg('Content/B.lasset', g(3));

    const reg = await open();
    const r = await reg.scan();
    expect(r.assets).toBe(2);
    // Problems come sorted by file, whatever order the parallel reads finished in.
    expect(r.problems).toEqual([
      expect.objectContaining({ code: 'PACKAGE_INVALID', file: bad, severity: 'error', message: expect.stringContaining('tag: expected 0x9E2A83C1') }),
      { code: 'ASSET_MISSING', message: 'no export is named "Moved", so the package has no asset', file: p.abs('Content/Moved.lasset'), severity: 'error', hint: expect.any(String) },
    ]);
    expect(reg.all().map((a) => a.guid)).toEqual([g(1), g(3)]);
  });

  it('walks a plugin nested inside the /Game folder once, under its own alias, and never a disabled one as /Game', async () => {
    p.pkg('Content/Rock.lasset', g(1));
    p.pkg('Content/Plugins/Inner/Content/Leaf.lasset', g(2));
    p.pkg('Content/Plugins/Off/Content/Old.lasset', g(3));
    const config = p.config({
      plugins: [
        { name: 'Inner', path: 'Content/Plugins/Inner' },
        { name: 'Off', path: 'Content/Plugins/Off', enabled: false },
      ],
    });
    const reg = await AssetRegistry.open({ config });
    const r = await reg.scan();
    expect(r).toMatchObject({ assets: 2, read: 2, problems: [] });
    expect(reg.get(g(2))?.virtualPath).toBe('/Inner/Leaf.lasset');
    expect(reg.get(g(3))).toBeUndefined();
    // Per-file updates agree with the walk.
    const leaf = p.abs('Content/Plugins/Inner/Content/Leaf.lasset');
    bumpMtime(leaf);
    await reg.updateFiles([leaf, p.abs('Content/Plugins/Off/Content/Old.lasset')]);
    expect(reg.all().map((a) => a.virtualPath)).toEqual(['/Game/Rock.lasset', '/Inner/Leaf.lasset']);
  });

  it('reports a duplicate GUID with both paths; the path that sorts first is the asset', async () => {
    const a = p.pkg('Content/A/Rock.lasset', g(7));
    const b = p.abs('Content/B/Rock.lasset');
    fs.mkdirSync(path.dirname(b), { recursive: true });
    fs.copyFileSync(a, b);
    const reg = await open();
    const r = await reg.scan();
    expect(r.problems).toEqual([
      {
        code: 'DUPLICATE_GUID',
        message: `GUID ${g(7)} is also used by ${a}`,
        file: b,
        severity: 'error',
        hint: 'a copied file keeps its GUID; re-save the copy so it gets a new one',
      },
    ]);
    expect(reg.get(g(7))?.file).toBe(a);
    expect(r.assets).toBe(1);

    // Deleting the winner promotes the copy.
    fs.rmSync(a);
    const r2 = await reg.scan();
    expect(r2.problems).toEqual([]);
    expect(reg.get(g(7))?.file).toBe(b);
    expect(reg.byPackagePath('/Game/A/Rock')).toBeUndefined();
  });
});

describe('incremental cache', () => {
  it('does not open a file whose mtime and size match the cache', async () => {
    const file = p.pkg('Content/Rock.lasset', g(1));
    p.pkg('Content/Other.lasset', g(2));
    // A whole-second mtime, so it can be put back exactly (utimes cannot restore nanoseconds).
    const t = new Date(1_700_000_000_000);
    fs.utimesSync(file, t, t);
    await (await open()).scan();

    // Same size, different GUID, mtime put back: only a read could notice.
    const size = fs.statSync(file).size;
    p.pkg('Content/Rock.lasset', g(9));
    expect(fs.statSync(file).size).toBe(size);
    fs.utimesSync(file, t, t);

    const reg = await open();
    expect(reg.cacheStatus).toBe('loaded');
    const r = await reg.scan();
    expect(r).toMatchObject({ assets: 2, read: 0, cached: 2, rehashed: 0, removed: 0 });
    expect(reg.get(g(1))?.file).toBe(file);
    expect(reg.get(g(9))).toBeUndefined();
  });

  it('rehashes a touched file without re-parsing it and reports no change', async () => {
    const file = p.pkg('Content/Rock.lasset', g(1));
    const reg = await open();
    await reg.scan();
    const changes: RegistryChange[] = [];
    reg.onChange((c) => changes.push(c));
    bumpMtime(file);
    const r = await reg.scan();
    expect(r).toMatchObject({ read: 0, cached: 0, rehashed: 1 });
    expect(reg.get(g(1))?.mtimeMs).toBe(fs.statSync(file).mtimeMs);
    expect(changes).toEqual([]);
    // The new mtime was saved: a fresh registry takes it from the cache.
    const again = await (await open()).scan();
    expect(again).toMatchObject({ read: 0, cached: 1, rehashed: 0 });
  });

  it('re-reads a file whose content changed', async () => {
    const file = p.pkg('Content/Rock.lasset', g(1));
    const reg = await open();
    await reg.scan();
    p.pkg('Content/Rock.lasset', g(1), { imports: [hard(g(5))] });
    bumpMtime(file);
    const changes: RegistryChange[] = [];
    reg.onChange((c) => changes.push(c));
    const r = await reg.scan();
    expect(r).toMatchObject({ read: 1, cached: 0, rehashed: 0 });
    expect(reg.dependencies(g(1))).toEqual([{ guid: g(5), type: DependencyType.Hard }]);
    expect(changes).toEqual([{ added: [], changed: [g(1)], removed: [] }]);
  });

  it('reaps a deleted file', async () => {
    const file = p.pkg('Content/Rock.lasset', g(1));
    p.pkg('Content/Keep.lasset', g(2));
    await (await open()).scan();
    fs.rmSync(file);
    const reg = await open();
    const changes: RegistryChange[] = [];
    reg.onChange((c) => changes.push(c));
    const r = await reg.scan();
    expect(r).toMatchObject({ assets: 1, removed: 1, cached: 1 });
    expect(reg.get(g(1))).toBeUndefined();
    expect(changes).toEqual([{ added: [g(2)], changed: [], removed: [] }]);
  });

  it("keeps a disabled plugin's entries in the cache, out of the registry, and reuses them when it is re-enabled", async () => {
    p.pkg('Content/Rock.lasset', g(1));
    p.pkg('Plugins/Foliage/Content/Oak.lasset', g(2));
    await (await open()).scan();

    const disabled = p.config({ plugins: [{ name: 'Foliage', path: 'Plugins/Foliage', enabled: false }] });
    const reg = await AssetRegistry.open({ config: disabled });
    const r = await reg.scan();
    expect(r).toMatchObject({ assets: 1, removed: 0, cached: 1 });
    expect(reg.get(g(2))).toBeUndefined();

    const enabled = p.config({ plugins: [{ name: 'Foliage', path: 'Plugins/Foliage' }] });
    const reg2 = await AssetRegistry.open({ config: enabled });
    const r2 = await reg2.scan();
    expect(r2).toMatchObject({ assets: 2, read: 0, cached: 2, removed: 0 });
    expect(reg2.get(g(2))?.packagePath).toBe('/Foliage/Oak');
  });

  it("drops the cache rows of a project's old location when the project was copied or moved, and keeps a disabled plugin's", async () => {
    p.pkg('Content/Rock.lasset', g(1));
    p.pkg('Plugins/Foliage/Content/Oak.lasset', g(2));
    p.pkg('Plugins/Moss/Content/Lichen.lasset', g(3));
    const withMoss = { plugins: [{ name: 'Foliage', path: 'Plugins/Foliage' }, { name: 'Moss', path: 'Plugins/Moss' }] };
    const first = await AssetRegistry.open({ config: p.config(withMoss) });
    expect(await first.scan()).toMatchObject({ assets: 3, read: 3 });
    first.close();
    // The copy disables Moss: its row stays for a re-enable; the origin's rows name another tree.
    const copy = fs.mkdtempSync(path.join(path.dirname(p.dir), 'lumina-reg-copy-'));
    try {
      fs.cpSync(p.dir, copy, { recursive: true, preserveTimestamps: true });
      const cfg = () => loadConfig(copy).config;
      fs.writeFileSync(
        path.join(copy, 'lumina-cook.json'),
        JSON.stringify({ name: 'RegTest', plugins: [{ name: 'Foliage', path: 'Plugins/Foliage' }, { name: 'Moss', path: 'Plugins/Moss', enabled: false }] }),
      );
      const reg = await AssetRegistry.open({ config: cfg() });
      // Moss's row here is new to this cache (it was only ever read at the origin): not read, not an asset.
      expect(await reg.scan()).toMatchObject({ assets: 2, read: 2, removed: 3 });
      expect(reg.get(g(1))?.file).toBe(path.join(copy, 'Content', 'Rock.lasset'));
      await reg.save();
      reg.close();
      const again = await AssetRegistry.open({ config: cfg() });
      expect(await again.scan()).toMatchObject({ assets: 2, read: 0, cached: 2, removed: 0 });
      again.close();

      // A disabled plugin's own rows stay through scans of the project that holds them.
      const disabled = await AssetRegistry.open({ config: p.config({ plugins: [{ name: 'Foliage', path: 'Plugins/Foliage' }, { name: 'Moss', path: 'Plugins/Moss', enabled: false }] }) });
      expect(await disabled.scan()).toMatchObject({ assets: 2, cached: 2, removed: 0 });
      disabled.close();
      const reenabled = await AssetRegistry.open({ config: p.config(withMoss) });
      expect(await reenabled.scan()).toMatchObject({ assets: 3, read: 0, cached: 3, removed: 0 });
      reenabled.close();
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  it('a warm scan from the cache finds every change made while no process ran: same-second edits, preserved-mtime copies, deletes, renames, new files, a replaced folder', async () => {
    // Whole-second mtimes, so a change can land in the same second (or on the same mtime) exactly.
    const t0 = new Date(1_700_000_000_000);
    const at = (file: string, d = t0) => (fs.utimesSync(file, d, d), file);
    const edited = at(p.pkg('Content/Edit.lasset', g(1)));
    const copied = at(p.pkg('Content/Copied.lasset', g(2)));
    const gone = at(p.pkg('Content/Gone.lasset', g(3)));
    const moved = at(p.pkg('Content/Old/Moved.lasset', g(4)));
    const inDir = at(p.pkg('Content/Swap/Inner.lasset', g(5)));
    const hud = at(p.write('Content/UI/Hud.rml', '<rml/>'));
    const hudMeta = at(p.write('Content/UI/Hud.rml.lmeta', JSON.stringify({ guid: g(6) })));
    const untouched = at(p.pkg('Content/Same.lasset', g(7)));
    const first = await open();
    expect(await first.scan()).toMatchObject({ assets: 7, read: 7 });
    first.close();

    // Same size, other content, 1 ms later in the same second.
    const size = fs.statSync(edited).size;
    p.pkg('Content/Edit.lasset', g(11));
    expect(fs.statSync(edited).size).toBe(size);
    at(edited, new Date(t0.getTime() + 1));
    // Another file copied over it keeping its mtime (cp -p, tar x): only the size tells.
    p.pkg('Content/Copied.lasset', g(12), { imports: [hard(g(7))] });
    at(copied);
    fs.rmSync(gone);
    fs.mkdirSync(p.abs('Content/New'));
    fs.renameSync(moved, p.abs('Content/New/Moved.lasset'));
    at(p.pkg('Content/Added.lasset', g(13)));
    // The folder replaced by one with a file of the same name and mtime, other GUID and size.
    fs.rmSync(p.abs('Content/Swap'), { recursive: true });
    at(p.pkg('Content/Swap/Inner.lasset', g(15), { imports: [hard(g(1)), soft(g(2))] }));
    expect(fs.statSync(inDir).mtimeMs).toBe(t0.getTime());
    // The sidecar's GUID changed in the same second; the text file did not.
    fs.writeFileSync(hudMeta, JSON.stringify({ guid: g(16) }).padEnd(fs.statSync(hudMeta).size + 1));
    at(hudMeta, new Date(t0.getTime() + 2));

    const reg = await open();
    expect(reg.cacheStatus).toBe('loaded');
    const r = await reg.scan();
    expect(r.problems).toEqual([]);
    expect(r).toMatchObject({ assets: 7, cached: 1, read: 6, removed: 2 });
    const truthReg = await AssetRegistry.open({ config: p.config(), cacheFile: path.join(p.dir, 'truth', 'AssetRegistry.assetdb'), autoSave: false });
    await truthReg.scan();
    const listing = (x: AssetRegistry) => x.all().map(({ mtimeMs, ...rest }) => rest);
    expect(listing(reg)).toEqual(listing(truthReg));
    expect(reg.all().map((x) => x.guid)).toEqual([4, 7, 11, 12, 13, 15, 16].map(g));
    expect(reg.byFile(p.abs('Content/New/Moved.lasset'))?.guid).toBe(g(4));
    expect(reg.get(g(6))).toBeUndefined();
    expect(reg.get(g(16))?.file).toBe(hud);
    expect(reg.get(g(7))?.file).toBe(untouched);
  });

  it('does not write the cache when a scan changed nothing', async () => {
    p.pkg('Content/Rock.lasset', g(1));
    const reg = await open();
    await reg.scan();
    const old = new Date(1_700_000_000_000);
    fs.utimesSync(reg.cacheFile, old, old);
    const before = fs.statSync(reg.cacheFile).mtimeMs;
    await reg.scan();
    expect(fs.statSync(reg.cacheFile).mtimeMs).toBe(before);
  });
});

describe('updateFiles', () => {
  it('handles additions, edits and deletions of one batch with a single notification', async () => {
    const a = p.pkg('Content/A.lasset', g(1));
    const b = p.pkg('Content/B.lasset', g(2));
    const reg = await open();
    await reg.scan();
    const changes: RegistryChange[] = [];
    reg.onChange((c) => changes.push(c));

    const c = p.pkg('Content/New/C.lasset', g(3), { imports: [hard(g(1))] });
    p.pkg('Content/A.lasset', g(1), { flags: 1 });
    bumpMtime(a);
    fs.rmSync(b);
    const r = await reg.updateFiles([c, a, b, path.join(p.dir, 'outside.lasset')]);
    expect(r).toMatchObject({ assets: 2, read: 2, removed: 1, problems: [] });
    expect(changes).toEqual([{ added: [g(3)], changed: [g(1)], removed: [g(2)] }]);
    // The caller gets the same change back without listening.
    expect(r.change).toEqual({ added: [g(3)], changed: [g(1)], removed: [g(2)] });
    expect(reg.referrers(g(1))).toEqual([{ guid: g(3), type: DependencyType.Hard }]);

    // The cache written by updateFiles is what a fresh registry sees.
    const fresh = await (await open()).scan();
    expect(fresh).toMatchObject({ assets: 2, read: 0, cached: 2 });
  });

  it('removes everything under a deleted folder and walks a folder that appeared', async () => {
    p.pkg('Content/Set/A.lasset', g(1));
    p.pkg('Content/Set/Deep/B.lasset', g(2));
    const reg = await open();
    await reg.scan();
    fs.rmSync(p.abs('Content/Set'), { recursive: true });
    p.pkg('Content/Moved/A.lasset', g(1));
    const changes: RegistryChange[] = [];
    reg.onChange((c) => changes.push(c));
    const r = await reg.updateFiles([p.abs('Content/Set'), p.abs('Content/Moved')]);
    expect(r).toMatchObject({ assets: 1, removed: 2, read: 1 });
    expect(changes).toEqual([{ added: [], changed: [g(1)], removed: [g(2)] }]);
    expect(reg.get(g(1))?.packagePath).toBe('/Game/Moved/A');
  });

  it('re-reads a text asset when only its sidecar is named', async () => {
    p.write('Content/UI/Hud.rml', '<rml/>');
    const meta = p.write('Content/UI/Hud.rml.lmeta', JSON.stringify({ guid: g(4) }));
    const reg = await open();
    await reg.scan();
    p.write('Content/UI/Hud.rml.lmeta', JSON.stringify({ guid: g(5) }));
    bumpMtime(meta);
    const changes: RegistryChange[] = [];
    reg.onChange((c) => changes.push(c));
    await reg.updateFiles([meta]);
    expect(reg.get(g(5))?.virtualPath).toBe('/Game/UI/Hud.rml');
    expect(changes).toEqual([{ added: [g(5)], changed: [], removed: [g(4)] }]);
  });

  it('serializes concurrent calls and notifies once per call', async () => {
    p.pkg('Content/A.lasset', g(1));
    const reg = await open();
    let n = 0;
    reg.onChange(() => n++);
    const b = p.pkg('Content/B.lasset', g(2));
    const [r1, r2] = await Promise.all([reg.scan(), reg.updateFiles([b])]);
    expect(r1.assets).toBe(2);
    expect(r2).toMatchObject({ assets: 2, cached: 1, read: 0 });
    expect(n).toBe(1);
  });
});
