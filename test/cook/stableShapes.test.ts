/**
 * What a cook worker makes once per package (the parsed package, the cook's outcome) or per
 * property (native tails, a texture's cooked fields) keeps one hidden class however many it makes.
 * In V8 11.3 (Node 20) an object literal that starts with a spread and then adds keys
 * (`{ ...tables, exportData }`) gets a map of its own on every call once its site is warm: a new
 * Map's garbage per object and every reader of it megamorphic (a warm cook of the 20k project's
 * packages took ~20% more CPU). Checked with V8's %HaveSameMap after a warm-up.
 */
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { beforeAll, describe, expect, it } from 'vitest';
import { cookPackageSource, type PackageCookSettings } from '../../cook/cookPackageSource.js';
import { TEXTURE_CLASS } from '../../cook/textureClass.js';
import { textureTransform } from '../../cook/textureExport.js';
import { BinaryReader } from '../../src/format/BinaryReader.js';
import { decodeNativeTail } from '../../src/format/nativeTail.js';
import { decodeExportData, exportContext, parsePackage } from '../../src/format/packageReader.js';
import { loadSchemas } from '../../src/schemas/loadSchemas.js';
import { initHash } from '../../src/util/hash.js';
import { SAMPLE_PROJECT, sampleSourceFiles } from '../helpers/sampleProject.js';

v8.setFlagsFromString('--allow-natives-syntax');
// Compiled after the flag is set, so V8 accepts the intrinsic.
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

/** Enough calls for every site involved to be warm (the per-call maps showed after a few hundred). */
const WARM = 1500;

const schemas = loadSchemas(path.join(SAMPLE_PROJECT, 'Schemas'));
// The sources only: after `npm run cook:sample`, Saved/Cooked holds cooked .lasset files too.
const packages = sampleSourceFiles('.lasset').map((file) => ({ file, bytes: fs.readFileSync(file) }));
const parsed = packages.map((p) => parsePackage(p.bytes, p.file));
const textures = packages.filter((_, i) => parsed[i].exports.some((e) => e.className === TEXTURE_CLASS));
const plain = packages.filter((_, i) => !parsed[i].exports.some((e) => e.className === TEXTURE_CLASS) && !parsed[i].warnings);

const settings: PackageCookSettings = {
  editorOnlyClassPrefixes: ['/Script/Editor.'],
  compressionLevel: 6,
  textures: { encoder: 'rgba8' } as PackageCookSettings['textures'],
  onCookFailure: 'fail',
  schemas,
};

beforeAll(initHash);

describe('one hidden class per kind of object a package cook makes', () => {
  it('parsed packages', () => {
    expect(plain.length).toBeGreaterThan(5);
    for (let i = 0; i < WARM; i++) parsePackage(plain[i % plain.length].bytes, plain[i % plain.length].file);
    const [a, b] = [plain[0], plain[1]].map((p) => parsePackage(p.bytes, p.file));
    expect(sameMap(a, b)).toBe(true);
  });

  it("the cook's outcomes: cooked (with and without a texture) and failed", async () => {
    expect(textures.length).toBeGreaterThan(1);
    for (let i = 0; i < WARM; i++) {
      const p = (i & 1 ? textures : plain)[i % 2];
      await cookPackageSource(p.bytes, p.file, settings, '/Game/X');
    }
    const cooked = await Promise.all([plain[0], plain[1], textures[0], textures[1]].map((p) => cookPackageSource(p.bytes, p.file, settings, '/Game/X')));
    for (const o of cooked) expect(o.status).toBe('cooked');
    expect(sameMap(cooked[0], cooked[1])).toBe(true);
    expect(sameMap(cooked[0], cooked[2])).toBe(true);
    expect(sameMap(cooked[2], cooked[3])).toBe(true);
    const broken = plain[0].bytes.subarray(0, 20);
    for (let i = 0; i < WARM; i++) await cookPackageSource(broken, 'broken.lasset', settings, '/Game/X');
    const failed = await Promise.all([0, 1].map(() => cookPackageSource(broken, 'broken.lasset', settings, '/Game/X')));
    expect(failed[0].status).toBe('failed');
    expect(sameMap(failed[0], failed[1])).toBe(true);
  });

  it("a texture's cooked fields", async () => {
    const transform = textureTransform({ encoder: 'rgba8' });
    const props = textures.map((p) => {
      const pkg = parsePackage(p.bytes, p.file);
      const i = pkg.exports.findIndex((e) => e.className === TEXTURE_CLASS);
      return { pkg, i, props: decodeExportData(pkg, i).properties };
    });
    for (let k = 0; k < WARM; k++) await transform(props[k % 2].i, props[k % 2].props, props[k % 2].pkg);
    const [a, b] = await Promise.all([0, 1].map((k) => transform(props[k].i, props[k].props, props[k].pkg)));
    // Width, Height, MipCount: IntProperty fields alike.
    expect(a![0].name).toBe('Width');
    expect(sameMap(a![0], b![0])).toBe(true);
    expect(sameMap(a![0], a![1])).toBe(true);
  });

  it('native tail properties', () => {
    const tails: Array<() => ReturnType<typeof decodeNativeTail>> = [];
    parsed.forEach((pkg) => {
      pkg.exports.forEach((e, i) => {
        if (!schemas.has(e.className)) return;
        const obj = decodeExportData(pkg, i);
        if (obj.tail.byteLength === 0) return;
        const site = { className: e.className ?? 'None', exportName: e.objectName ?? `export[${i}]` };
        tails.push(() => decodeNativeTail(new BinaryReader(obj.tail, pkg.file), schemas, site, exportContext(pkg)));
      });
    });
    expect(tails.length).toBeGreaterThan(0);
    for (let k = 0; k < WARM; k++) tails[k % tails.length]();
    const a = tails[0]();
    const b = tails[0]();
    expect(a.length).toBeGreaterThan(0);
    for (let k = 0; k < a.length; k++) expect(sameMap(a[k], b[k]), `${a[k].name} (${a[k].type})`).toBe(true);
  });
});
