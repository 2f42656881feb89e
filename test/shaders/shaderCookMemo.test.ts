/**
 * The shader cook's memo (cook/shaders/shaderCookMemo.ts): a full cook whose shader inputs are
 * all the last one's takes that one's result without scanning the materials; any edit that could
 * change the result cooks the shaders anew. After each edit the project's outputs (paks, cooked
 * files, Saved/Cooked/ShaderCache.bin) must be the bytes of a cook from scratch. Real compiler.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { SHADER_COOK_MEMO_FILE } from '../../cook/shaders/shaderCookMemo.js';
import { SHADER_STORE_DIR } from '../../cook/shaders/ShaderStore.js';
import { buildPackage, hard, prop, soft } from '../../src/format/packageBuilder.js';
import { createLogger } from '../../src/log/logger.js';
import { copySampleProject } from '../helpers/sampleProject.js';
import { g, outputBytes, tempDir } from '../cook/helpers.js';
import { CONFIG, GUIDS, LIGHTING_HLSLI, material, writeShaderProject } from './fixtures.js';

const TAKEN = "shader cook: the last cook's result, nothing it depends on changed";
const EXTRA = g(0x104);
/** The fixture's map, and a material reached only softly (so deleting it leaves a cook that succeeds). */
const MAP = {
  imports: [hard(GUIDS.rock), hard(GUIDS.plain), hard(GUIDS.blur), soft(EXTRA)],
  exports: [{ guid: GUIDS.map, name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.int('X', 1)] }],
};

