import { beforeAll, describe, expect, it } from 'vitest';
import { cookPackageBytes } from '../../cook/stripPackage.js';
import { textureTransform } from '../../cook/textureExport.js';
import { buildPackage, hard, prop, ref, soft } from '../../src/format/packageBuilder.js';
import { decodeExport, parsePackage } from '../../src/format/packageReader.js';
import { ObjectFlags, type Property } from '../../src/format/packageTypes.js';
import { encodeProperties } from '../../src/format/properties.js';
import { encodePng } from '../../samples/generate/png.js';
import { initHash } from '../../src/util/hash.js';
import { g } from './helpers.js';

beforeAll(initHash);

const opts = { editorOnlyClassPrefixes: ['/Script/Editor.'] };

/** Exports: 0 Rock (asset), 1 Transient, 2 Mesh, 3 EditorOnly, 4 editor class, 5 MarkedDestroy, 6 Lod. */
function fixture(): Uint8Array {
  const refsTo = (name: string): Property[] => [
    prop.object(`${name}Tag`, ref.export(2)),
    prop.objects(`${name}Array`, [ref.export(6), ref.export(1), ref.import(0), ref.null, ref.export(3)]),
    prop.struct(`${name}Nested`, 'LodInfo', [prop.object('Lod', ref.export(6)), prop.struct('Deeper', 'Inner', [prop.object('Gone', ref.export(4))])]),
    {
      name: `${name}Structs`,
      arrayIndex: 0,
      type: 'ArrayProperty',
      innerType: 'StructProperty',
      innerStructName: 'Slot',
      value: [[prop.object('Target', ref.export(5))], [prop.object('Target', ref.export(2))]],
    },
    prop.soft('Soft', g(0x51)),
  ];
  return buildPackage({
    imports: [hard(g(0x50)), soft(g(0x51))],
    exports: [
      { guid: g(1), name: 'Rock', className: '/Script/Engine.CStaticMesh', assetFlags: 1, properties: refsTo('Root') },
      { guid: g(2), name: 'Scratch', className: '/Script/Engine.CObject', objectFlags: ObjectFlags.Transient },
      { guid: g(3), name: 'Mesh', className: '/Script/Engine.CMeshData', properties: [prop.object('Back', ref.export(0))] },
      { guid: g(4), name: 'EdData', className: '/Script/Engine.CObject', objectFlags: ObjectFlags.EditorOnly },
      { guid: g(5), name: 'Gizmo', className: '/Script/Editor.CGizmo' },
      { guid: g(6), name: 'Dead', className: '/Script/Engine.CObject', objectFlags: ObjectFlags.MarkedDestroy | ObjectFlags.Public },
      { guid: g(7), name: 'Lod', className: '/Script/Engine.CMeshData', objectFlags: ObjectFlags.Public, properties: [prop.int('Level', 1)] },
    ],
    thumbnail: { width: 2, height: 1, data: new Uint8Array(8).fill(200) },
  });
}

