/**
 * The shader cook's material scan takes a cooked package's materials from the cook's own parse
 * (the cook workers return them): a cold cook reads no package again for them, and what it records
 * is exactly what reading the files gives.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { cookPackageSource } from '../../cook/cookPackageSource.js';
import { MATERIALS_CACHE_FILE, MaterialsTable, scanMaterials, type KnownMaterials } from '../../cook/shaders/materials.js';
import { ClassSchemas } from '../../src/schemas/classSchemas.js';
import { initHash } from '../../src/util/hash.js';
import { tempDir, writeFixture } from '../cook/helpers.js';
import { hard, prop } from '../../src/format/packageBuilder.js';
import { CONFIG, GUIDS, material, writeShaderProject } from './fixtures.js';

const g = (n: number) => n.toString(16).padStart(32, '0');
/** A material whose ShaderSource has the wrong type: the scan records an error for it. */
const BAD = {
  exports: [{ guid: g(0x201), name: 'Bad', className: '/Script/Engine.CMaterial', properties: [{ name: 'ShaderSource', arrayIndex: 0, type: 'IntProperty', value: 3 }] }],
};

async function project(dir: string): Promise<string> {
  return writeShaderProject(dir, {
    'Content/Maps/Main.lasset': {
      imports: [hard(GUIDS.rock), hard(GUIDS.plain), hard(GUIDS.blur), hard(g(0x301))],
      exports: [{ guid: GUIDS.map, name: 'Main', className: '/Script/Engine.CWorld', properties: [] }],
    },
    // Two materials in one package whose primary class is not a material (a sub-object material).
    'Content/Meshes/Crate.lasset': {
      exports: [
        { guid: g(0x301), name: 'Crate', className: '/Script/Engine.CStaticMesh', properties: [] },
        ...material(g(0x302), 'CrateSkin', '/Game/Shaders/Lit.hlsl', ['USE_SHADOWS']).exports,
      ],
    },
  } as never);
}

