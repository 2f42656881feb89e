import { describe, expect, it, beforeAll } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildPackage, hard, prop, ref, soft } from '../../src/format/packageBuilder.js';
import { decodeExport, decodeExportData, findAssetExport, parsePackage, readPackageTables } from '../../src/format/packageReader.js';
import { toWritable, writePackage } from '../../src/format/packageWriter.js';
import { ObjectFlags, type Property } from '../../src/format/packageTypes.js';
import { encodeExportObject, encodeProperties } from '../../src/format/properties.js';
import { BinaryWriter } from '../../src/format/BinaryWriter.js';
import { LuminaError } from '../../src/errors.js';
import { mulberry32 } from '../helpers/rng.js';

const G = (n: number) => n.toString(16).padStart(32, '0');
const FILE = 'Rock.lasset';

/** Every one of the fourteen property types, built-in structs, arrays and a nested struct. */
function allProperties(): Property[] {
  return [
    prop.bool('bVisible', true),
    prop.bool('bHidden', false),
    { name: 'Layer', arrayIndex: 0, type: 'ByteProperty', enumName: null, value: 7 },
    { name: 'Mode', arrayIndex: 0, type: 'ByteProperty', enumName: 'EBlendMode', value: 'EBlendMode::Masked' },
    prop.enum('Compression', 'ETextureCompression', 'ETextureCompression::Default'),
    prop.int('Count', -42),
    { name: 'Big', arrayIndex: 0, type: 'Int64Property', value: -(2n ** 60n) },
    { name: 'Mask', arrayIndex: 0, type: 'UInt32Property', value: 0xfffffffe },
    prop.float('Scale', 1.5),
    prop.double('Precise', Math.PI),
    prop.str('Label', 'héllo "world"'),
    prop.name('Tag', 'Rocky'),
    prop.name('NoTag', null),
    prop.object('Self', ref.export(0)),
    prop.object('Mat', ref.import(0)),
    prop.object('Nothing', ref.null),
    prop.soft('Streamed', G(0xbb)),
    prop.vector('Location', 1, 2.5, -3),
    { name: 'Rot', arrayIndex: 0, type: 'StructProperty', structName: 'Rotator', value: [0, 90, 180] },
    { name: 'Tint', arrayIndex: 0, type: 'StructProperty', structName: 'Color', value: [10, 20, 30, 255] },
    { name: 'Linear', arrayIndex: 0, type: 'StructProperty', structName: 'LinearColor', value: [0.5, 0.25, 1, 1] },
    { name: 'Id', arrayIndex: 0, type: 'StructProperty', structName: 'Guid', value: G(0x1234) },
    { name: 'UV', arrayIndex: 0, type: 'StructProperty', structName: 'Vector2D', value: [0.5, 0.5] },
    { name: 'Q', arrayIndex: 0, type: 'StructProperty', structName: 'Quat', value: [0, 0, 0, 1] },
    { name: 'V4', arrayIndex: 1, type: 'StructProperty', structName: 'Vector4', value: [1, 2, 3, 4] },
    prop.struct('Body', 'BodySetup', [prop.object('Owner', ref.export(1)), prop.struct('Inner', 'InnerThing', [prop.int('Depth', 2)])]),
    prop.bytes('Blob', new Uint8Array([1, 2, 3, 250])),
    prop.objects('Parts', [ref.export(1), ref.import(0), 0]),
    { name: 'Flags', arrayIndex: 0, type: 'ArrayProperty', innerType: 'BoolProperty', value: [true, false, true] },
    { name: 'Names', arrayIndex: 0, type: 'ArrayProperty', innerType: 'NameProperty', value: ['a', null, 'c'] },
    { name: 'Strs', arrayIndex: 0, type: 'ArrayProperty', innerType: 'StrProperty', value: ['x', ''] },
    { name: 'Points', arrayIndex: 0, type: 'ArrayProperty', innerType: 'StructProperty', innerStructName: 'Vector', value: [[1, 2, 3], [4, 5, 6]] },
    {
      name: 'Sockets',
      arrayIndex: 0,
      type: 'ArrayProperty',
      innerType: 'StructProperty',
      innerStructName: 'Socket',
      value: [[prop.name('SocketName', 'Hand'), prop.object('Attached', ref.export(1))], []],
    },
    { name: 'Sizes', arrayIndex: 0, type: 'ArrayProperty', innerType: 'Int64Property', value: [1n, -1n] },
    { name: 'Weights', arrayIndex: 0, type: 'ArrayProperty', innerType: 'DoubleProperty', value: [0.1, 0.9] },
    { name: 'Softs', arrayIndex: 0, type: 'ArrayProperty', innerType: 'SoftObjectProperty', value: [G(0xbb)] },
    { name: 'Modes', arrayIndex: 0, type: 'ArrayProperty', innerType: 'EnumProperty', value: ['E::A', 'E::B'] },
  ];
}

