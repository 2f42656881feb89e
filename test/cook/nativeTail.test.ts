/**
 * Cooking native tails: references in schema-decoded tails are renumbered or nulled, a tail
 * without a schema is copied when nothing moves and NATIVE_TAIL_UNMAPPED when exports are lost,
 * every float bit survives, and a class schema is part of the cook key of exactly the packages
 * whose exports use that class or a subclass.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookPackageBytes } from '../../cook/stripPackage.js';
import { cookProject } from '../../cook/cookProject.js';
import { BinaryReader } from '../../src/format/BinaryReader.js';
import { decodeCooked } from '../../src/format/cookedPackage.js';
import { buildPackage, prop, ref } from '../../src/format/packageBuilder.js';
import { decodeExportData, exportContext, parsePackage } from '../../src/format/packageReader.js';
import { decodeNativeTail } from '../../src/format/nativeTail.js';
import { NaNBits, ObjectFlags, type Property } from '../../src/format/packageTypes.js';
import { ClassSchemas, parseSchemaFile } from '../../src/schemas/classSchemas.js';
import { LuminaError } from '../../src/errors.js';
import { initHash } from '../../src/util/hash.js';
import { g, tempDir, writeProject } from './helpers.js';

beforeAll(initHash);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

const SCHEMA = {
  version: 1,
  classes: {
    '/Script/Game.CBase': { super: '/Script/Engine.CObject', native: [{ name: 'Target', type: 'ObjectProperty' }, { name: 'Center', type: 'StructProperty', struct: 'Vector' }] },
    '/Script/Game.CSub': { super: '/Script/Game.CBase', native: [{ name: 'Parts', type: 'ArrayProperty', inner: 'StructProperty', innerStruct: '/Script/Game.SPart' }] },
    '/Script/Game.COther': { native: [{ name: 'Radius', type: 'FloatProperty' }] },
  },
  structs: { '/Script/Game.SPart': { fields: [{ name: 'Owner', type: 'ObjectProperty' }, { name: 'Weight', type: 'FloatProperty' }] } },
};
const schemas = () => ClassSchemas.merge([parseSchemaFile(SCHEMA, 'Schemas/game.json')]);
const opts = () => ({ editorOnlyClassPrefixes: ['/Script/Editor.'], schemas: schemas() });

const sNaN64 = new NaNBits(64, 0x7ff0000000000001n);
const sNaN32 = new NaNBits(32, 0x7f800001n);

function subTail(target: number, owners: number[]): Property[] {
  return [
    prop.object('Target', target),
    { name: 'Center', arrayIndex: 0, type: 'StructProperty', structName: 'Vector', value: [sNaN64, -0, 5e-324] },
    {
      name: 'Parts',
      arrayIndex: 0,
      type: 'ArrayProperty',
      innerType: 'StructProperty',
      innerStructName: '/Script/Game.SPart',
      value: owners.map((o) => [prop.object('Owner', o), { ...prop.float('Weight', 0), value: sNaN32 } as Property]),
    },
  ];
}

/** 0 Thing (asset, CSub), 1 Scratch (EditorOnly, stripped, placed before what refers past it), 2 Part, 3 Other (COther). */
function fixture(otherClass = '/Script/Game.COther'): Uint8Array {
  return buildPackage({
    exports: [
      { guid: g(1), name: 'Thing', className: '/Script/Game.CSub', properties: [prop.object('Tagged', ref.export(2))], native: subTail(ref.export(2), [ref.export(1), ref.export(2), ref.export(3), ref.null]) },
      { guid: g(2), name: 'Scratch', className: '/Script/Game.CBase', objectFlags: ObjectFlags.EditorOnly, native: subTail(ref.export(0), []).slice(0, 2) },
      { guid: g(3), name: 'Part', className: '/Script/Engine.CObject', properties: [{ ...prop.double('Bits', 0), value: sNaN64 } as Property] },
      { guid: g(4), name: 'Other', className: otherClass, native: [{ ...prop.float('Radius', 0), value: sNaN32 } as Property] },
    ],
  });
}

function catchError(fn: () => unknown): Promise<LuminaError> {
  return Promise.resolve()
    .then(fn)
    .then(
      () => {
        throw new Error('expected a LuminaError, nothing was thrown');
      },
      (e) => {
        expect(e).toBeInstanceOf(LuminaError);
        return e as LuminaError;
      },
    );
}

