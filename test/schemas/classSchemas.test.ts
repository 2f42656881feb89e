/**
 * Class schemas: loading the folder, validation errors naming the file and the JSON path, the
 * merge, and decoding tails with them, hostile tails and schemas included.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BinaryReader } from '../../src/format/BinaryReader.js';
import { BinaryWriter } from '../../src/format/BinaryWriter.js';
import { decodeNativeTail, encodeNativeTail } from '../../src/format/nativeTail.js';
import { prop, ref } from '../../src/format/packageBuilder.js';
import type { Property } from '../../src/format/packageTypes.js';
import { ClassSchemas, parseSchemaFile } from '../../src/schemas/classSchemas.js';
import { loadSchemas } from '../../src/schemas/loadSchemas.js';
import { LuminaError } from '../../src/errors.js';
import { initHash } from '../../src/util/hash.js';
import { mulberry32 } from '../helpers/rng.js';

beforeAll(initHash);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function folder(files: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-schemas-'));
  dirs.push(dir);
  for (const [rel, json] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), typeof json === 'string' ? json : JSON.stringify(json));
  }
  return dir;
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

/** The FORMAT.md example, split over two files, plus a subclass. */
const BASE = {
  version: 1,
  classes: {
    '/Script/Engine.CMyThing': {
      super: '/Script/Engine.CObject',
      native: [
        { name: 'Radius', type: 'FloatProperty' },
        { name: 'TargetObject', type: 'ObjectProperty' },
        { name: 'Corners', type: 'StructProperty', struct: 'Vector', arrayDim: 4 },
        { name: 'Parts', type: 'ArrayProperty', inner: 'StructProperty', innerStruct: '/Script/Engine.SPart' },
      ],
    },
  },
};
const PARTS = {
  version: 1,
  structs: { '/Script/Engine.SPart': { fields: [{ name: 'Owner', type: 'ObjectProperty' }, { name: 'Weight', type: 'FloatProperty' }] } },
  classes: { '/Script/Game.CSub': { super: '/Script/Engine.CMyThing', native: [{ name: 'Flag', type: 'BoolProperty' }, { name: 'Mode', type: 'EnumProperty' }, { name: 'B', type: 'ByteProperty' }] } },
};

function thingFields(owner: number): Property[] {
  return [
    prop.float('Radius', 2.5),
    prop.object('TargetObject', ref.export(1)),
    ...[0, 1, 2, 3].map((i) => ({ ...prop.vector('Corners', i, -i, 0), arrayIndex: i })),
    { name: 'Parts', arrayIndex: 0, type: 'ArrayProperty', innerType: 'StructProperty', innerStructName: '/Script/Engine.SPart', value: [[prop.object('Owner', owner), prop.float('Weight', 0.5)]] },
  ];
}
const subFields = (owner: number): Property[] => [
  ...thingFields(owner),
  prop.bool('Flag', true),
  { name: 'Mode', arrayIndex: 0, type: 'EnumProperty', enumName: null, value: 'EMode::Fast' },
  { name: 'B', arrayIndex: 0, type: 'ByteProperty', enumName: null, value: 7 },
];

const site = { className: '/Script/Game.CSub', exportName: 'Thing' };
const ctx = { version: 2, importCount: 1, exportCount: 3 };
const decode = (schemas: ClassSchemas, bytes: Uint8Array, s = site) => decodeNativeTail(new BinaryReader(bytes, 'T.lasset', 1000), schemas, s, ctx);