export function samplePackage(): Uint8Array {
  return buildPackage({
    imports: [hard(G(0xaa)), soft(G(0xbb))],
    exports: [
      { guid: G(1), name: 'Rock', className: '/Script/Engine.CStaticMesh', objectFlags: ObjectFlags.Public, assetFlags: 1, properties: allProperties() },
      { guid: G(2), name: 'Rock_Body', className: '/Script/Engine.CBodySetup', properties: [prop.object('Outer', ref.export(0))] },
      { guid: G(3), name: 'Rock_EdOnly', className: '/Script/Editor.CThing', objectFlags: ObjectFlags.EditorOnly },
    ],
    thumbnail: { width: 2, height: 2, data: new Uint8Array(16).fill(200) },
  });
}

function catchError(fn: () => unknown): LuminaError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LuminaError);
    return e as LuminaError;
  }
  throw new Error('expected a LuminaError, nothing was thrown');
}

describe('package round trip', () => {
  it('write, read, write again gives identical bytes', () => {
    const a = samplePackage();
    const pkg = parsePackage(a, FILE);
    const b = writePackage(toWritable(pkg));
    expect(Buffer.from(b).equals(Buffer.from(a))).toBe(true);
  });

  it('decodes every property type and re-encodes the same stream', () => {
    const pkg = parsePackage(samplePackage(), FILE);
    const props = decodeExport(pkg, 0);
    expect(props).toEqual(allProperties());
    expect(Buffer.from(encodeProperties(props)).equals(Buffer.from(pkg.exportData[0]))).toBe(true);
  });

  it('reads header, imports, exports and the thumbnail', () => {
    const pkg = parsePackage(samplePackage(), FILE);
    expect(pkg.header.version).toBe(2);
    expect(pkg.imports).toEqual([{ guid: G(0xaa), type: 0 }, { guid: G(0xbb), type: 1 }]);
    expect(pkg.exports.map((e) => e.objectName)).toEqual(['Rock', 'Rock_Body', 'Rock_EdOnly']);
    expect(pkg.exports[2].objectFlags).toBe(ObjectFlags.EditorOnly);
    expect(pkg.thumbnail?.width).toBe(2);
    expect(findAssetExport(pkg)).toBe(0);
  });

  it('maps the version 1 display string NAME_None back to None, and writes it as empty', () => {
    // Hand-build a v1 package whose export className and a NameProperty value are NAME_None.
    const w = new BinaryWriter();
    w.fstring('Tag').fstring('NameProperty').i32(4 + 'NAME_None'.length).i32(0).fstring('NAME_None');
    w.fstring('NAME_None'); // v1 terminator
    const stream = w.finish().slice();
    const v2 = buildPackage({ exports: [{ guid: G(1), name: 'Old', className: 'X', data: stream }] });
    const v1 = Buffer.from(v2);
    v1.writeInt32LE(1, 4);
    const pkg = parsePackage(v1, 'Old.lasset');
    expect(pkg.header.version).toBe(1);
    expect(decodeExport(pkg, 0)).toEqual([prop.name('Tag', null)]);
    // Written back as version 2: None is the empty string, NAME_None never appears.
    const out = writePackage({ ...toWritable(pkg), exports: [{ ...toWritable(pkg).exports[0], data: encodeProperties(decodeExport(pkg, 0)) }] });
    expect(Buffer.from(out).includes(Buffer.from('NAME_None'))).toBe(false);
    expect(parsePackage(out, 'Old.lasset').header.version).toBe(2);
  });

  it('reads only the tables from disk', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lc-pkg-'));
    try {
      const bytes = samplePackage();
      const file = path.join(dir, FILE);
      // Garbage object data proves the table read never looks at it.
      const pkg = parsePackage(bytes, FILE);
      const tampered = Buffer.from(bytes);
      tampered.fill(0xff, pkg.header.objectDataOffset, pkg.header.thumbnailDataOffset);
      await fs.writeFile(file, tampered);
      const tables = await readPackageTables(file);
      expect(tables.exports.map((e) => e.objectName)).toEqual(['Rock', 'Rock_Body', 'Rock_EdOnly']);
      expect(tables.fileSize).toBe(bytes.byteLength);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('hostile packages', () => {
  let good: Buffer;
  let objectDataOffset: number;
  beforeAll(() => {
    good = Buffer.from(samplePackage());
    objectDataOffset = parsePackage(good, FILE).header.objectDataOffset;
  });

  const mutate = (f: (b: Buffer) => void) => {
    const b = Buffer.from(good);
    f(b);
    return b;
  };

  it('rejects a truncated header', () => {
    const e = catchError(() => parsePackage(good.subarray(0, 20), FILE));
    expect(e.toLog()).toMatchObject({ code: 'PACKAGE_TRUNCATED', file: FILE, field: 'header', offset: 0 });
    expect(e.message).toBe('header: needs 48 bytes at offset 0 but the file ends at 20');
  });

  it('rejects a wrong tag', () => {
    const e = catchError(() => parsePackage(mutate((b) => b.writeUInt32LE(0x12345678, 0)), FILE));
    expect({ code: e.code, message: e.message, offset: e.offset }).toEqual({
      code: 'PACKAGE_INVALID',
      message: 'tag: expected 0x9E2A83C1, found 0x12345678: not a Lumina package',
      offset: 0,
    });
  });

  it('rejects version 3 as written by a newer engine', () => {
    const e = catchError(() => parsePackage(mutate((b) => b.writeInt32LE(3, 4)), FILE));
    expect({ code: e.code, message: e.message }).toEqual({
      code: 'PACKAGE_VERSION',
      message: 'version 3 was written by a newer engine (this reads 1 and 2)',
    });
  });

  it('rejects counts over the cap before allocating', () => {
    const e = catchError(() => parsePackage(mutate((b) => b.writeInt32LE(2_000_000_000, 28)), FILE));
    expect({ code: e.code, message: e.message, field: e.field }).toEqual({
      code: 'PACKAGE_INVALID',
      message: 'exportCount: 2000000000 exceeds the limit of 1000000',
      field: 'exportCount',
    });
  });

  it('rejects a count the file cannot hold', () => {
    const e = catchError(() => parsePackage(mutate((b) => b.writeInt32LE(900_000, 16)), FILE));
    expect(e.code).toBe('PACKAGE_TRUNCATED');
    expect(e.field).toBe('import table');
  });

  it('rejects negative counts and offsets outside the file', () => {
    expect(catchError(() => parsePackage(mutate((b) => b.writeInt32LE(-1, 16)), FILE)).message).toBe('importCount: negative count -1');
    const e = catchError(() => parsePackage(mutate((b) => b.writeBigInt64LE(10n ** 12n, 32)), FILE));
    expect(e.field).toBe('objectDataOffset');
    expect(e.offset).toBe(32);
  });

  it('rejects an unknown dependency type', () => {
    const e = catchError(() => parsePackage(mutate((b) => b.writeUInt8(7, 48 + 16)), FILE));
    expect({ code: e.code, message: e.message, offset: e.offset }).toEqual({
      code: 'PACKAGE_INVALID',
      message: 'import[0].type: dependency type 7 is neither 0 (Hard) nor 1 (Soft)',
      offset: 64,
    });
  });

  it('rejects negative export sizes, exports past the data and overlapping exports', () => {
    const pkg = parsePackage(good, FILE);
    // Export entry layout: guid(16) name(4+4) class(4+n) offset(8) size(8)...
    const e0 = pkg.header.exportTableOffset + 16 + 4 + 'Rock'.length + 4 + '/Script/Engine.CStaticMesh'.length;
    const neg = catchError(() => parsePackage(mutate((b) => b.writeBigInt64LE(-5n, e0 + 8)), FILE));
    expect(neg.message).toBe('export[0].size: negative size -5');
    const past = catchError(() => parsePackage(mutate((b) => b.writeBigInt64LE(10n ** 9n, e0 + 8)), FILE));
    expect(past.field).toBe('export[0].size');
    // Move export 1 onto export 0's bytes.
    const e1 = e0 + 8 + 8 + 4 + 4 + 16 + 4 + 'Rock_Body'.length + 4 + '/Script/Engine.CBodySetup'.length;
    const overlap = catchError(() => parsePackage(mutate((b) => b.writeBigInt64LE(0n, e1)), FILE));
    expect(overlap.message).toMatch(/^export\[\d\]\.offset: export bytes overlap export\[\d\]/);
  });

  it('names the entry and field of a table read that fails, past the first entry too', () => {
    // Table reads go without field names first and again with them on a failure: the message is the named read's.
    const pkg = parsePackage(good, FILE);
    const e0 = pkg.header.exportTableOffset + 16 + 4 + 'Rock'.length + 4 + '/Script/Engine.CStaticMesh'.length;
    const e1 = e0 + 8 + 8 + 4 + 4 + 16 + 4 + 'Rock_Body'.length + 4 + '/Script/Engine.CBodySetup'.length;
    const className1 = e1 - '/Script/Engine.CBodySetup'.length;
    const bad = catchError(() => parsePackage(mutate((b) => b.writeUInt8(0xff, className1)), FILE));
    expect({ code: bad.code, field: bad.field, message: bad.message, offset: bad.offset }).toEqual({
      code: 'PACKAGE_INVALID',
      field: 'export[1].className',
      message: 'export[1].className: string is not valid UTF-8',
      offset: className1 - 4,
    });
    const type1 = catchError(() => parsePackage(mutate((b) => b.writeUInt8(2, 48 + 17 + 16)), FILE));
    expect(type1.message).toBe('import[1].type: dependency type 2 is neither 0 (Hard) nor 1 (Soft)');
  });

  it('rejects a property whose size lies', () => {
    // First property of export 0 is bVisible (BoolProperty, size 0). The second, bHidden, likewise.
    // Find the Layer ByteProperty's size field and make it claim more than its one byte.
    const at = good.indexOf(Buffer.from('Layer'), objectDataOffset) + 'Layer'.length + 4 + 'ByteProperty'.length;
    const over = catchError(() => decodeExport(parsePackage(mutate((b) => b.writeInt32LE(3, at)), FILE), 0));
    expect(over.code).toBe('PACKAGE_INVALID');
    expect(over.message).toBe('property Layer value: value under-runs its declared size 3 by 2 bytes');
    const count = good.indexOf(Buffer.from('Count'), objectDataOffset) + 'Count'.length + 4 + 'IntProperty'.length;
    const under = catchError(() => decodeExport(parsePackage(mutate((b) => b.writeInt32LE(2, count)), FILE), 0));
    expect(under.message).toBe('property Count value: value over-runs its declared size 2');
  });

  it('ends the stream at an unknown property type: from that tag on is the native tail', () => {
    const at = good.indexOf(Buffer.from('IntProperty'), objectDataOffset);
    const pkg = parsePackage(mutate((b) => b.write('XntProperty', at)), FILE);
    const obj = decodeExportData(pkg, 0);
    const tagAt = good.indexOf(Buffer.from('Count'), objectDataOffset) - 4;
    expect(obj.terminated).toBe(false);
    expect(pkg.header.objectDataOffset + pkg.exports[0].offset + pkg.exports[0].size - obj.tail.byteLength).toBe(tagAt);
    expect(Buffer.from(encodeExportObject(obj)).equals(Buffer.from(pkg.exportData[0]))).toBe(true);
  });
});

describe('fuzz', () => {
  it('random mutations of a valid package give only typed errors', () => {
    const good = Buffer.from(samplePackage());
    const rand = mulberry32(0x5eed);
    let typed = 0;
    for (let iter = 0; iter < 3000; iter++) {
      const b = Buffer.from(good);
      const kind = rand();
      if (kind < 0.6) {
        const n = 1 + Math.floor(rand() * 4);
        for (let k = 0; k < n; k++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
      } else if (kind < 0.8) {
        // Interesting values into a random aligned word.
        const at = Math.floor(rand() * (b.length - 8));
        const vals = [0, -1, 0x7fffffff, -0x80000000, 1_000_001, b.length, b.length + 1];
        b.writeInt32LE(vals[Math.floor(rand() * vals.length)], at);
      }
      const input = kind >= 0.8 ? b.subarray(0, Math.floor(rand() * b.length)) : b;
      try {
        const pkg = parsePackage(input, FILE);
        for (let i = 0; i < pkg.exports.length; i++) {
          // Whatever decodes (a mutation may move the stream's end into a tail) re-encodes to the same bytes.
          const obj = decodeExportData(pkg, i, () => {
            throw new Error('no NAME_None here');
          });
          expect(Buffer.from(encodeExportObject(obj)).equals(Buffer.from(pkg.exportData[i]))).toBe(true);
        }
      } catch (e) {
        if (!(e instanceof LuminaError)) throw new Error(`iteration ${iter}: untyped ${String(e)}`);
        expect(e.file).toBe(FILE);
        typed++;
      }
    }
    expect(typed).toBeGreaterThan(1000);
  });
});