describe('cooking tails', () => {
  it('renumbers and nulls references inside schema-decoded tails, bits of every float kept', async () => {
    const out = await cookPackageBytes(parsePackage(fixture(), 'Thing.lasset'), opts());
    expect(out.strippedExports).toBe(1);
    const cooked = parsePackage(out.raw, 'Thing.lasset');
    expect(cooked.exports.map((e) => e.objectName)).toEqual(['Thing', 'Part', 'Other']);
    const obj = decodeExportData(cooked, 0);
    expect(obj.properties).toEqual([prop.object('Tagged', ref.export(1))]);
    const e = cooked.exports[0];
    const native = decodeNativeTail(new BinaryReader(obj.tail, 'x', 0), schemas(), { className: '/Script/Game.CSub', exportName: 'Thing' }, exportContext(cooked));
    // Owners were: Scratch (stripped) -> null, Part -> 1, Other -> 2, null stays null.
    expect(native).toEqual(subTail(ref.export(1), [ref.null, ref.export(1), ref.export(2), ref.null]));
    expect(out.nulledRefs).toBe(1);
    expect(e.size).toBeGreaterThan(0);
    // The raw bits are there: f64 7ff0000000000001 and f32 7f800001, not quieted.
    const raw = Buffer.from(out.raw);
    expect(raw.includes(Buffer.from([1, 0, 0, 0, 0, 0, 0xf0, 0x7f]))).toBe(true);
    expect(raw.includes(Buffer.from([1, 0, 0x80, 0x7f]))).toBe(true);
    expect(raw.includes(Buffer.from([1, 0, 0, 0, 0, 0, 0xf8, 0x7f]))).toBe(false);
    expect(raw.includes(Buffer.from([1, 0, 0xc0, 0x7f]))).toBe(false);
  });

  it('copies a tail without a schema unchanged when the package loses no export', async () => {
    const bytes = buildPackage({
      exports: [
        { guid: g(1), name: 'Thing', className: '/Script/Game.CUnknown', properties: [prop.int('N', 1)], tail: new Uint8Array([9, 8, 7, 6, 5]) },
        { guid: g(2), name: 'Ref', className: '/Script/Game.COther', properties: [prop.object('Back', ref.export(0))], native: [prop.float('Radius', 1)] },
      ],
    });
    const src = parsePackage(bytes, 'Thing.lasset');
    const out = await cookPackageBytes(src, opts());
    const cooked = parsePackage(out.raw, 'Thing.lasset');
    expect(Buffer.from(cooked.exportData[0]).equals(Buffer.from(src.exportData[0]))).toBe(true);
    expect(Buffer.from(cooked.exportData[1]).equals(Buffer.from(src.exportData[1]))).toBe(true);
  });

  it('fails with NATIVE_TAIL_UNMAPPED when a tail has no schema and the package loses an export', async () => {
    const e = await catchError(() => cookPackageBytes(parsePackage(fixture('/Script/Game.CUnknown'), 'Thing.lasset'), opts()));
    expect(e.code).toBe('NATIVE_TAIL_UNMAPPED');
    expect(e.message).toBe('export "Other" (/Script/Game.CUnknown) has 4 bytes of native data and no class schema, and the package loses exports, so its references cannot be renumbered');
    expect(e.file).toBe('Thing.lasset');
    expect(e.hint).toContain('/Script/Game.CUnknown');
  });

  it('fails with NATIVE_TAIL_MISMATCH when a schema does not fit, naming class, export and offset', async () => {
    const bytes = buildPackage({ exports: [{ guid: g(1), name: 'Thing', className: '/Script/Game.COther', tail: new Uint8Array([1, 2, 3, 4, 5]) }] });
    const e = await catchError(() => cookPackageBytes(parsePackage(bytes, 'Thing.lasset'), opts()));
    expect(e.code).toBe('NATIVE_TAIL_MISMATCH');
    expect(e.message).toBe('the schema of /Script/Game.COther does not fit export "Thing": the schema\'s fields end 1 bytes before the export\'s end');
    expect(e.offset).toBe(bytes.byteLength - 1);
  });
});