describe('loading the schemas folder', () => {
  it('merges files by class and walks the chain from the top ancestor down', () => {
    const schemas = loadSchemas(folder({ 'a.json': BASE, 'sub/b.json': PARTS, 'notes.txt': 'ignored' }));
    expect(schemas.chain('/Script/Game.CSub').map((c) => c.name)).toEqual(['/Script/Engine.CMyThing', '/Script/Game.CSub']);
    const bytes = encodeNativeTail(subFields(ref.import(0)));
    expect(decode(schemas, bytes)).toEqual(subFields(ref.import(0)));
    expect(Buffer.from(encodeNativeTail(decode(schemas, bytes))).equals(Buffer.from(bytes))).toBe(true);
  });

  it('a missing folder is no schemas; the same class defined twice alike is fine', () => {
    expect(loadSchemas(path.join(os.tmpdir(), 'no-such-schemas-folder')).size).toBe(0);
    expect(loadSchemas(folder({ 'a.json': BASE, 'b.json': BASE, 'c.json': PARTS })).classes.size).toBe(2);
  });

  it('a class defined twice differently is an error naming both files', () => {
    const other = structuredClone(BASE);
    other.classes['/Script/Engine.CMyThing'].native[0].type = 'DoubleProperty';
    const dir = folder({ 'a.json': BASE, 'b.json': other, 'c.json': PARTS });
    const e = catchError(() => loadSchemas(dir));
    expect(e.code).toBe('SCHEMA_INVALID');
    expect(e.file).toBe(path.join(dir, 'b.json'));
    expect(e.message).toBe(`$.classes["/Script/Engine.CMyThing"]: is defined differently in ${path.join(dir, 'a.json')}`);
  });

  it('validation errors name the file and the JSON path', () => {
    const cases: Array<[unknown, string]> = [
      ['{ nope', '$: not valid JSON'],
      [{ classes: {} }, '$.version: must be 1, found undefined'],
      [{ version: 1, classes: [] }, '$.classes: must be an object of class name -> class'],
      [{ version: 1, classes: { C: { native: [{ name: 'X', type: 'FooProperty' }] } } }, '$.classes["C"].native[0].type: "FooProperty" is not one of the fourteen property types'],
      [{ version: 1, classes: { C: { native: [{ name: 'X', type: 'StructProperty' }] } } }, '$.classes["C"].native[0].struct: a StructProperty field names its struct'],
      [{ version: 1, classes: { C: { native: [{ name: 'X', type: 'ArrayProperty', inner: 'ArrayProperty' }] } } }, '$.classes["C"].native[0].inner: "ArrayProperty" is not an array element type'],
      [{ version: 1, classes: { C: { native: [{ name: 'X', type: 'IntProperty', arrayDim: 0 }] } } }, '$.classes["C"].native[0].arrayDim: must be a whole number from 1 to 1000000'],
      [{ version: 1, classes: { C: { native: [{ name: 'X', type: 'IntProperty', arraydim: 2 }] } } }, '$.classes["C"].native[0].arraydim: is not a known key'],
      [{ version: 1, classes: { C: { native: [{ name: 'X', type: 'IntProperty' }, { name: 'X', type: 'IntProperty' }] } } }, '$.classes["C"].native[1].name: "X" is already a field here'],
      [{ version: 1, classes: { C: { native: [{ name: 'X', type: 'StructProperty', struct: 'SNope' }] } } }, '$.classes["C"].native[0].struct: "SNope" is neither a built-in struct nor a struct of any schema'],
      [{ version: 1, structs: { Vector: { fields: [] } } }, '$.structs["Vector"]: "Vector" is a built-in struct'],
      [{ version: 1, classes: { A: { super: 'B' }, B: { super: 'C' }, C: { super: 'A' } } }, '$.classes["A"].super: the super chain is a cycle: A -> B -> C -> A'],
      [{ version: 1, structs: { S: { fields: [{ name: 'T', type: 'StructProperty', struct: 'T' }] }, T: { fields: [{ name: 'S', type: 'StructProperty', struct: 'S' }] } } }, '$.structs["S"]: holds itself by value: S -> T -> S'],
    ];
    for (const [json, message] of cases) {
      const dir = folder({ 'x.json': json });
      const e = catchError(() => loadSchemas(dir));
      expect(e.code).toBe('SCHEMA_INVALID');
      expect(e.file).toBe(path.join(dir, 'x.json'));
      expect(e.message.startsWith(message)).toBe(true);
    }
    // A struct may hold itself through an array: that is finite.
    const list = { version: 1, structs: { Node: { fields: [{ name: 'Kids', type: 'ArrayProperty', inner: 'StructProperty', innerStruct: 'Node' }] } } };
    expect(loadSchemas(folder({ 'x.json': list })).structs.size).toBe(1);
  });
});

