/**
 * The cook strips and renumbers most exports in place (a walk over their bytes and fixed-width
 * PackageIndex patches) instead of decoding and re-encoding them. Both paths must give the same
 * result for every package: the same cooked bytes, counts and warnings, or the same typed error.
 * Held on the sample project (native tails from class schemas included), a generated project with
 * more classes stripped than the default so most packages renumber, hand-made packages with the
 * odd spellings (non-ASCII, NAME_None, built-ins, soft references, nesting), and every byte of
 * small packages' object data changed.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookPackageBytes, type StripOptions } from '../../cook/stripPackage.js';
import { TEXTURE_CLASS } from '../../cook/textureClass.js';
import { textureTransform } from '../../cook/textureExport.js';
import { generateProject } from '../../samples/index.js';
import { buildPackage, hard, prop, ref, soft } from '../../src/format/packageBuilder.js';
import { parsePackage } from '../../src/format/packageReader.js';
import { scanExportObject } from '../../src/format/exportScan.js';
import { ObjectFlags, type Property } from '../../src/format/packageTypes.js';
import { ClassSchemas } from '../../src/schemas/classSchemas.js';
import { loadSchemas } from '../../src/schemas/loadSchemas.js';
import { initHash } from '../../src/util/hash.js';
import { REPO } from '../helpers/runCli.js';
import { g, tempDir } from './helpers.js';

beforeAll(initHash);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

function lassets(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) => f.endsWith('.lasset')).map((f) => path.join(dir, f)).sort();
}

/** The cook of `bytes` one way: its result, or its error as plain data. */
async function cookOneWay(bytes: Uint8Array, file: string, opts: StripOptions, inPlace: boolean): Promise<unknown> {
  try {
    const r = await cookPackageBytes(parsePackage(bytes, file), { ...opts, inPlace });
    // Hex: a string compares at once, a Buffer through toEqual byte by byte.
    return { raw: Buffer.from(r.raw).toString('hex'), strippedExports: r.strippedExports, nulledRefs: r.nulledRefs, transformedExports: r.transformedExports, warnings: r.warnings };
  } catch (e) {
    const { code, message, file: f, offset, field } = e as { code?: string; message: string; file?: string; offset?: number; field?: string };
    return { error: { code, message, file: f, offset, field } };
  }
}

/** Both paths agree; returns the result. */
async function agree(bytes: Uint8Array, file: string, opts: StripOptions): Promise<unknown> {
  const decoded = await cookOneWay(bytes, file, opts, false);
  expect(await cookOneWay(bytes, file, opts, true), file).toEqual(decoded);
  return decoded;
}

const texture = { transformExport: textureTransform({ encoder: 'rgba8' }), transformsClass: (c: string | null) => c === TEXTURE_CLASS };