describe('cooking projects with tails', () => {
  async function project(config: Record<string, unknown> = {}): Promise<string> {
    const dir = await tempDir();
    dirs.push(dir);
    const pkg = (guid: number, name: string, className: string, native: Property[]) => ({ exports: [{ guid: g(guid), name, className, properties: [prop.int('N', guid)], native }] });
    await writeProject(
      dir,
      { cookRoots: ['/Game/Maps/Main'], ...config },
      {
        'Content/Maps/Main.lasset': {
          imports: [2, 3, 4, 5, 6].map((n) => ({ guid: g(n), type: 0 })),
          exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld' }],
        },
        'Content/A/Base.lasset': pkg(2, 'Base', '/Script/Game.CBase', subTail(ref.null, []).slice(0, 2)),
        'Content/A/Sub.lasset': pkg(3, 'Sub', '/Script/Game.CSub', subTail(ref.null, [ref.null])),
        'Content/A/Other.lasset': pkg(4, 'Other', '/Script/Game.COther', [prop.float('Radius', 3)]),
        'Content/A/Plain.lasset': pkg(5, 'Plain', '/Script/Engine.CStaticMesh', []),
        'Content/A/Stripped.lasset': {
          exports: [
            { guid: g(6), name: 'Stripped', className: '/Script/Game.CUnknown', tail: new Uint8Array([1, 2, 3]) },
            { guid: g(7), name: 'Gone', className: '/Script/Engine.CObject', objectFlags: ObjectFlags.EditorOnly },
          ],
        },
        'Schemas/game.json': JSON.stringify(SCHEMA),
      },
    );
    return dir;
  }

  it('NATIVE_TAIL_UNMAPPED fails the cook and writes no paks; verbatim ships the source with a warning', async () => {
    const dir = await project();
    const failed = await cookProject({ projectDir: dir });
    expect(failed.ok).toBe(false);
    expect(failed.problems.filter((p) => p.severity === 'error').map((p) => [p.code, path.basename(p.file ?? '')])).toEqual([['NATIVE_TAIL_UNMAPPED', 'Stripped.lasset']]);
    await expect(fsp.stat(path.join(dir, 'Saved/Paks/Main.pak'))).rejects.toThrow();

    await fsp.writeFile(path.join(dir, 'lumina-cook.json'), JSON.stringify({ cookRoots: ['/Game/Maps/Main'], cook: { onCookFailure: 'verbatim' } }));
    const shipped = await cookProject({ projectDir: dir });
    expect(shipped.ok).toBe(true);
    expect(shipped.verbatim).toBe(1);
    const cooked = await decodeCooked(await fsp.readFile(path.join(dir, 'Saved/Cooked/Game/A/Stripped.lasset')), 'x');
    expect(Buffer.from(cooked).equals(await fsp.readFile(path.join(dir, 'Content/A/Stripped.lasset')))).toBe(true);
  });

  it("editing one class's schema re-cooks the packages of that class and its subclasses, nothing else", async () => {
    const dir = await project({ cook: { onCookFailure: 'verbatim' } });
    const first = await cookProject({ projectDir: dir });
    expect(first.cooked).toBe(5);
    const again = await cookProject({ projectDir: dir });
    expect([again.cooked, again.cached]).toEqual([0, 5]);

    const edit = async (mutate: (s: typeof SCHEMA & Record<string, any>) => void) => {
      const s = structuredClone(SCHEMA) as typeof SCHEMA & Record<string, any>;
      mutate(s);
      await fsp.writeFile(path.join(dir, 'Schemas/game.json'), JSON.stringify(s));
      return cookProject({ projectDir: dir });
    };
    // The verbatim asset (Stripped) is never cached, so it is left out of the counts.
    const recooked = (s: Awaited<ReturnType<typeof cookProject>>) => s.recooked.schema ?? 0;

    // The base class: Base and Sub (a subclass) re-cook, Other, Plain and Main do not.
    const base = await edit((s) => (s.classes['/Script/Game.CBase'].native[0].name = 'Aim'));
    expect([base.cooked, recooked(base)]).toEqual([2, 2]);
    // Only the subclass's struct: Sub alone.
    const struct = await edit((s) => {
      s.classes['/Script/Game.CBase'].native[0].name = 'Aim';
      s.structs['/Script/Game.SPart'].fields[1].name = 'Mass';
    });
    expect([struct.cooked, recooked(struct)]).toEqual([1, 1]);
    // A class no package uses: nothing.
    const unrelated = await edit((s) => {
      s.classes['/Script/Game.CBase'].native[0].name = 'Aim';
      s.structs['/Script/Game.SPart'].fields[1].name = 'Mass';
      (s.classes as Record<string, unknown>)['/Script/Game.CNobody'] = { native: [{ name: 'X', type: 'IntProperty' }] };
    });
    expect([unrelated.cooked, recooked(unrelated), unrelated.cached]).toEqual([0, 0, 5]);
    // A class losing its schema: its package's key loses the schema part (the cache compares
    // stored parts instead of hashing keys: a part only the entry has must still be a change).
    const dropped = await edit((s) => {
      s.classes['/Script/Game.CBase'].native[0].name = 'Aim';
      s.structs['/Script/Game.SPart'].fields[1].name = 'Mass';
      delete (s.classes as Record<string, unknown>)['/Script/Game.COther'];
    });
    expect([dropped.cooked, recooked(dropped), dropped.cached]).toEqual([1, 1, 4]);
  });

  it('a schema folder that does not validate fails the cook naming the file and the JSON path', async () => {
    const dir = await project();
    await fsp.writeFile(path.join(dir, 'Schemas/bad.json'), JSON.stringify({ version: 1, classes: { X: { super: 'X' } } }));
    await expect(cookProject({ projectDir: dir })).rejects.toMatchObject({ code: 'SCHEMA_INVALID', file: path.join(dir, 'Schemas/bad.json'), message: '$.classes["X"].super: the super chain is a cycle: X -> X' });
  });
});

