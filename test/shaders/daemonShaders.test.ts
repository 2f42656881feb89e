/** The watch daemon and shaders: editing an include re-compiles exactly its users into the dev pak. */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Daemon } from '../../watch/Daemon.js';
import { decodeShaderCache, describePermutation } from '../../src/format/shaderCache.js';
import { readShipped } from '../watch/project.js';
import { tempDir, waitFor } from '../watch/helpers.js';
import { GUIDS, LIGHTING_HLSLI, material, writeShaderProject } from './fixtures.js';
import { writeFixture } from '../cook/helpers.js';
import { hard, prop } from '../../src/format/packageBuilder.js';

describe('daemon and shaders', () => {
  let daemon: Daemon | undefined;
  let root: string | undefined;
  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
    if (root) await fsp.rm(root, { recursive: true, force: true });
  });

  it('an include edit ships a new ShaderCache.bin in the dev pak, compiling only the permutations that include it', async () => {
    root = await tempDir();
    const dir = await writeShaderProject(root);
    daemon = await Daemon.start({ projectDir: dir, debounceMs: 20, consolidateAfterMs: 0 });
    const paks = path.join(dir, 'Saved', 'Paks');
    const store = path.join(dir, 'Intermediates', 'ShaderCache');
    const before = decodeShaderCache((await readShipped(paks, '/ShaderCache.bin'))!, 'before');
    expect(before.permutations).toHaveLength(6);
    expect(fs.readdirSync(store).filter((n) => n.endsWith('.spv'))).toHaveLength(6);
    const codeOf = (c: typeof before) => new Map(c.permutations.map((p) => [describePermutation(p), Buffer.from(p.code).toString('hex')]));
    const was = codeOf(before);

    // Halve the light: every Lit permutation's code changes, Blur and Unlit do not.
    await fsp.writeFile(path.join(dir, 'Content/Shaders/Lighting.hlsli'), LIGHTING_HLSLI.replace('max(dot', '0.5 * max(dot'));
    const after = await waitFor(
      async () => {
        const b = await readShipped(paks, '/ShaderCache.bin');
        const c = b && decodeShaderCache(b, 'after');
        return c && [...codeOf(c)].some(([k, v]) => was.get(k) !== v) ? c : undefined;
      },
      'a new ShaderCache.bin in the paks',
      120_000,
    );
    await daemon.whenIdle();
    const now = codeOf(after);
    const changed = [...now.keys()].filter((k) => now.get(k) !== was.get(k)).sort();
    expect(changed).toEqual([
      '/Game/Shaders/Lit.hlsl PSMain (fragment) [TINT=0.5 USE_SHADOWS]',
      '/Game/Shaders/Lit.hlsl PSMain (fragment) [no defines]',
    ]);
    // Four permutations include Lighting.hlsli (the vertex ones too, though their code is the
    // same): exactly four new cache entries, nothing else compiled.
    expect(fs.readdirSync(store).filter((n) => n.endsWith('.spv'))).toHaveLength(10);
  }, 240_000);

  it('a package edit re-runs the shader cook only when the package holds (or held) a material', async () => {
    root = await tempDir();
    const dir = await writeShaderProject(root);
    daemon = await Daemon.start({ projectDir: dir, debounceMs: 20, consolidateAfterMs: 0 });
    const paks = path.join(dir, 'Saved', 'Paks');
    // The material scan's record of every package: a shader cook rewrites it, at 50k assets megabytes per batch.
    const scanFile = path.join(dir, 'Intermediates', 'ShaderMaterials.bin');
    const scanned = () => fs.statSync(scanFile).mtimeMs;
    const before = scanned();
    const batches = () => daemon!.status().batches;

    // The map holds no material: its edit is cooked and shipped, the shader cook is skipped.
    const n = batches();
    await writeFixture(dir, 'Content/Maps/Main.lasset', {
      imports: [hard(GUIDS.rock), hard(GUIDS.plain), hard(GUIDS.blur)],
      exports: [{ guid: GUIDS.map, name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.int('X', 2)] }],
    });
    await waitFor(() => batches() > n, 'the map edit batch');
    await daemon.whenIdle();
    expect(scanned()).toBe(before);

    // A material's defines change: the shader cook runs and ships the new permutation.
    await writeFixture(dir, 'Content/Materials/Rock.lasset', material(GUIDS.rock, 'Rock', '/Game/Shaders/Lit.hlsl', ['TINT=0.25']));
    await waitFor(
      async () => {
        const b = await readShipped(paks, '/ShaderCache.bin');
        return b !== undefined && decodeShaderCache(b, 'after').permutations.some((p) => describePermutation(p).includes('TINT=0.25'));
      },
      'the new permutation in the paks',
      120_000,
    );
    expect(scanned()).toBeGreaterThan(before);
  }, 240_000);
});
