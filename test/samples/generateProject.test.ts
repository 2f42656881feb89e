import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/loadConfig.js';
import { decodeExport, decodeExportData, exportContext, findAssetExport, parsePackage } from '../../src/format/packageReader.js';
import { BinaryReader } from '../../src/format/BinaryReader.js';
import { decodeNativeTail, encodeNativeTail } from '../../src/format/nativeTail.js';
import { loadSchemas } from '../../src/schemas/loadSchemas.js';
import { DependencyType, ObjectFlags, type LoadedPackage, type Property } from '../../src/format/packageTypes.js';
import { generateProject } from '../../samples/generate/generateProject.js';
import { DISABLED_PLUGIN, ENABLED_PLUGIN, planProject } from '../../samples/generate/planProject.js';
import { hashTree, listFiles, objectRefs, pngHeader, removeDir, softGuids, tempDir } from './helpers.js';

const TEXT_EXT = /\.(rml|rcss|luau)$/;

interface Loaded {
  rel: string;
  pkg: LoadedPackage;
  props: Property[][];
}

function loadProject(root: string) {
  const files = listFiles(root);
  const packages: Loaded[] = [];
  const assetGuids = new Map<string, string>();
  for (const rel of files) {
    if (rel.endsWith('.lasset')) {
      const pkg = parsePackage(fs.readFileSync(path.join(root, rel)), rel);
      packages.push({ rel, pkg, props: pkg.exports.map((_, i) => decodeExport(pkg, i)) });
      const a = findAssetExport(pkg);
      expect(a, `${rel} has an asset export`).toBe(0);
      assetGuids.set(pkg.exports[a].objectGuid, rel);
    } else if (rel.endsWith('.lmeta')) {
      assetGuids.set(JSON.parse(fs.readFileSync(path.join(root, rel), 'utf8')).guid, rel);
    }
  }
  return { files, packages, assetGuids };
}