describe('the sample project with native tails', () => {
  it('cooks clean; the stripped debug export before the markers is gone from their tails, the no-schema tail is copied', async () => {
    const { buildSampleProject } = await import('../../samples/buildSampleProject.js');
    const { loadSchemas } = await import('../../src/schemas/loadSchemas.js');
    const dir = await tempDir();
    dirs.push(dir);
    await buildSampleProject(dir);
    const summary = await cookProject({ projectDir: dir });
    expect(summary.problems).toEqual([]);
    expect(summary.ok).toBe(true);
    const sampleSchemas = loadSchemas(path.join(dir, 'Schemas'));
    const cooked = parsePackage(await decodeCooked(await fsp.readFile(path.join(dir, 'Saved/Cooked/Game/Gameplay/PatrolRoute.lasset')), 'x'), 'PatrolRoute.lasset');
    expect(cooked.exports.map((e) => e.objectName)).toEqual(['PatrolRoute', 'Marker_0', 'Marker_1', 'Marker_2']);
    const tailOf = (i: number) => {
      const obj = decodeExportData(cooked, i);
      const e = cooked.exports[i];
      return decodeNativeTail(new BinaryReader(obj.tail, 'x'), sampleSchemas, { className: e.className!, exportName: e.objectName! }, exportContext(cooked));
    };
    const waypoints = tailOf(0).find((p) => p.name === 'Waypoints')!.value as Property[][];
    expect(waypoints.map((w) => w[0].value)).toEqual([ref.export(1), ref.export(2), ref.export(3)]);
    for (const i of [1, 2, 3]) {
      const t = tailOf(i);
      expect(t.find((p) => p.name === 'DebugDraw')!.value).toBe(ref.null);
      expect(t.find((p) => p.name === 'Next')!.value).toBe(ref.export(i === 3 ? 1 : i + 1));
    }
    const src = parsePackage(await fsp.readFile(path.join(dir, 'Content/Gameplay/AmbientWind.lasset')), 'a');
    const wind = parsePackage(await decodeCooked(await fsp.readFile(path.join(dir, 'Saved/Cooked/Game/Gameplay/AmbientWind.lasset')), 'x'), 'b');
    expect(Buffer.from(wind.exportData[0]).equals(Buffer.from(src.exportData[0]))).toBe(true);
    expect(decodeExportData(wind, 0).tail.byteLength).toBe(16);
  });
});

describe('fuzz: cooking mutated packages with tails', () => {
  it('gives a package that parses and decodes, or a typed error naming the file', async () => {
    let seed = 0x7a1c;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 4294967296;
    };
    const good = Buffer.from(fixture());
    let typed = 0;
    let cooked = 0;
    for (let iter = 0; iter < 1500; iter++) {
      const b = Buffer.from(good);
      const n = 1 + Math.floor(rand() * 3);
      // Mutate the object data (past the tables), where the tails are.
      for (let k = 0; k < n; k++) b[good.length - 1 - Math.floor(rand() * 700)] = Math.floor(rand() * 256);
      try {
        const out = await cookPackageBytes(parsePackage(b, 'Thing.lasset'), opts());
        const pkg = parsePackage(out.raw, 'Thing.lasset');
        for (let i = 0; i < pkg.exports.length; i++) decodeExportData(pkg, i);
        cooked++;
      } catch (e) {
        if (!(e instanceof LuminaError)) throw new Error(`iteration ${iter}: untyped ${String(e)}`);
        expect(e.file).toBe('Thing.lasset');
        typed++;
      }
    }
    expect(typed).toBeGreaterThan(300);
    expect(cooked).toBeGreaterThan(100);
  });
});

describe('a long-lived Cooker (the daemon keeps one)', () => {
  it('reads the schemas folder again at each full cook', async () => {
    const { Cooker } = await import('../../cook/Cooker.js');
    const dir = await tempDir();
    dirs.push(dir);
    await writeProject(
      dir,
      { cookRoots: ['/Game/Other'] },
      {
        'Content/Other.lasset': { exports: [{ guid: g(4), name: 'Other', className: '/Script/Game.COther', native: [prop.float('Radius', 3)] }] },
        'Schemas/game.json': JSON.stringify(SCHEMA),
      },
    );
    const cooker = await Cooker.open({ projectDir: dir });
    try {
      expect((await cooker.cook()).cooked).toBe(1);
      expect((await cooker.cook()).cooked).toBe(0);
      const edited = structuredClone(SCHEMA);
      edited.classes['/Script/Game.COther'].native[0].name = 'Size';
      await fsp.writeFile(path.join(dir, 'Schemas/game.json'), JSON.stringify(edited));
      const again = await cooker.cook();
      expect([again.cooked, again.recooked.schema]).toEqual([1, 1]);
    } finally {
      cooker.close();
    }
  });
});
