/** Patch paks and shaders: a patch carries a new ShaderCache.bin exactly when the shipped permutations changed. */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cookProject } from '../../cook/cookProject.js';
import { patchProject } from '../../cook/patchProject.js';
import { decodeShaderCache } from '../../src/format/shaderCache.js';
import { PakReader } from '../../pak/PakReader.js';
import { copySampleProject } from '../helpers/sampleProject.js';

async function entries(pak: string): Promise<{ paths: string[]; shaders?: Uint8Array }> {
  const r = await PakReader.open(pak);
  try {
    const paths = r.entries.map((e) => e.path);
    return { paths, shaders: paths.includes('/ShaderCache.bin') ? await r.readEntry('/ShaderCache.bin') : undefined };
  } finally {
    await r.close();
  }
}

describe('patches and ShaderCache.bin', () => {
  it('the sample (two chunks with different shader caches): no shader change, no ShaderCache.bin in the patch; an include edit ships every permutation anew', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-shader-patch-'));
    await copySampleProject(dir);
    const release = await cookProject({ projectDir: dir, release: 'r1' });
    expect(release.ok).toBe(true);
    const manifest = JSON.parse(fs.readFileSync(release.releaseManifest!, 'utf8')) as { shaderCache: { rawSize: number; xxh64: string } };
    expect(manifest.shaderCache.rawSize).toBe(fs.statSync(path.join(dir, 'Saved/Cooked/ShaderCache.bin')).size);

    const same = await patchProject({ projectDir: dir, base: path.join(dir, 'Saved/Releases/r1'), out: 'Saved/p1.pak' });
    expect(same.ok).toBe(true);
    expect((await entries(path.join(dir, 'Saved/p1.pak'))).paths).not.toContain('/ShaderCache.bin');

    const inc = path.join(dir, 'Content/Shaders/Common/Lighting.hlsli');
    fs.writeFileSync(inc, fs.readFileSync(inc, 'utf8').replace('AmbientStrength + ndotl', 'AmbientStrength + 0.5 * ndotl'));
    const changed = await patchProject({ projectDir: dir, base: path.join(dir, 'Saved/Releases/r1'), out: 'Saved/p2.pak' });
    expect(changed.ok).toBe(true);
    expect(changed.patch!.changed).toContain('/ShaderCache.bin');
    const shipped = decodeShaderCache((await entries(path.join(dir, 'Saved/p2.pak'))).shaders!, 'p2.pak');
    // Every permutation of both chunks, so the patched build finds each key in the patch.
    expect(shipped.permutations).toHaveLength(9);
    await fsp.rm(dir, { recursive: true, force: true });
  }, 240_000);
});