describe('materials from the cook', () => {
  it('a cold cook records for every shipped package exactly what reading its file gives (sub-object materials too)', async () => {
    await initHash();
    const dir = await project(await tempDir());
    const c = await Cooker.open({ projectDir: dir });
    let shipped;
    try {
      const s = await c.cook();
      expect(s.problems.filter((p) => p.severity === 'error')).toEqual([]);
      shipped = c.plan().packages.map((p) => p.record);
    } finally {
      c.close();
    }
    const recorded = fs.readFileSync(path.join(dir, 'Intermediates', MATERIALS_CACHE_FILE));
    // The same packages scanned from their files, into a fresh folder (nothing known, nothing cached).
    const fresh = await tempDir();
    const read = await scanMaterials(shipped, fresh);
    expect(read.read).toBe(shipped.length);
    expect(fs.readFileSync(path.join(fresh, MATERIALS_CACHE_FILE)).equals(recorded)).toBe(true);
    // Every shipped package has a record; the materials of the ones that have some, sub-object materials too.
    const table = MaterialsTable.decode(recorded);
    expect(table.count).toBe(shipped.length);
    const blobs = Array.from({ length: table.count }, (_, i) => Buffer.from(table.blob(i)!).toString());
    expect(blobs.some((b) => b.includes('.CrateSkin'))).toBe(true);
    expect(blobs.filter((b) => b === '').length).toBeGreaterThan(0);
  });

  it('a worker\'s outcome carries the materials the scan would read, errors too', async () => {
    await initHash();
    const dir = await writeShaderProject(await tempDir(), { 'Content/Materials/Bad.lasset': BAD } as never, CONFIG);
    const settings = { editorOnlyClassPrefixes: [], compressionLevel: 6, textures: { encoder: 'rgba8' } as never, onCookFailure: 'fail' as const, schemas: ClassSchemas.empty };
    for (const [name, pkgPath] of [['Rock', '/Game/Materials/Rock'], ['Bad', '/Game/Materials/Bad']]) {
      const file = path.join(dir, 'Content', 'Materials', `${name}.lasset`);
      const o = await cookPackageSource(fs.readFileSync(file), file, settings, pkgPath);
      const record = { guid: g(1), kind: 'package', file, size: fs.statSync(file).size, hash: o.contentHash, packagePath: pkgPath, className: '/Script/Engine.CMaterial' } as never;
      const read = await scanMaterials([record], await tempDir());
      const fromCook = await scanMaterials([record], await tempDir(), { known: new Map([[g(1), o.materials!]]) });
      expect(fromCook.read).toBe(0);
      expect([...fromCook.byPackage.values()].map((v) => ({ materials: v.materials, error: v.error?.message }))).toEqual([...read.byPackage.values()].map((v) => ({ materials: v.materials, error: v.error?.message })));
      expect(read.byPackage.size).toBe(1);
    }
  });

  it('known materials are used only for the bytes they came from; the early scan reads only material packages', async () => {
    await initHash();
    const dir = await project(await tempDir());
    const file = path.join(dir, 'Content', 'Meshes', 'Crate.lasset');
    const rock = path.join(dir, 'Content', 'Materials', 'Rock.lasset');
    const rec = (f: string, guid: string, hash: string, className: string) => ({ guid, kind: 'package', file: f, size: fs.statSync(f).size, hash, packagePath: '/Game/X', className }) as never;
    const stale: KnownMaterials = new Map([[g(2), 'ffffffffffffffff']]);
    const h = (await cookPackageSource(fs.readFileSync(file), file, { editorOnlyClassPrefixes: [], compressionLevel: 6, textures: { encoder: 'rgba8' } as never, onCookFailure: 'fail', schemas: ClassSchemas.empty })).contentHash;
    // Another hash than the record's: read from the file.
    const s1 = await scanMaterials([rec(file, g(2), h, '/Script/Engine.CStaticMesh')], await tempDir(), { known: stale });
    expect(s1.read).toBe(1);
    expect(s1.byPackage.get(g(2))?.materials.length).toBe(1);
    // The early scan: the mesh is neither known nor a material: left out, unread; the material is read.
    const rockHash = (await cookPackageSource(fs.readFileSync(rock), rock, { editorOnlyClassPrefixes: [], compressionLevel: 6, textures: { encoder: 'rgba8' } as never, onCookFailure: 'fail', schemas: ClassSchemas.empty })).contentHash;
    const s2 = await scanMaterials([rec(file, g(2), h, '/Script/Engine.CStaticMesh'), rec(rock, g(3), rockHash, '/Script/Engine.CMaterial')], await tempDir(), { materialClassOnly: true });
    expect(s2.read).toBe(1);
    expect([...s2.byPackage.keys()]).toEqual([g(3)]);
  });

  it('a re-cook of a few packages, none of them a material, runs no early shader pass; one of a material does', async () => {
    await initHash();
    const dir = await project(await tempDir());
    const cookOnce = async () => {
      const warm = vi.spyOn(Cooker.prototype as unknown as { warmShaderCache: () => Promise<string[]> }, 'warmShaderCache');
      const c = await Cooker.open({ projectDir: dir });
      try {
        const s = await c.cook({ report: false });
        expect(s.problems.filter((p) => p.severity === 'error')).toEqual([]);
        return { cooked: s.cooked, early: warm.mock.calls.length, shaders: s.shaders };
      } finally {
        c.close();
        warm.mockRestore();
      }
    };
    expect((await cookOnce()).early).toBe(1);
    // The mesh (with a sub-object material, but not of the material class) edited: the shader cook after the assets finds its materials.
    await writeFixture(dir, 'Content/Meshes/Crate.lasset', {
      exports: [
        { guid: g(0x301), name: 'Crate', className: '/Script/Engine.CStaticMesh', properties: [prop.str('Label', 'edited')] },
        ...material(g(0x302), 'CrateSkin', '/Game/Shaders/Lit.hlsl', ['USE_SHADOWS', 'EDITED']).exports,
      ],
    });
    const mesh = await cookOnce();
    expect(mesh).toMatchObject({ cooked: 1, early: 0 });
    // Its new permutations compiled after the assets all the same.
    expect(mesh.shaders.compiled).toBeGreaterThan(0);
    await writeFixture(dir, 'Content/Materials/Rock.lasset', material(GUIDS.rock, 'Rock', '/Game/Shaders/Lit.hlsl', ['TINT=0.25']));
    expect(await cookOnce()).toMatchObject({ cooked: 1, early: 1 });
  });
});

