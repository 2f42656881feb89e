/**
 * How basisu is run: with glibc's malloc thresholds raised (its UASTC path mapped and unmapped
 * fresh buffers for every file: ~0.27 s of page faults per 225 small masks), which must not
 * change a byte of what it writes. The reference is basisu's own command line run plainly (no
 * GLIBC_TUNABLES), as the cook ran it before, on the same PNG files with the same flags.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { basisuArgs, basisuEnv, DEFAULT_BASISU_SETTINGS, findBasisu, type Ktx2Encoding } from '../../cook/texture/basisu.js';
import { cookTexture, resolveTextureEncoding, type TextureSettings } from '../../cook/texture/index.js';
import { greyMask, leafCutout, noiseAlbedo, normalMap } from '../../samples/generate/images.js';
import { encodePng } from '../../samples/generate/png.js';
import { Random } from '../../samples/generate/random.js';
import { scriptFolder } from './helpers.js';

const REAL = findBasisu().path;
const MALLOC = 'glibc.malloc.mmap_threshold=67108864:glibc.malloc.trim_threshold=67108864';

const ALBEDO: TextureSettings = { srgb: true, generateMips: true, compression: 'ETextureCompression::Default' };
const NORMAL: TextureSettings = { srgb: false, generateMips: true, compression: 'ETextureCompression::Normalmap' };
const MASK: TextureSettings = { srgb: false, generateMips: true, compression: 'ETextureCompression::Masks' };
const FLAT: TextureSettings = { srgb: false, generateMips: false, compression: 'ETextureCompression::Grayscale' };

const scripts = scriptFolder('lumina-basisu-env-');

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('basisu environment', () => {
  it('raises glibc malloc thresholds, before any GLIBC_TUNABLES of the user (theirs win)', () => {
    expect(basisuEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', GLIBC_TUNABLES: MALLOC });
    expect(basisuEnv({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=1' }).GLIBC_TUNABLES).toBe(`${MALLOC}:glibc.malloc.arena_max=1`);
  });
});

describe.skipIf(REAL === null)('basisu environment on the real basisu', () => {
  it('every run gets it', async () => {
    const log = path.join(scripts.dir(), 'env.log');
    const exe = scripts.script('env-basisu', `echo "$GLIBC_TUNABLES" >> '${log}'\nexec '${REAL}' "$@"`);
    const png = encodePng(noiseAlbedo(16, new Random(5), [40, 30, 20], [200, 170, 140], 3));
    const t = await cookTexture(png, 'Content/T_Env.lasset', ALBEDO, { basisu: exe });
    expect(t.format).toBe('KTX2_ETC1S');
    expect(fs.readFileSync(log, 'utf8')).toBe(`${MALLOC}\n`);
  });

  it("the KTX2 is byte-identical to basisu's command line run without it, ETC1S and UASTC, small and large", async () => {
    const images: Array<{ name: string; png: Uint8Array; settings: TextureSettings }> = [];
    for (const size of [16, 64, 256]) {
      for (let i = 0; i < 3; i++) {
        const rnd = new Random(size * 100 + i);
        images.push({ name: `a${size}_${i}`, png: encodePng(i === 2 ? leafCutout(size, rnd) : noiseAlbedo(size, rnd, [40, 30, 20], [200, 170, 140], 2 + i)), settings: ALBEDO });
        images.push({ name: `n${size}_${i}`, png: encodePng(normalMap(size, rnd, 1 + i, 3)), settings: NORMAL });
        images.push({ name: `m${size}_${i}`, png: encodePng(greyMask(size, rnd, 2 + i)), settings: MASK });
      }
      images.push({ name: `g${size}`, png: encodePng(greyMask(size, new Random(size), 3)), settings: FLAT });
    }
    const cooked = await Promise.all(images.map((img) => cookTexture(img.png, `Content/${img.name}.lasset`, img.settings)));

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lumina-basisu-plain-'));
    try {
      const env = { ...process.env };
      delete env.GLIBC_TUNABLES;
      for (const [i, img] of images.entries()) {
        fs.writeFileSync(path.join(dir, `${img.name}.png`), img.png);
        const e = resolveTextureEncoding(img.settings, img.name);
        const enc: Ktx2Encoding = { format: e.format as Ktx2Encoding['format'], srgb: e.srgb, normalMap: e.normalMap, generateMips: img.settings.generateMips };
        const run = spawnSync(REAL!, [`${img.name}.png`, '-output_path', dir, ...basisuArgs(enc, DEFAULT_BASISU_SETTINGS)], { cwd: dir, env, encoding: 'utf8' });
        expect(run.status, run.stdout + run.stderr).toBe(0);
        expect(cooked[i].format).toBe(enc.format);
        expect(sha(cooked[i].platformData), img.name).toBe(sha(fs.readFileSync(path.join(dir, `${img.name}.ktx2`))));
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
