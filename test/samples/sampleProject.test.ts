import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/loadConfig.js';
import { decodeExport, findAssetExport, parsePackage } from '../../src/format/packageReader.js';
import { AssetFlags, DependencyType, ObjectFlags, type LoadedPackage, type Property } from '../../src/format/packageTypes.js';
import { buildSampleProject, sampleAssets, SAMPLE_EXPORT_GUIDS, SAMPLE_GUIDS, SAMPLE_PROJECT_DIR } from '../../samples/buildSampleProject.js';
import { cookProject } from '../../cook/cookProject.js';
import { listFiles, listProjectFiles, objectRefs, pngHeader, removeDir, softGuids, tempDir } from './helpers.js';

const root = SAMPLE_PROJECT_DIR;
const read = (rel: string): LoadedPackage => parsePackage(fs.readFileSync(path.join(root, rel)), rel);
const prop = (props: Property[], name: string) => props.find((p) => p.name === name);

describe('committed sample project', () => {
  // The sources only: `npm run cook:sample` writes Saved/ and Intermediates/ beside them.
  const files = listProjectFiles(root);

  it('loads as a config with the Foliage plugin enabled and Experimental disabled', () => {
    const { config, warnings } = loadConfig(root);
    expect(warnings).toEqual([]);
    expect(config.name).toBe('LuminaSample');
    expect(config.cookRoots).toEqual(['/Game/Maps/Main']);
    expect(config.mounts.map((m) => [m.alias, m.chunk])).toEqual([
      ['/Game', 'Main'],
      ['/Foliage', 'Foliage'],
    ]);
    expect(config.plugins.map((p) => [p.name, p.enabled, p.cookRoots])).toEqual([
      ['Foliage', true, ['/Foliage/Maps/Forest']],
      ['Experimental', false, []],
    ]);
    expect(files.some((f) => f.startsWith('Plugins/Experimental/Content/'))).toBe(true);
  });

  it('stays small', () => {
    const bytes = files.reduce((n, f) => n + fs.statSync(path.join(root, f)).size, 0);
    expect(bytes).toBeLessThan(1024 * 1024);
  });

  it('has every .lasset parse with every export decoding, and every import resolving', () => {
    const guids = new Map<string, string>();
    const pkgs = files.filter((f) => f.endsWith('.lasset')).map((f) => [f, read(f)] as const);
    for (const [rel, pkg] of pkgs) {
      const a = findAssetExport(pkg);
      expect(a, rel).toBe(0);
      expect(guids.has(pkg.exports[a].objectGuid), `duplicate GUID in ${rel}`).toBe(false);
      guids.set(pkg.exports[a].objectGuid, rel);
      pkg.exports.forEach((_, i) => expect(() => decodeExport(pkg, i)).not.toThrow());
    }
    for (const f of files.filter((x) => x.endsWith('.lmeta'))) guids.set(JSON.parse(fs.readFileSync(path.join(root, f), 'utf8')).guid, f);
    for (const [rel, pkg] of pkgs) for (const imp of pkg.imports) expect(guids.get(imp.guid), `${rel} -> ${imp.guid}`).toBeDefined();
    // The table exported for other tests agrees with the files.
    for (const s of sampleAssets()) expect(guids.get(s.guid)).toBe(s.file.endsWith('.lasset') ? s.file : `${s.file}.lmeta`);
    expect(guids.size).toBe(sampleAssets().length);
  });

  it('gives every text asset a sidecar with a 32-hex GUID', () => {
    const texts = files.filter((f) => /\.(rml|rcss|luau)$/.test(f));
    expect(texts).toEqual(['Content/Scripts/Game.luau', 'Content/UI/MainMenu.rcss', 'Content/UI/MainMenu.rml']);
    for (const t of texts) {
      const meta = JSON.parse(fs.readFileSync(path.join(root, `${t}.lmeta`), 'utf8'));
      expect(Object.keys(meta)).toEqual(['guid']);
      expect(meta.guid).toMatch(/^[0-9a-f]{32}$/);
    }
    expect(JSON.parse(fs.readFileSync(path.join(root, 'Content/UI/MainMenu.rml.lmeta'), 'utf8')).guid).toBe(SAMPLE_GUIDS.MainMenuRml);
  });

  it('makes Main a Primary world with a soft sub-level, editor-only and transient exports', () => {
    const main = read('Content/Maps/Main.lasset');
    expect(main.thumbnail).toMatchObject({ width: 32, height: 32 });
    expect(main.exports[0]).toMatchObject({ objectGuid: SAMPLE_GUIDS.Main, className: '/Script/Engine.CWorld', assetFlags: AssetFlags.Primary });
    expect(main.imports).toEqual([
      { guid: SAMPLE_GUIDS.Rock, type: DependencyType.Hard },
      { guid: SAMPLE_GUIDS.Crate, type: DependencyType.Hard },
      { guid: SAMPLE_GUIDS.MainStreaming, type: DependencyType.Soft },
    ]);
    expect(softGuids(decodeExport(main, 0))).toEqual([SAMPLE_GUIDS.MainStreaming]);
    const names = main.exports.map((e) => e.objectName);
    const billboard = names.indexOf('EditorBillboard');
    const editorData = names.indexOf('LevelEditorData');
    const nav = names.indexOf('NavigationCache');
    expect(main.exports[billboard]).toMatchObject({ objectGuid: SAMPLE_EXPORT_GUIDS.MainEditorBillboard, className: '/Script/Editor.CEditorBillboard', objectFlags: 0 });
    expect(main.exports[editorData]).toMatchObject({ objectGuid: SAMPLE_EXPORT_GUIDS.MainLevelEditorData, objectFlags: ObjectFlags.EditorOnly });
    expect(main.exports[nav]).toMatchObject({ objectGuid: SAMPLE_EXPORT_GUIDS.MainNavigationCache, objectFlags: ObjectFlags.Transient });
    // References the cook has to null: from the level and from a struct nested in a struct.
    const level = decodeExport(main, 1);
    expect(objectRefs(level)).toEqual(expect.arrayContaining([billboard + 1, editorData + 1, nav + 1]));
    const settings = decodeExport(main, 2);
    const start = prop(settings, 'PlayerStart')!;
    expect(start).toMatchObject({ type: 'StructProperty', structName: 'PlayerStartInfo' });
    expect(objectRefs([start])).toEqual([4, billboard + 1]);
    const builtins = settings.filter((p) => p.type === 'StructProperty').map((p) => (p as { structName: string }).structName);
    expect(builtins).toEqual(expect.arrayContaining(['Vector', 'Vector2D', 'Vector4', 'Quat', 'Rotator', 'Color', 'LinearColor', 'Guid']));
    expect(prop(level, 'Actors')).toMatchObject({ type: 'ArrayProperty', innerType: 'ObjectProperty', value: [4, 5, 6] });
  });

  it('stores real PNG sources of each colour type with the documented settings', () => {
    const tex = (rel: string) => {
      const props = decodeExport(read(rel), 0);
      return {
        png: pngHeader(prop(props, 'SourceData')!.value as Uint8Array),
        srgb: prop(props, 'SRGB')!.value,
        compression: prop(props, 'Compression')!.value,
        mips: prop(props, 'GenerateMips')!.value,
      };
    };
    expect(tex('Content/Textures/T_Rock_D.lasset')).toEqual({ png: { width: 64, height: 64, bitDepth: 8, colorType: 2 }, srgb: true, compression: 'ETextureCompression::Default', mips: true });
    expect(tex('Content/Textures/T_Rock_N.lasset')).toEqual({ png: { width: 64, height: 64, bitDepth: 8, colorType: 2 }, srgb: false, compression: 'ETextureCompression::Normalmap', mips: true });
    expect(tex('Content/Textures/T_Crate_M.lasset').png.colorType).toBe(0);
    expect(tex('Content/UI/T_UI_Logo.lasset')).toMatchObject({ png: { colorType: 3 }, compression: 'ETextureCompression::UserInterface', mips: false });
    expect(tex('Plugins/Foliage/Content/Textures/T_Leaves_D.lasset').png.colorType).toBe(6);
  });

  it('shares a /Game texture with the Foliage plugin and keeps GameRules Primary outside cookRoots', () => {
    const bark = read('Plugins/Foliage/Content/Materials/M_Bark.lasset');
    expect(bark.imports.map((i) => i.guid)).toContain(SAMPLE_GUIDS.TRockN);
    const rules = read('Content/Data/GameRules.lasset');
    expect(rules.exports[0].assetFlags).toBe(AssetFlags.Primary);
  });
});

describe('buildSampleProject', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('sample');
  });
  afterAll(async () => {
    await removeDir(dir);
  });

  it('regenerates the committed files byte for byte, with nothing extra on either side', async () => {
    const written = await buildSampleProject(dir);
    expect(listFiles(dir)).toEqual(written);
    expect(listProjectFiles(root)).toEqual(written);
    for (const rel of written) {
      const want = fs.readFileSync(path.join(root, rel));
      const got = fs.readFileSync(path.join(dir, rel));
      expect(got.equals(want), `${rel} differs from the committed file: run npx tsx samples/buildSampleProject.ts`).toBe(true);
    }
  });

  it('lists the same sources after the project was cooked (cook:sample, then the tests)', async () => {
    const written = await buildSampleProject(dir);
    const summary = await cookProject({ projectDir: dir });
    expect(summary.ok).toBe(true);
    expect(listFiles(dir).some((f) => f.startsWith('Saved/Paks/'))).toBe(true);
    expect(listFiles(dir).some((f) => f.startsWith('Intermediates/'))).toBe(true);
    expect(listProjectFiles(dir)).toEqual(written);
  });
});