describe('cookPackageBytes', () => {
  it('drops Transient, EditorOnly, MarkedDestroy and editor-class exports, the thumbnail, and renumbers every reference', async () => {
    const pkg = parsePackage(fixture(), '/p/Rock.lasset');
    const out = await cookPackageBytes(pkg, opts);
    expect(out.strippedExports).toBe(4);
    const cooked = parsePackage(out.raw, '/p/Rock.lasset');
    expect(cooked.header.version).toBe(2);
    expect(cooked.thumbnail).toBeNull();
    expect(cooked.header.thumbnailDataOffset).toBe(0);
    expect(cooked.exports.map((e) => e.objectName)).toEqual(['Rock', 'Mesh', 'Lod']);
    expect(cooked.exports.map((e) => e.objectFlags)).toEqual([0, 0, ObjectFlags.Public]);
    expect(cooked.exports[0].assetFlags).toBe(1);
    expect(cooked.imports).toEqual(pkg.imports);
    // Old export 2 (Mesh) is new 1, old 6 (Lod) new 2; 1, 3, 4 and 5 are gone.
    const root = decodeExport(cooked, 0);
    const byName = Object.fromEntries(root.map((p) => [p.name, p]));
    expect(byName.RootTag.value).toBe(ref.export(1));
    expect(byName.RootArray.value).toEqual([ref.export(2), 0, ref.import(0), 0, 0]);
    const nested = byName.RootNested.value as Property[];
    expect(nested[0].value).toBe(ref.export(2));
    expect((nested[1].value as Property[])[0].value).toBe(0);
    expect((byName.RootStructs.value as Property[][]).map((s) => s[0].value)).toEqual([0, ref.export(1)]);
    expect(byName.Soft.value).toBe(g(0x51));
    expect(decodeExport(cooked, 1)[0].value).toBe(ref.export(0));
    expect(decodeExport(cooked, 2)).toEqual([prop.int('Level', 1)]);
    // RootArray: 1 and 3; Nested.Deeper: 4; Structs: 5.
    expect(out.nulledRefs).toBe(4);
  });

  it('keeps the export bytes of a package with nothing to strip, minus the thumbnail', async () => {
    const bytes = buildPackage({ exports: [{ guid: g(1), name: 'A', className: 'C', properties: [prop.object('Self', ref.export(0))] }], thumbnail: { width: 1, height: 1, data: new Uint8Array(4) } });
    const pkg = parsePackage(bytes, '/p/A.lasset');
    const out = await cookPackageBytes(pkg, opts);
    expect(out).toMatchObject({ strippedExports: 0, nulledRefs: 0 });
    expect(parsePackage(out.raw, 'x').exportData[0]).toEqual(pkg.exportData[0]);
    expect(out.raw.byteLength).toBe(bytes.byteLength - 12);
  });

  it('honours configured class prefixes, and an empty list strips by flags only', async () => {
    const pkg = parsePackage(fixture(), '/p/Rock.lasset');
    expect((await cookPackageBytes(pkg, { editorOnlyClassPrefixes: [] })).strippedExports).toBe(3);
    expect((await cookPackageBytes(pkg, { editorOnlyClassPrefixes: ['/Script/Editor.', '/Script/Engine.CMeshData'] })).strippedExports).toBe(6);
  });

  it('fails a package whose asset export would be stripped', async () => {
    const pkg = parsePackage(buildPackage({ exports: [{ guid: g(1), name: 'Tool', className: '/Script/Editor.CTool' }] }), '/p/Tool.lasset');
    await expect(cookPackageBytes(pkg, opts)).rejects.toMatchObject({
      code: 'COOK_FAILED',
      message: 'the asset export "Tool" is class under /Script/Editor., so nothing of the asset would ship',
      file: '/p/Tool.lasset',
    });
  });

  it('fails a property stream that lies about its size', async () => {
    const good = encodeProperties([prop.int('N', 5)]);
    const bad = good.slice();
    // The IntProperty tag's size field: name(4+1) type(4+11) -> size at 20.
    new DataView(bad.buffer).setInt32(20, 3, true);
    const pkg = parsePackage(buildPackage({ exports: [{ guid: g(1), name: 'A', className: 'C', data: bad }] }), '/p/A.lasset');
    await expect(cookPackageBytes(pkg, opts)).rejects.toMatchObject({ code: 'PACKAGE_INVALID', file: '/p/A.lasset' });
  });

  it('replaces a texture export\'s SourceData with Width, Height, MipCount, Format and PlatformData', async () => {
    const png = encodePng({ width: 4, height: 2, color: 'rgba', data: new Uint8Array(32).fill(128) });
    const pkg = parsePackage(
      buildPackage({
        exports: [
          {
            guid: g(1),
            name: 'T',
            className: '/Script/Engine.CTexture',
            properties: [prop.bool('SRGB', true), prop.bytes('SourceData', png), prop.enum('Compression', 'ETextureCompression', 'ETextureCompression::UserInterface'), prop.bool('GenerateMips', true)],
          },
        ],
      }),
      '/p/T.lasset',
    );
    const out = await cookPackageBytes(pkg, { ...opts, transformExport: textureTransform({ encoder: 'rgba8' }) });
    expect(out.transformedExports).toBe(1);
    const props = decodeExport(parsePackage(out.raw, 'x'), 0);
    expect(props.map((p) => p.name)).toEqual(['SRGB', 'Width', 'Height', 'MipCount', 'Format', 'PlatformData', 'Compression', 'GenerateMips']);
    const v = Object.fromEntries(props.map((p) => [p.name, p.value]));
    expect([v.Width, v.Height, v.MipCount, v.Format]).toEqual([4, 2, 3, 'RGBA8']);
    // 4x2 + 2x1 + 1x1 RGBA8 levels.
    expect((v.PlatformData as Uint8Array).byteLength).toBe((8 + 2 + 1) * 4);
  });

  it('fails a texture whose source does not decode, naming the file', async () => {
    const pkg = parsePackage(
      buildPackage({ exports: [{ guid: g(1), name: 'T', className: '/Script/Engine.CTexture', properties: [prop.bytes('SourceData', new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]))] }] }),
      '/p/T.lasset',
    );
    await expect(cookPackageBytes(pkg, { ...opts, transformExport: textureTransform({ encoder: 'rgba8' }) })).rejects.toMatchObject({ code: 'IMAGE_INVALID', file: '/p/T.lasset' });
  });
});