let dir: string;
beforeAll(async () => {
  dir = await writeShaderProject(await tempDir('lc-shadermemo-'), {
    'Content/Maps/Main.lasset': MAP,
    'Content/Materials/Extra.lasset': material(EXTRA, 'Extra', '/Game/Shaders/Lit.hlsl', ['EXTRA=1']),
  });
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** A full cook of `at`: its summary and whether the shader cook took the last result. */
async function cook(at = dir) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const c = await Cooker.open({ projectDir: at, log: createLogger({ json: true, level: 'debug', destination: sink }) });
  try {
    const s = await c.cook({ report: false });
    expect(s.problems.filter((p) => p.severity === 'error')).toEqual([]);
    return { summary: s, taken: lines.some((l) => l.includes(TAKEN)) };
  } finally {
    c.close();
  }
}

/** The project's outputs equal those of a cook from scratch of a copy of its sources, file for file. */
async function expectScratchBytes(): Promise<void> {
  const fresh = await tempDir('lc-shadermemo-fresh-');
  try {
    await copySampleProject(fresh, dir);
    const { taken } = await cook(fresh);
    expect(taken).toBe(false);
    const want = await outputBytes(fresh);
    const mine = await outputBytes(dir);
    expect([...mine.keys()]).toEqual([...want.keys()]);
    expect([...want].filter(([k, b]) => !mine.get(k)!.equals(b)).map(([k]) => k)).toEqual([]);
    expect(want.has('Saved/Cooked/ShaderCache.bin')).toBe(true);
  } finally {
    await fsp.rm(fresh, { recursive: true, force: true });
  }
}

function later(file: string, seconds: number): void {
  const t = new Date(Date.now() + seconds * 1000);
  fs.utimesSync(file, t, t);
}

/** After an edit: the next cook cooks the shaders (nothing taken), the one after takes its result, both the bytes of a cook from scratch. */
async function expectEditCooked(permutations: number): Promise<void> {
  const edited = await cook();
  await expectScratchBytes();
  expect(edited.taken).toBe(false);
  expect(edited.summary.shaders.permutations).toBe(permutations);
  const again = await cook();
  expect(again.taken).toBe(true);
  expect(again.summary.shaders).toMatchObject({ permutations, compiled: 0, cached: permutations, failed: 0 });
  await expectScratchBytes();
}

describe('the shader cook memo', () => {
  it('a no-op takes the last result; a material, an include, a setting and a deleted material each cook the shaders anew, to the bytes of a cook from scratch', async () => {
    const first = await cook();
    expect(first.taken).toBe(false);
    // Lit x {no defines, TINT=0.5 USE_SHADOWS, EXTRA=1} x {VS, PS} + Blur + Unlit (global).
    expect(first.summary.shaders.permutations).toBe(8);
    expect(fs.existsSync(path.join(dir, 'Intermediates', SHADER_COOK_MEMO_FILE))).toBe(true);
    const noop = await cook();
    expect(noop.taken).toBe(true);
    expect(noop.summary.shaders).toMatchObject({ permutations: 8, compiled: 0, cached: 8, failed: 0 });
    expect(noop.summary.paks.every((p) => !p.written)).toBe(true);
    await expectScratchBytes();

    // A material's defines.
    const rock = path.join(dir, 'Content/Materials/Rock.lasset');
    fs.writeFileSync(rock, buildPackage(material(GUIDS.rock, 'Rock', '/Game/Shaders/Lit.hlsl', ['TINT=0.25'])));
    later(rock, 5);
    await expectEditCooked(8);

    // An include of Lit.hlsl.
    const include = path.join(dir, 'Content/Shaders/Lighting.hlsli');
    fs.writeFileSync(include, LIGHTING_HLSLI.replace('max(dot', '0.5 * max(dot'));
    later(include, 10);
    await expectEditCooked(8);

    // A setting: shaders.global.
    fs.writeFileSync(path.join(dir, 'lumina-cook.json'), JSON.stringify({ ...CONFIG, shaders: { global: ['/Game/Shaders/Unlit.hlsl', '/Game/Shaders/Blur.glsl'] } }, null, 2));
    await expectEditCooked(8);
    fs.writeFileSync(path.join(dir, 'lumina-cook.json'), JSON.stringify({ ...CONFIG, shaders: { global: [] } }, null, 2));
    await expectEditCooked(7);

    // A material deleted (reached softly: the cook succeeds without it).
    fs.rmSync(path.join(dir, 'Content/Materials/Extra.lasset'));
    await expectEditCooked(5);
    // ~23 cooks, 12 of them from scratch (every permutation compiled).
  }, 300_000);

  it('a shader cache entry gone, the materials table rewritten or a damaged memo: the shaders are cooked, not taken', async () => {
    expect((await cook()).taken).toBe(true);
    // An entry the result used is gone: compiled again, not counted as cached.
    const store = path.join(dir, 'Intermediates', SHADER_STORE_DIR);
    fs.rmSync(path.join(store, fs.readdirSync(store).filter((n) => n.endsWith('.spv'))[0]));
    const gone = await cook();
    expect(gone.taken).toBe(false);
    expect(gone.summary.shaders).toMatchObject({ compiled: 1, failed: 0 });
    await expectScratchBytes();
    expect((await cook()).taken).toBe(true);

    // The materials table written since (another cook, a daemon): not the one the result was made with.
    const table = path.join(dir, 'Intermediates', 'ShaderMaterials.bin');
    fs.writeFileSync(table, fs.readFileSync(table));
    later(table, 20);
    expect((await cook()).taken).toBe(false);
    expect((await cook()).taken).toBe(true);

    // A damaged memo is none.
    const memo = path.join(dir, 'Intermediates', SHADER_COOK_MEMO_FILE);
    const bytes = fs.readFileSync(memo);
    bytes[bytes.byteLength >> 1] ^= 0x55;
    fs.writeFileSync(memo, bytes);
    const damaged = await cook();
    expect(damaged.taken).toBe(false);
    expect(damaged.summary.shaders).toMatchObject({ compiled: 0, failed: 0 });
    await expectScratchBytes();
    expect((await cook()).taken).toBe(true);
  }, 120_000);

  it('an edit of a package without materials takes the last result, carried over the edit (twice in a row); the package given a material, and back, cooks the shaders anew', async () => {
    await cook();
    const base = await cook();
    expect(base.taken).toBe(true);
    const n = base.summary.shaders.permutations;
    const map = path.join(dir, 'Content/Maps/Main.lasset');
    const table = path.join(dir, 'Intermediates', 'ShaderMaterials.bin');
    const tableBytes = fs.readFileSync(table);
    // The same file edited twice: the second edit's content before is known only to the carried memo, not to the table.
    for (const [x, at] of [[2, 30], [3, 40]]) {
      fs.writeFileSync(map, buildPackage({ ...MAP, exports: [{ ...MAP.exports[0], properties: [prop.int('X', x)] }] }));
      later(map, at);
      const edited = await cook();
      expect(edited.summary.cooked).toBe(1);
      expect(edited.taken).toBe(true);
      expect(edited.summary.shaders).toMatchObject({ permutations: n, compiled: 0, cached: n, failed: 0 });
      // No scan: the materials table is not written.
      expect(fs.readFileSync(table).equals(tableBytes)).toBe(true);
      await expectScratchBytes();
      expect((await cook()).taken).toBe(true);
    }

    // The map now holds a material export (its class, its imports: the plan is carried): two more permutations.
    const withMaterial = { ...MAP, exports: [...MAP.exports, ...material(g(0x105), 'MapMat', '/Game/Shaders/Lit.hlsl', ['MAPMAT=1']).exports] };
    fs.writeFileSync(map, buildPackage(withMaterial));
    later(map, 50);
    await expectEditCooked(n + 2);
    // And without it again: its content before had materials.
    fs.writeFileSync(map, buildPackage({ ...MAP, exports: [{ ...MAP.exports[0], properties: [prop.int('X', 4)] }] }));
    later(map, 60);
    await expectEditCooked(n);
  }, 180_000);
});