describe('stripping in place gives what decoding and re-encoding gave', () => {
  it('every package of the sample project, with its class schemas (native tails), default and wider stripping', async () => {
    const root = path.join(REPO, 'samples/project');
    const schemas = loadSchemas(path.join(root, 'Schemas'));
    const files = lassets(root);
    expect(files.length).toBeGreaterThan(20);
    let renumbered = 0;
    for (const prefixes of [['/Script/Editor.'], ['/Script/Editor.', '/Script/Engine.CStaticMeshComponent', '/Script/Engine.CBodySetup', '/Script/Engine.CMaterialExpression']]) {
      for (const f of files) {
        const r = (await agree(fs.readFileSync(f), f, { editorOnlyClassPrefixes: prefixes, schemas, ...texture })) as { strippedExports?: number };
        if (r.strippedExports) renumbered++;
      }
    }
    expect(renumbered).toBeGreaterThan(5);
  });

  it('every package of a generated project, with most packages renumbered, and the walk vouches for nearly every export', async () => {
    const root = await tempDir('lumina-inplace-');
    dirs.push(root);
    await generateProject({ out: root, assets: 600, seed: 11, textureEncoder: 'rgba8' });
    const schemas = fs.existsSync(path.join(root, 'Schemas')) ? loadSchemas(path.join(root, 'Schemas')) : ClassSchemas.empty;
    const opts: StripOptions = { editorOnlyClassPrefixes: ['/Script/Editor.', '/Script/Engine.CBodySetup', '/Script/Engine.CMaterialExpressionTextureSample', '/Script/Engine.CStaticMeshComponent'], schemas, ...texture };
    let exports = 0;
    let walked = 0;
    let stripped = 0;
    for (const f of lassets(root)) {
      const bytes = fs.readFileSync(f);
      const r = (await agree(bytes, f, opts)) as { strippedExports?: number };
      if (r.strippedExports) stripped++;
      const pkg = parsePackage(bytes, f);
      for (const data of pkg.exportData) {
        exports++;
        if (scanExportObject(data, { importCount: pkg.imports.length, exportCount: pkg.exports.length, imports: pkg.imports })) walked++;
      }
    }
    expect(stripped).toBeGreaterThan(50);
    expect(walked / exports).toBeGreaterThan(0.95);
  });

  /** Export 0 (asset) refers to everything; 1 is stripped; the rest are referred to across it. */
  function oddPackage(extra: Property[] = []): Uint8Array {
    const nested: Property[] = [prop.object('Inner', ref.export(3)), prop.struct('Deeper', 'SDeep', [prop.objects('More', [ref.export(2), ref.export(1), ref.import(0), ref.null])])];
    const props: Property[] = [
      prop.object('Self', ref.export(0)),
      prop.object('Gone', ref.export(1)),
      prop.object('Kept', ref.export(3)),
      prop.object('Import', ref.import(1)),
      prop.soft('Soft', g(21)),
      prop.soft('NoSoft', '00000000000000000000000000000000'),
      prop.objects('Many', [ref.export(3), ref.export(1), ref.export(2), ref.import(0)]),
      prop.struct('Nested', 'SThing', nested),
      { name: 'Structs', arrayIndex: 2, type: 'ArrayProperty', innerType: 'StructProperty', innerStructName: 'SPart', value: [nested, [prop.object('Owner', ref.export(2))]] },
      { name: 'Points', arrayIndex: 0, type: 'ArrayProperty', innerType: 'StructProperty', innerStructName: 'Vector', value: [[1, 2, 3], [-0, 5e-324, Infinity]] },
      prop.builtin('Id', 'Guid', g(5)),
      prop.builtin('Box', 'Box', [1, 2, 3, 4, 5, 6, 1]),
      prop.bool('On', true),
      { name: 'Byte', arrayIndex: 0, type: 'ByteProperty', enumName: null, value: 7 },
      { name: 'EnumByte', arrayIndex: 0, type: 'ByteProperty', enumName: 'EThing', value: 'EThing::A' },
      prop.enum('Mode', 'EMode', 'EMode::Fast'),
      prop.name('NoName', null),
      { name: 'Flags', arrayIndex: 0, type: 'ArrayProperty', innerType: 'BoolProperty', value: [true, false] },
      { name: 'Names', arrayIndex: 0, type: 'ArrayProperty', innerType: 'NameProperty', value: ['A', null] },
      { name: 'Big', arrayIndex: 0, type: 'Int64Property', value: -(2n ** 62n) },
      { name: 'Unsigned', arrayIndex: 0, type: 'UInt32Property', value: 0xffffffff },
      prop.str('Text', 'plain'),
      ...extra,
    ];
    return buildPackage({
      imports: [hard(g(20)), soft(g(21))],
      exports: [
        { guid: g(1), name: 'Odd', className: '/Script/Engine.CThing', properties: props },
        { guid: g(2), name: 'Scratch', className: '/Script/Engine.CThing', objectFlags: ObjectFlags.EditorOnly, properties: [prop.object('Back', ref.export(0))] },
        { guid: g(3), name: 'Part', className: '/Script/Engine.CThing', properties: [prop.object('Up', ref.export(0)), prop.object('Gone', ref.export(1))] },
        { guid: g(4), name: 'Last', className: '/Script/Engine.CThing', properties: [] },
      ],
    });
  }

  it('hand-made packages: every kind of value, references in tags, arrays and nested structs, non-ASCII and NAME_None spellings', async () => {
    const opts: StripOptions = { editorOnlyClassPrefixes: ['/Script/Editor.'] };
    const plain = (await agree(oddPackage(), '/p/Odd.lasset', opts)) as { nulledRefs: number };
    expect(plain.nulledRefs).toBe(5);
    await agree(oddPackage([prop.str('Unicode', 'grüße ✓ 𝄞'), prop.name('Name', 'Zoë')]), '/p/Odd.lasset', opts);
    await agree(oddPackage([{ name: 'Ünïcode', arrayIndex: 0, type: 'IntProperty', value: 1 }]), '/p/Odd.lasset', opts);
    // A version 2 writer that spelled None as NAME_None: warned about and re-encoded, both ways.
    // (The writer never writes NAME_None: spelled another way, then patched.)
    const legacy = Buffer.from(oddPackage([prop.name('Legacy', 'XAME_None')]));
    legacy.write('N', legacy.indexOf('XAME_None'), 'latin1');
    const named = (await agree(legacy, '/p/Odd.lasset', opts)) as { warnings: unknown[] };
    expect(named.warnings.length).toBeGreaterThan(0);
    // A struct named after an Object.prototype member (the writer cannot write one either).
    const proto = Buffer.from(oddPackage([prop.struct('Bad', 'Constructor', [])]));
    proto.write('c', proto.indexOf('Constructor'), 'latin1');
    const e = (await agree(proto, '/p/Odd.lasset', opts)) as { error?: unknown };
    expect(e.error).toBeDefined();
  });

  it('every byte of small packages changed, two ways: the same bytes or the same error', async () => {
    const root = path.join(REPO, 'samples/project');
    const schemas = loadSchemas(path.join(root, 'Schemas'));
    // No texture transform: a texture export is decoded either way, and each broken PNG would go to sharp.
    const opts: StripOptions = { editorOnlyClassPrefixes: ['/Script/Editor.', '/Script/Engine.CBodySetup'], schemas };
    const samples = lassets(root)
      .map((f) => ({ f, bytes: fs.readFileSync(f) }))
      .filter(({ f, bytes }) => bytes.byteLength < 1200 && !f.includes('Textures'))
      .slice(0, 6);
    samples.push({ f: '/p/Odd.lasset', bytes: Buffer.from(oddPackage()) });
    let errors = 0;
    let cooked = 0;
    for (const { f, bytes } of samples) {
      const pkg = parsePackage(bytes, f);
      const from = pkg.header.objectDataOffset;
      const to = pkg.header.thumbnailDataOffset || bytes.byteLength;
      for (let at = from; at < to; at++) {
        // The hand-made package (every kind of value) gets more: a bool byte of 2, a sign bit.
        for (const x of f === '/p/Odd.lasset' ? [0x01, 0x02, 0x80, 0xff] : [0x01, 0xff]) {
          const changed = Buffer.from(bytes);
          changed[at] ^= x;
          const r = (await agree(changed, f, opts)) as { error?: unknown };
          if (r.error) errors++;
          else cooked++;
        }
      }
    }
    // Not vacuous: many changes break the package, many others still cook.
    expect(errors).toBeGreaterThan(500);
    expect(cooked).toBeGreaterThan(500);
  });
});