describe('hostile tails', () => {
  const schemas = ClassSchemas.merge([parseSchemaFile(BASE, 'a.json'), parseSchemaFile(PARTS, 'b.json')]);
  const good = encodeNativeTail(subFields(ref.import(0)));

  it('a schema longer than the tail: the walk runs past the export end', () => {
    const e = catchError(() => decode(schemas, good.subarray(0, good.byteLength - 1)));
    expect(e.code).toBe('NATIVE_TAIL_MISMATCH');
    expect(e.message).toBe(`the schema of /Script/Game.CSub does not fit export "Thing": B: runs past the export's end at offset ${1000 + good.byteLength - 1}`);
    expect(e.offset).toBe(1000 + good.byteLength - 1);
    expect(e.file).toBe('T.lasset');
  });

  it('a schema shorter than the tail: bytes are left at the end', () => {
    const e = catchError(() => decode(schemas, Buffer.concat([good, Buffer.from([1, 2, 3])])));
    expect(e.message).toBe('the schema of /Script/Game.CSub does not fit export "Thing": the schema\'s fields end 3 bytes before the export\'s end');
    expect(e.offset).toBe(1000 + good.byteLength);
  });

  it('counts that lie are refused before anything is allocated', () => {
    const countAt = 4 + 8 + 4 * 24;
    for (const count of [-1, 0x7fffffff, 3]) {
      const b = Buffer.from(good);
      b.writeInt32LE(count, countAt);
      const e = catchError(() => decode(schemas, b));
      expect(e.code).toBe('NATIVE_TAIL_MISMATCH');
      expect(e.offset).toBe(1000 + countAt);
    }
  });

  it('a bool byte that is not 0 or 1, a reference outside the tables', () => {
    const b = Buffer.from(good);
    b[good.byteLength - 1 - 4 - 'EMode::Fast'.length - 1] = 2;
    expect(catchError(() => decode(schemas, b)).message).toMatch(/Flag: bool byte is 2, not 0 or 1$/);
    const r = Buffer.from(good);
    r.writeBigInt64LE(9n, 4);
    expect(catchError(() => decode(schemas, r)).message).toMatch(/TargetObject: PackageIndex 9 names export 8, but there are 3 exports$/);
  });

  it('a super cycle is refused at load, so a decode never loops', () => {
    const e = catchError(() => ClassSchemas.merge([parseSchemaFile({ version: 1, classes: { A: { super: 'A', native: [] } } }, 'c.json')]));
    expect(e.message).toBe('$.classes["A"].super: the super chain is a cycle: A -> A');
  });
});

describe('fuzz: tails and schemas', () => {
  it('mutated tails decode to the same bytes or fail with a typed error naming the class', () => {
    const schemas = ClassSchemas.merge([parseSchemaFile(BASE, 'a.json'), parseSchemaFile(PARTS, 'b.json')]);
    const good = Buffer.from(encodeNativeTail(subFields(ref.import(0))));
    const rand = mulberry32(0x7a11);
    let typed = 0;
    for (let iter = 0; iter < 3000; iter++) {
      const b = Buffer.from(good);
      const n = 1 + Math.floor(rand() * 3);
      for (let k = 0; k < n; k++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
      const input = rand() < 0.2 ? b.subarray(0, Math.floor(rand() * b.length)) : b;
      try {
        const fields = decode(schemas, input);
        expect(Buffer.from(encodeNativeTail(fields)).equals(input)).toBe(true);
      } catch (e) {
        if (!(e instanceof LuminaError)) throw new Error(`iteration ${iter}: untyped ${String(e)}`);
        expect(e.code).toBe('NATIVE_TAIL_MISMATCH');
        expect(e.message.startsWith('the schema of /Script/Game.CSub does not fit export "Thing"')).toBe(true);
        typed++;
      }
    }
    expect(typed).toBeGreaterThan(500);
  });

  it('mutated schema files load or fail with SCHEMA_INVALID, never anything else', () => {
    const rand = mulberry32(0x5c4e);
    const text = JSON.stringify(PARTS) + JSON.stringify(BASE);
    const [partsText, baseText] = [JSON.stringify(PARTS), JSON.stringify(BASE)];
    const values: unknown[] = [null, 0, -1, 1.5, 1e9, '', 'ArrayProperty', 'StructProperty', 'Vector', '/Script/Game.CSub', [], {}, true];
    let invalid = 0;
    for (let iter = 0; iter < 1500; iter++) {
      const files = [JSON.parse(partsText), JSON.parse(baseText)];
      // Replace a random value somewhere in one file with a random one.
      const root = files[Math.floor(rand() * 2)];
      let node: Record<string, unknown> = root;
      for (let depth = 0; depth < 6; depth++) {
        const keys = Object.keys(node);
        if (keys.length === 0) break;
        const k = keys[Math.floor(rand() * keys.length)];
        const child = node[k];
        if (child && typeof child === 'object' && rand() < 0.75) node = child as Record<string, unknown>;
        else {
          node[k] = values[Math.floor(rand() * values.length)];
          break;
        }
      }
      try {
        const schemas = ClassSchemas.merge(files.map((f, i) => parseSchemaFile(f, `${i}.json`)));
        // Whatever loads must decode hostile bytes with typed errors only (no hang, no crash).
        for (const cls of schemas.classes.keys()) {
          try {
            decode(schemas, Buffer.from(text.slice(0, 200)), { className: cls, exportName: 'X' });
          } catch (e) {
            if (!(e instanceof LuminaError)) throw new Error(`iteration ${iter}: untyped decode error ${String(e)}`);
          }
        }
      } catch (e) {
        if (!(e instanceof LuminaError)) throw new Error(`iteration ${iter}: untyped ${String(e)}`);
        expect(e.code).toBe('SCHEMA_INVALID');
        invalid++;
      }
    }
    expect(invalid).toBeGreaterThan(200);
  });
});
