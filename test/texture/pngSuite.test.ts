/**
 * PNG conformance: every valid image of the classic PngSuite decodes to the suite's own
 * reference pixels (JSON dumps, 16-bit samples reduced by v >> 8) and to an independent decode
 * by pngjs; every deliberately broken x*.png is a typed IMAGE_INVALID naming the asset.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeImage } from '../../cook/texture/index.js';
import { PNGSUITE_DIR, referencePngRgba8, rejection, sameVisiblePixels } from './helpers.js';

const pngDir = path.join(PNGSUITE_DIR, 'png');
const all = fs.readdirSync(pngDir).filter((f) => f.endsWith('.png') && f !== 'PngSuite.png').sort();
const valid = all.filter((f) => !f.startsWith('x'));
const corrupt = all.filter((f) => f.startsWith('x'));

function referencePixels(name: string): Uint8Array {
  const values = JSON.parse(fs.readFileSync(path.join(PNGSUITE_DIR, 'json', `${name}.json`), 'utf8')) as number[];
  // The dumps hold 16-bit images at full depth, everything else as 8-bit.
  const sixteen = /\d\d16$/.test(name) || values.some((v) => v > 255);
  return Uint8Array.from(values, (v) => (sixteen ? v >> 8 : v));
}

describe('PngSuite', () => {
  it('covers every colour type, bit depth, palette with and without tRNS, and Adam7 interlacing', () => {
    // basn = baseline, basi = interlaced; 0 grey, 2 RGB, 3 palette, 4 grey+alpha, 6 RGBA.
    const required = [
      'basn0g01', 'basn0g02', 'basn0g04', 'basn0g08', 'basn0g16',
      'basn2c08', 'basn2c16', 'basn3p01', 'basn3p02', 'basn3p04', 'basn3p08',
      'basn4a08', 'basn4a16', 'basn6a08', 'basn6a16',
      'basi0g01', 'basi0g16', 'basi2c16', 'basi3p01', 'basi4a16', 'basi6a16',
      'tbbn3p08', 'tp1n3p08', 'tbrn2c08', 'tbwn0g16',
    ];
    for (const name of required) expect(valid).toContain(`${name}.png`);
    expect(valid.length).toBeGreaterThan(150);
    expect(corrupt.length).toBe(14);
  });

  it.each(valid)('%s decodes to the reference pixels', async (f) => {
    const bytes = fs.readFileSync(path.join(pngDir, f));
    const got = await decodeImage(bytes, `Content/${f}`);
    const ref = referencePngRgba8(bytes);
    expect(got.source).toBe('png');
    expect([got.width, got.height]).toEqual([ref.width, ref.height]);
    expect(got.data.byteLength).toBe(got.width * got.height * 4);
    expect(Buffer.from(got.data).equals(Buffer.from(referencePixels(f.slice(0, -4))))).toBe(true);
    expect(sameVisiblePixels(got.data, ref.data)).toBe(true);
  });

  it.each(corrupt)('%s is rejected with IMAGE_INVALID naming the asset', async (f) => {
    const file = `Content/Broken/${f}`;
    const e = await rejection(decodeImage(fs.readFileSync(path.join(pngDir, f)), file));
    expect(e.code).toBe('IMAGE_INVALID');
    expect(e.file).toBe(file);
    expect(e.message).not.toMatch(/\n|at .*\.js/);
  });

  it('names the first problem of a corrupt file exactly', async () => {
    // xs1n0g01: signature byte 0 is wrong, so it is neither PNG nor a plausible TGA.
    const e1 = await rejection(decodeImage(fs.readFileSync(path.join(pngDir, 'xs1n0g01.png')), 'a.png'));
    expect({ code: e1.code, message: e1.message }).toEqual({ code: 'IMAGE_INVALID', message: 'not a PNG, JPEG or TGA image' });
    // xhdn0g08: IHDR CRC is wrong; libpng reports it.
    const e2 = await rejection(decodeImage(fs.readFileSync(path.join(pngDir, 'xhdn0g08.png')), 'b.png'));
    expect(e2.code).toBe('IMAGE_INVALID');
    expect(e2.message).toMatch(/^PNG is corrupt: /);
  });
});
