/**
 * The native tail (FORMAT.md "Where the stream ends"), raw float bits, the added built-in structs
 * and NAME_None in version 2 packages: on real package bytes built by the writer.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { BinaryReader } from '../../src/format/BinaryReader.js';
import { BinaryWriter } from '../../src/format/BinaryWriter.js';
import { buildPackage, prop, ref } from '../../src/format/packageBuilder.js';
import { decodeExportData, exportContext, parsePackage } from '../../src/format/packageReader.js';
import { toWritable, writePackage } from '../../src/format/packageWriter.js';
import { encodeExportObject, encodeProperties } from '../../src/format/properties.js';
import { decodeNativeTail, encodeNativeTail } from '../../src/format/nativeTail.js';
import { BUILTIN_STRUCTS, NaNBits, type Property } from '../../src/format/packageTypes.js';
import { ClassSchemas, parseSchemaFile } from '../../src/schemas/classSchemas.js';
import { LuminaError } from '../../src/errors.js';
import { initHash } from '../../src/util/hash.js';

beforeAll(initHash);

const G = (n: number) => n.toString(16).padStart(32, '0');
const FILE = 'Thing.lasset';

function one(data: Uint8Array, className = '/Script/Game.CThing'): Uint8Array {
  return buildPackage({ exports: [{ guid: G(1), name: 'Thing', className, data }] });
}

function rewrite(bytes: Uint8Array): Uint8Array {
  const pkg = parsePackage(bytes, FILE);
  return writePackage({ ...toWritable(pkg), exports: toWritable(pkg).exports.map((e, i) => ({ ...e, data: encodeExportObject(decodeExportData(pkg, i)) })) });
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

const f32bits = (b: number) => {
  const v = new DataView(new ArrayBuffer(4));
  v.setUint32(0, b, true);
  return v.getFloat32(0, true);
};

describe('the tagged stream ends, the tail is kept', () => {
  const radius = new Uint8Array([0x00, 0x00, 0x20, 0x41, 0x02, 0, 0, 0, 0, 0, 0, 0]); // 10.0f, PackageIndex 2

  it('keeps the bytes after None and writes them back (write, read, write is identical)', () => {
    const data = encodeExportObject({ properties: [prop.int('N', 5)], terminated: true, tail: radius });
    const bytes = one(data);
    const obj = decodeExportData(parsePackage(bytes, FILE), 0);
    expect(obj).toEqual({ properties: [prop.int('N', 5)], terminated: true, tail: radius });
    const again = rewrite(bytes);
    expect(Buffer.from(again).equals(Buffer.from(bytes))).toBe(true);
    expect(Buffer.from(rewrite(again)).equals(Buffer.from(bytes))).toBe(true);
  });

  it('ends the stream at a tag whose type is not one of the fourteen, rewound to its first byte', () => {
    const w = new BinaryWriter();
    w.bytes(encodeProperties([prop.int('N', 5)]).subarray(0, -4)); // no None
    const tagAt = w.pos;
    w.fstring('Radius').fstring('NotAProperty').i32(4).i32(0).f32(1.5);
    const data = w.finish().slice();
    const obj = decodeExportData(parsePackage(one(data), FILE), 0);
    expect(obj.properties).toEqual([prop.int('N', 5)]);
    expect(obj.terminated).toBe(false);
    expect(Buffer.from(obj.tail).equals(Buffer.from(data.subarray(tagAt)))).toBe(true);
    expect(Buffer.from(encodeExportObject(obj)).equals(Buffer.from(data))).toBe(true);
  });

  it('ends the stream at a tag whose declared size runs past the export', () => {
    const w = new BinaryWriter();
    w.fstring('Big').fstring('IntProperty').i32(4000).i32(0).i32(7);
    const data = w.finish().slice();
    const obj = decodeExportData(parsePackage(one(data), FILE), 0);
    expect(obj.properties).toEqual([]);
    expect(obj.terminated).toBe(false);
    expect(obj.tail.byteLength).toBe(data.byteLength);
  });

  it('takes raw native bytes that cannot even be read as a tag as the tail', () => {
    const data = new Uint8Array([0xff, 0xff, 0xff, 0x7f, 1, 2, 3]);
    const obj = decodeExportData(parsePackage(one(data), FILE), 0);
    expect(obj).toEqual({ properties: [], terminated: false, tail: data });
    expect(decodeExportData(parsePackage(one(new Uint8Array(0)), FILE), 0)).toEqual({ properties: [], terminated: false, tail: new Uint8Array(0) });
  });

  it('still rejects a property whose tag is a property but whose value lies', () => {
    const w = new BinaryWriter();
    w.fstring('N').fstring('IntProperty').i32(2).i32(0).i32(7);
    w.fstring('');
    const e = catchError(() => decodeExportData(parsePackage(one(w.finish().slice()), FILE), 0));
    expect(e.message).toBe('property N value: value over-runs its declared size 2');
  });
});

describe('exact float bits', () => {
  // NaN payloads (signalling and quiet), -0.0, the smallest denormals, infinities.
  const f64s = [0x7ff0000000000001n, 0xfff4000000000abcn, 0x7ff8000000000001n, 0x8000000000000000n, 0x0000000000000001n, 0x800fffffffffffffn, 0x7ff0000000000000n, 0xfff0000000000000n];
  const f32s = [0x7f800001, 0xff800abc, 0x7fc00001, 0x80000000, 0x00000001, 0x807fffff, 0x7f800000, 0xff800000];
  const d = (bits: bigint) => {
    const v = new DataView(new ArrayBuffer(8));
    v.setBigUint64(0, bits, true);
    const n = v.getFloat64(0, true);
    return n !== n ? new NaNBits(64, bits) : n;
  };
  const f = (bits: number) => (f32bits(bits) !== f32bits(bits) ? new NaNBits(32, BigInt(bits)) : f32bits(bits));

  function everyPlace(): Property[] {
    const vec = (i: number) => [d(f64s[i % 8]), d(f64s[(i + 1) % 8]), d(f64s[(i + 2) % 8])];
    return [
      ...f64s.map((b, i) => ({ ...prop.double(`D${i}`, 0), value: d(b) }) as Property),
      ...f32s.map((b, i) => ({ ...prop.float(`F${i}`, 0), value: f(b) }) as Property),
      { name: 'V', arrayIndex: 0, type: 'StructProperty', structName: 'Vector', value: vec(0) },
      { name: 'C', arrayIndex: 0, type: 'StructProperty', structName: 'LinearColor', value: f32s.slice(0, 4).map(f) },
      { name: 'M', arrayIndex: 0, type: 'StructProperty', structName: 'Matrix', value: [...f64s, ...f64s].map(d) },
      { name: 'B', arrayIndex: 0, type: 'StructProperty', structName: 'Box', value: [...vec(3), ...vec(5), 1] },
      { name: 'Ds', arrayIndex: 0, type: 'ArrayProperty', innerType: 'DoubleProperty', value: f64s.map(d) },
      { name: 'Fs', arrayIndex: 0, type: 'ArrayProperty', innerType: 'FloatProperty', value: f32s.map(f) },
      { name: 'Vs', arrayIndex: 0, type: 'ArrayProperty', innerType: 'StructProperty', innerStructName: 'Sphere', value: [[...vec(1), d(f64s[7])], [...vec(4), d(f64s[0])]] },
      prop.struct('Nested', 'SThing', [{ ...prop.double('Deep', 0), value: d(f64s[0]) } as Property]),
    ];
  }

  it('every float in every place survives read -> write bit for bit', () => {
    const bytes = one(encodeProperties(everyPlace()));
    const pkg = parsePackage(bytes, FILE);
    const props = decodeExportData(pkg, 0).properties;
    expect(props).toEqual(everyPlace());
    expect(Buffer.from(rewrite(bytes)).equals(Buffer.from(bytes))).toBe(true);
    // The two cases, on the raw bytes: the signalling NaNs are there as they were.
    const buf = Buffer.from(encodeProperties(props));
    expect(buf.includes(Buffer.from([0x01, 0, 0, 0, 0, 0, 0xf0, 0x7f]))).toBe(true);
    expect(buf.includes(Buffer.from([0x01, 0, 0x80, 0x7f]))).toBe(true);
  });

  it('a signalling NaN is not quieted in a native tail either', () => {
    const schemas = ClassSchemas.merge([
      parseSchemaFile({ version: 1, classes: { C: { native: [{ name: 'R', type: 'FloatProperty' }, { name: 'P', type: 'StructProperty', struct: 'Plane' }, { name: 'L', type: 'ArrayProperty', inner: 'DoubleProperty' }] } } }, 's.json'),
    ]);
    const tail = new BinaryWriter();
    tail.u32(0x7f800001).u64(0x7ff0000000000001n).u64(0x8000000000000000n).u64(1n).u64(0x7ff0000000000000n).i32(1).u64(0xfff0000000000002n);
    const raw = tail.finish().slice();
    const fields = decodeNativeTail(new BinaryReader(raw, FILE), schemas, { className: 'C', exportName: 'Thing' }, { version: 2 });
    expect(fields[0].value).toEqual(new NaNBits(32, 0x7f800001n));
    expect(Buffer.from(encodeNativeTail(fields)).equals(Buffer.from(raw))).toBe(true);
  });
});

describe('the added built-in structs', () => {
  const values: Record<string, Array<number>> = {
    IntPoint: [-3, 2147483647],
    Plane: [1, 2, 3, 4],
    Sphere: [1, 2, 3, 0.5],
    Box: [0, 0, 0, 1, 1, 1, 1],
    Box2D: [0, 0, 2, 2, 0],
    BoxSphereBounds: [0, 0, 0, 1, 2, 3, 4],
    TwoVectors: [1, 2, 3, 4, 5, 6],
    Matrix: Array.from({ length: 16 }, (_, i) => i),
  };
  const sizes: Record<string, number> = { IntPoint: 8, Plane: 32, Sphere: 32, Box: 49, Box2D: 33, BoxSphereBounds: 56, TwoVectors: 48, Matrix: 128 };

  it('are positional in tagged values, with the sizes FORMAT.md gives', () => {
    for (const [name, value] of Object.entries(values)) {
      expect(BUILTIN_STRUCTS[name].size).toBe(sizes[name]);
      const p: Property = { name: 'S', arrayIndex: 0, type: 'StructProperty', structName: name, value };
      const stream = encodeProperties([p]);
      // name + type + size + arrayIndex + structName + value + None
      expect(stream.byteLength).toBe(5 + 18 + 8 + 4 + name.length + sizes[name] + 4);
      expect(decodeExportData(parsePackage(one(stream), FILE), 0).properties).toEqual([p]);
    }
  });

  it('are positional in tails', () => {
    const native = Object.keys(values).map((name) => ({ name: `F${name}`, type: 'StructProperty', struct: name }));
    const schemas = ClassSchemas.merge([parseSchemaFile({ version: 1, classes: { C: { native } } }, 's.json')]);
    const fields: Property[] = Object.entries(values).map(([name, value]) => ({ name: `F${name}`, arrayIndex: 0, type: 'StructProperty', structName: name, value }));
    const raw = encodeNativeTail(fields);
    expect(raw.byteLength).toBe(Object.values(sizes).reduce((a, b) => a + b, 0));
    expect(decodeNativeTail(new BinaryReader(raw, FILE), schemas, { className: 'C', exportName: 'X' }, { version: 2 })).toEqual(fields);
  });
});

describe('NAME_None in a version 2 package', () => {
  it('reads as None and warns naming the file and the offset', () => {
    const w = new BinaryWriter();
    w.fstring('Tag').fstring('NameProperty').i32(4 + 9).i32(0).fstring('NAME_None');
    w.fstring('');
    const bytes = one(w.finish().slice());
    const pkg = parsePackage(bytes, FILE);
    const seen: Array<[string, number]> = [];
    expect(decodeExportData(pkg, 0, (field, offset) => seen.push([field, offset])).properties).toEqual([prop.name('Tag', null)]);
    const at = Buffer.from(bytes).indexOf(Buffer.from('NAME_None')) - 4;
    expect(seen).toEqual([['property Tag', at]]);
  });

  it('in the export table too: the package keeps a warning', () => {
    // The writer never writes NAME_None: splice it in for the className "X".
    const fixed = Buffer.from(buildPackage({ exports: [{ guid: G(1), name: 'Thing', className: 'X' }] }));
    const at = fixed.indexOf(Buffer.from([1, 0, 0, 0, 0x58])); // className FString "X"
    const v2 = Buffer.concat([fixed.subarray(0, at), Buffer.from([9, 0, 0, 0]), Buffer.from('NAME_None'), fixed.subarray(at + 5)]);
    // Every offset after the export table moved by 8.
    v2.writeBigInt64LE(v2.readBigInt64LE(32) + 8n, 32);
    const pkg = parsePackage(v2, FILE);
    expect(pkg.exports[0].className).toBe(null);
    expect(pkg.warnings).toEqual([
      { code: 'PACKAGE_NAME_NONE', message: 'export[0].className: the display string NAME_None in a version 2 package is read as None', file: FILE, field: 'export[0].className', offset: at, hint: expect.any(String) },
    ]);
  });
});

describe('references in tails', () => {
  it('an ObjectProperty in a schema struct array decodes as a PackageIndex checked against the tables', () => {
    const schemas = ClassSchemas.merge([
      parseSchemaFile(
        { version: 1, classes: { C: { native: [{ name: 'Parts', type: 'ArrayProperty', inner: 'StructProperty', innerStruct: 'SPart' }] } }, structs: { SPart: { fields: [{ name: 'Owner', type: 'ObjectProperty' }] } } },
        's.json',
      ),
    ]);
    const native: Property[] = [{ name: 'Parts', arrayIndex: 0, type: 'ArrayProperty', innerType: 'StructProperty', innerStructName: 'SPart', value: [[prop.object('Owner', ref.export(5))]] }];
    const bytes = buildPackage({ exports: [{ guid: G(1), name: 'Thing', className: 'C', native }] });
    const pkg = parsePackage(bytes, FILE);
    const obj = decodeExportData(pkg, 0);
    const e = catchError(() => decodeNativeTail(new BinaryReader(obj.tail, FILE, 100), schemas, { className: 'C', exportName: 'Thing' }, exportContext(pkg)));
    expect(e.code).toBe('NATIVE_TAIL_MISMATCH');
    expect(e.message).toBe('the schema of C does not fit export "Thing": Parts[0].Owner: PackageIndex 6 names export 5, but there are 1 exports');
    expect(e.offset).toBe(100 + 4);
  });
});