describe('generateProject', () => {
  let a: string;
  let b: string;
  let c: string;
  beforeAll(async () => {
    [a, b, c] = await Promise.all([tempDir('a'), tempDir('b'), tempDir('c')]);
  });
  afterAll(async () => {
    await Promise.all([removeDir(a), removeDir(b), removeDir(c)]);
  });

  it('writes byte-identical projects for the same seed, different ones for another seed', async () => {
    const ra = await generateProject({ out: a, assets: 300, seed: 42 });
    const rb = await generateProject({ out: b, assets: 300, seed: 42, concurrency: 3 });
    const rc = await generateProject({ out: c, assets: 300, seed: 43 });
    expect(ra).toEqual(rb);
    expect(ra.assets).toBe(300);
    expect(listFiles(a).length).toBe(ra.files);
    expect(hashTree(a)).toBe(hashTree(b));
    // The bytes of the first generator, before the plan became compact: benchmarks and projects
    // generated earlier stay comparable.
    expect(hashTree(a)).toBe('da7138e0dc3af34efc575f3aaa31aeac9dcf4d8e0b50aacf9dff77d0689583e6');
    expect(hashTree(c)).not.toBe(hashTree(a));
    const totalBytes = listFiles(a).reduce((n, rel) => n + fs.statSync(path.join(a, rel)).size, 0);
    expect(ra.bytes).toBe(totalBytes);
  });

  it('writes a project the config loader accepts, with cook roots that exist', () => {
    const { config, warnings } = loadConfig(a);
    expect(warnings).toEqual([]);
    expect(config.cookRoots.length).toBeGreaterThan(0);
    const plugin = config.plugins.find((p) => p.name === ENABLED_PLUGIN)!;
    expect(plugin).toMatchObject({ enabled: true, chunk: ENABLED_PLUGIN });
    expect(plugin.cookRoots.length).toBe(1);
    expect(config.plugins.find((p) => p.name === DISABLED_PLUGIN)).toMatchObject({ enabled: false });
    expect(config.mounts.map((m) => m.alias)).toEqual(['/Game', `/${ENABLED_PLUGIN}`]);
    for (const root of [...config.cookRoots, ...plugin.cookRoots]) {
      const [, mount, ...rest] = root.split('/');
      const dir = mount === 'Game' ? 'Content' : `Plugins/${mount}/Content`;
      expect(fs.existsSync(path.join(a, dir, `${rest.join('/')}.lasset`)), root).toBe(true);
    }
  });

  it('writes native tails: schema-described ones that decode exactly with its Schemas/ folder, and ones no schema covers', () => {
    const { packages } = loadProject(a);
    const schemas = loadSchemas(path.join(a, 'Schemas'));
    let decoded = 0;
    let uncovered = 0;
    for (const { rel, pkg } of packages) {
      pkg.exports.forEach((e, i) => {
        const obj = decodeExportData(pkg, i);
        if (obj.tail.byteLength === 0) return;
        if (!schemas.has(e.className)) {
          uncovered++;
          return;
        }
        const fields = decodeNativeTail(new BinaryReader(obj.tail, rel), schemas, { className: e.className!, exportName: e.objectName! }, exportContext(pkg));
        expect(Buffer.from(encodeNativeTail(fields)).equals(Buffer.from(obj.tail))).toBe(true);
        decoded++;
      });
    }
    expect(decoded).toBeGreaterThan(4);
    expect(uncovered).toBeGreaterThan(4);
  });

  it('writes packages that parse, decode and reference only generated assets', () => {
    const { files, packages, assetGuids } = loadProject(a);
    expect(assetGuids.size).toBe(300);
    const mountOf = (rel: string) => (rel.startsWith('Plugins/') ? rel.split('/')[1] : 'Game');
    const classes = new Set<string>();
    let editorOnly = 0;
    let transient = 0;
    let editorClass = 0;
    let softImports = 0;
    for (const { rel, pkg, props } of packages) {
      classes.add(pkg.exports[0].className!);
      const used = new Set<string>();
      for (const imp of pkg.imports) {
        const target = assetGuids.get(imp.guid);
        expect(target, `${rel} imports ${imp.guid}`).toBeDefined();
        // /Game and the enabled plugin never depend on the disabled plugin's content.
        if (mountOf(rel) !== DISABLED_PLUGIN) expect(mountOf(target!), `${rel} -> ${target}`).not.toBe(DISABLED_PLUGIN);
        // /Game never depends on a plugin.
        if (mountOf(rel) === 'Game') expect(mountOf(target!)).toBe('Game');
      }
      props.forEach((p, i) => {
        for (const g of softGuids(p)) {
          used.add(g);
          expect(pkg.imports.find((imp) => imp.guid === g)?.type, `${rel} soft ${g}`).toBe(DependencyType.Soft);
        }
        for (const idx of objectRefs(p)) if (idx < 0) used.add(pkg.imports[-idx - 1].guid);
        const e = pkg.exports[i];
        if (e.objectFlags & ObjectFlags.EditorOnly) editorOnly++;
        if (e.objectFlags & ObjectFlags.Transient) transient++;
        if (e.className!.startsWith('/Script/Editor.')) editorClass++;
      });
      softImports += pkg.imports.filter((i) => i.type === DependencyType.Soft).length;
      // Every import is referenced by some property: nothing in the table is decoration.
      for (const imp of pkg.imports) expect(used.has(imp.guid), `${rel} uses import ${imp.guid}`).toBe(true);

      if (pkg.exports[0].className === '/Script/Engine.CTexture') {
        const src = props[0].find((p) => p.name === 'SourceData');
        expect(src?.type).toBe('ArrayProperty');
        const h = pngHeader(src!.value as Uint8Array);
        expect(h.bitDepth).toBe(8);
        expect(h.width).toBe(16);
        expect(props[0].map((p) => p.name)).toEqual(expect.arrayContaining(['SRGB', 'Compression', 'GenerateMips']));
        const compression = props[0].find((p) => p.name === 'Compression')!;
        expect(compression).toMatchObject({ type: 'EnumProperty', enumName: 'ETextureCompression' });
        expect(['ETextureCompression::Default', 'ETextureCompression::Normalmap', 'ETextureCompression::Masks', 'ETextureCompression::UserInterface']).toContain(compression.value);
      }
    }
    expect([...classes].sort()).toEqual(
      [
        '/Script/Engine.CBlueprint',
        '/Script/Engine.CDataTable',
        '/Script/Engine.CMaterial',
        '/Script/Engine.CMaterialInstanceConstant',
        '/Script/Engine.CSoundWave',
        '/Script/Engine.CStaticMesh',
        '/Script/Engine.CTexture',
        '/Script/Engine.CWorld',
      ].sort(),
    );
    expect(editorOnly).toBeGreaterThan(0);
    expect(editorClass).toBeGreaterThan(0);
    expect(transient + editorOnly + editorClass).toBeGreaterThan(0);
    expect(softImports).toBeGreaterThan(0);
    // Text assets: each has a sidecar, and only text assets have one.
    const texts = files.filter((f) => TEXT_EXT.test(f));
    expect(texts.length).toBeGreaterThan(0);
    expect(files.filter((f) => f.endsWith('.lmeta'))).toEqual(texts.map((t) => `${t}.lmeta`).sort());
  });

  it('gives a game-shaped graph: maps fan out to many meshes, popular textures fan in', () => {
    const plan = planProject({ assets: 5000, seed: 7 });
    const assets = Array.from({ length: plan.count }, (_, i) => plan.asset(i));
    const by = (k: string) => assets.filter((x) => x.kind === k);
    const maps = by('map');
    expect(maps.length).toBe(50);
    expect(by('texture').length).toBe(2000);
    for (const m of maps) {
      const meshes = m.hard.filter((i) => ['mesh', 'blueprint'].includes(assets[i].kind));
      expect(meshes.length).toBeGreaterThanOrEqual(20);
      expect(meshes.length).toBeLessThanOrEqual(200);
    }
    // Streamed sub-levels are reached by a soft reference from a persistent map.
    const streamed = maps.filter((m) => m.streamed);
    expect(streamed.length).toBeGreaterThan(0);
    for (const s of streamed) expect(maps.some((m) => m.soft.includes(s.index))).toBe(true);
    for (const m of by('mesh')) expect(m.hard.length).toBeGreaterThanOrEqual(1);
    for (const m of by('material')) expect(m.hard.length).toBeLessThanOrEqual(6);
    for (const mi of by('materialInstance')) expect(assets[mi.hard[0]].kind).toBe('material');

    const fanIn = new Map<number, number>();
    for (const x of assets) for (const d of x.hard) fanIn.set(d, (fanIn.get(d) ?? 0) + 1);
    const textureFanIn = by('texture').map((t) => fanIn.get(t.index) ?? 0).sort((p, q) => q - p);
    expect(textureFanIn[0]).toBeGreaterThanOrEqual(20); // a few textures are used everywhere
    expect(textureFanIn[Math.floor(textureFanIn.length / 2)]).toBeLessThanOrEqual(3); // most by few
    expect(plan.cookRoots.length).toBeGreaterThan(0);
    expect(assets.some((x) => x.primary)).toBe(true);
    expect(new Set(assets.map((x) => x.guid)).size).toBe(5000);
    expect(new Set(assets.map((x) => x.file.toLowerCase())).size).toBe(5000);
  });

  it('handles the smallest projects', async () => {
    const dir = await tempDir('tiny');
    try {
      for (const n of [1, 2, 10]) {
        const out = path.join(dir, String(n));
        const r = await generateProject({ out, assets: n, seed: 1 });
        expect(r.assets).toBe(n);
        const { assetGuids } = loadProject(out);
        expect(assetGuids.size).toBe(n);
        expect(loadConfig(out).config.cookRoots.length).toBe(1);
      }
    } finally {
      await removeDir(dir);
    }
  });
});
