/**
 * The small-PNG fast path (pngjs) must give the same bytes as the sharp path, or not be used:
 * every PngSuite image decodes both ways to identical RGBA8 unless the router sends it to sharp
 * by rule, and every broken or doubtful file ends where libpng would put it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeImage } from '../../cook/texture/decodeImage.js';
import type { PngDecoder } from '../../cook/texture/decodeImage.js';
import { PNGJS_MAX_PIXELS, pngDecoderFor } from '../../cook/texture/decodePngWithPngjs.js';
import { PNGSUITE_DIR, rejection, sameVisiblePixels } from './helpers.js';

const pngDir = path.join(PNGSUITE_DIR, 'png');
const all = fs.readdirSync(pngDir).filter((f) => f.endsWith('.png') && f !== 'PngSuite.png').sort();
const valid = all.filter((f) => !f.startsWith('x'));
const corrupt = all.filter((f) => f.startsWith('x'));
const read = (f: string) => new Uint8Array(fs.readFileSync(path.join(pngDir, f)));

/** Grey or RGB images with a tRNS colour key: pngjs zeroes the keyed pixels' colour. */
const COLOUR_KEYED = ['tbbn0g04.png', 'tbbn2c16.png', 'tbgn2c16.png', 'tbrn2c08.png', 'tbwn0g16.png'];

async function decodeWith(bytes: Uint8Array, pngDecoder?: PngDecoder): Promise<Buffer | { code: string; message: string }> {
  try {
    return Buffer.from((await decodeImage(bytes, 'Content/T.png', { pngDecoder })).data);
  } catch (e) {
    const { code, message } = e as { code: string; message: string };
    return { code, message };
  }
}

// Minimal PNG writer for layouts the suite does not have.
const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  let c = 0xffffffff;
  for (const x of out.subarray(4, 8 + data.length)) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8);
  out.writeUInt32BE((c ^ 0xffffffff) >>> 0, 8 + data.length);
  return out;
}
function png(colorType: number, ...chunks: Buffer[]): Uint8Array {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(8, 0);
  ihdr.writeUInt32BE(8, 4);
  ihdr[8] = 8;
  ihdr[9] = colorType;
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return new Uint8Array(Buffer.concat([sig, chunk('IHDR', ihdr), ...chunks, chunk('IEND', new Uint8Array(0))]));
}
/** 8x8 scanlines with filter byte 0 and `bpp` bytes a pixel. */
function scanlines(bpp: number, value: (i: number) => number = (i) => (i * 37) & 255): Buffer {
  const row = 1 + 8 * bpp;
  return Buffer.from(Array.from({ length: 8 * row }, (_, i) => (i % row === 0 ? 0 : value(i))));
}
const rgbaIdat = deflateSync(scanlines(4));
const palette = chunk('PLTE', Buffer.from(Array.from({ length: 12 }, (_, i) => i * 20)));
const palIdat = chunk('IDAT', deflateSync(scanlines(1, (i) => i % 4)));

describe('PNG decoders: pngjs fast path against sharp', () => {
  it('routes to sharp exactly the colour-keyed images of the suite', () => {
    const toSharp = valid.filter((f) => pngDecoderFor(read(f)) === 'sharp');
    expect(toSharp).toEqual(COLOUR_KEYED);
  });

  it.each(valid)('%s decodes to identical RGBA8 through both paths', async (f) => {
    const bytes = read(f);
    const viaSharp = await decodeWith(bytes, 'sharp');
    const viaPngjs = await decodeWith(bytes, 'pngjs');
    expect(Buffer.isBuffer(viaSharp) && Buffer.isBuffer(viaPngjs)).toBe(true);
    const [s, p] = [viaSharp as Buffer, viaPngjs as Buffer];
    if (COLOUR_KEYED.includes(f)) {
      // The known difference, and the reason for the rule: only the hidden colour differs.
      expect(s.equals(p)).toBe(false);
      expect(sameVisiblePixels(s, p)).toBe(true);
    } else {
      expect(s.equals(p)).toBe(true);
    }
    expect((await decodeWith(bytes)) as Buffer).toEqual(s);
  });

  it.each(corrupt)('%s fails on the pngjs path with IMAGE_INVALID, and the routed path says what sharp says', async (f) => {
    const file = `Content/Broken/${f}`;
    const e = await rejection(decodeImage(read(f), file, { pngDecoder: 'pngjs' }));
    expect(e.code).toBe('IMAGE_INVALID');
    expect(e.file).toBe(file);
    expect(e.message).toMatch(/^(PNG is corrupt: [^\n]+|not a PNG, JPEG or TGA image)$/);
    expect(await decodeWith(read(f))).toEqual(await decodeWith(read(f), 'sharp'));
  });

  it('sends images above the size threshold to sharp', async () => {
    const side = Math.floor(Math.sqrt(PNGJS_MAX_PIXELS));
    const make = (w: number, h: number) => sharp({ create: { width: w, height: h, channels: 4, background: '#336699' } }).png().toBuffer();
    expect(pngDecoderFor(new Uint8Array(await make(side, side)))).toBe('pngjs');
    expect(pngDecoderFor(new Uint8Array(await make(side + 1, side)))).toBe('sharp');
    expect(pngDecoderFor(new Uint8Array(await make(2048, 2048)))).toBe('sharp');
  });

  it('sends an embedded ICC profile to sharp, which converts through it', async () => {
    const px = Buffer.from(Array.from({ length: 8 * 8 * 4 }, (_, i) => (i % 4 === 3 ? 255 : (i * 29) & 255)));
    const p3 = new Uint8Array(await sharp(px, { raw: { width: 8, height: 8, channels: 4 } }).withIccProfile('p3').png().toBuffer());
    expect(pngDecoderFor(p3)).toBe('sharp');
    expect((await decodeWith(p3, 'sharp')) as Buffer).not.toEqual(await decodeWith(p3, 'pngjs'));
  });

  it('sends chunk layouts libpng reads differently to sharp', () => {
    const idat = chunk('IDAT', rgbaIdat);
    const cases: Record<string, Uint8Array> = {
      'PLTE after IDAT': png(3, palette, palIdat, palette),
      'tRNS after IDAT': png(3, palette, palIdat, chunk('tRNS', Buffer.from([0]))),
      'two tRNS': png(3, palette, chunk('tRNS', Buffer.from([0])), chunk('tRNS', Buffer.from([9])), palIdat),
      'tRNS longer than PLTE': png(3, palette, chunk('tRNS', Buffer.alloc(5)), palIdat),
      'PLTE in a grey image': png(0, palette, chunk('IDAT', deflateSync(scanlines(1)))),
      'split IDAT runs': png(6, chunk('IDAT', rgbaIdat.subarray(0, 20)), chunk('tEXt', Buffer.from('a\0b')), chunk('IDAT', rgbaIdat.subarray(20))),
      'unknown chunk': png(6, chunk('prVt', Buffer.from('x')), idat),
      'RGB colour key': png(2, chunk('tRNS', Buffer.alloc(6)), chunk('IDAT', deflateSync(scanlines(3)))),
    };
    for (const [name, bytes] of Object.entries(cases)) expect([name, pngDecoderFor(bytes)]).toEqual([name, 'sharp']);
    expect(pngDecoderFor(png(3, palette, chunk('tRNS', Buffer.from([0, 128])), palIdat))).toBe('pngjs');
    expect(pngDecoderFor(png(6, chunk('IDAT', rgbaIdat.subarray(0, 20)), chunk('IDAT', rgbaIdat.subarray(20))))).toBe('pngjs');
  });

  it('image data pngjs would accept but libpng rejects fails the same way on the routed path', async () => {
    const badAdler = Buffer.from(rgbaIdat);
    badAdler[badAdler.length - 1] ^= 1;
    const cases: Record<string, Uint8Array> = {
      'bad Adler-32': png(6, chunk('IDAT', badAdler)),
      'zlib stream cut before its end': png(6, chunk('IDAT', rgbaIdat.subarray(0, rgbaIdat.length - 6))),
      'too little image data': png(6, chunk('IDAT', deflateSync(scanlines(4).subarray(0, 100)))),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      expect(pngDecoderFor(bytes)).toBe('pngjs');
      const e = await rejection(decodeImage(bytes, 'Content/T.png', { pngDecoder: 'pngjs' }));
      expect([name, e.code]).toEqual([name, 'IMAGE_INVALID']);
      const viaSharp = await decodeWith(bytes, 'sharp');
      expect(viaSharp).toEqual({ code: 'IMAGE_INVALID', message: expect.stringMatching(/^PNG is corrupt: /) });
      expect(await decodeWith(bytes)).toEqual(viaSharp);
    }
  });

  it('a bad CRC on a skipped ancillary chunk is accepted by both, with the same pixels', async () => {
    const badCrcText = chunk('tEXt', Buffer.from('a\0b'));
    badCrcText[badCrcText.length - 1] ^= 1; // libpng only warns; pngjs does not check unread chunks
    const bytes = png(6, badCrcText, chunk('IDAT', rgbaIdat));
    const viaSharp = await decodeWith(bytes, 'sharp');
    expect(Buffer.isBuffer(viaSharp)).toBe(true);
    expect(await decodeWith(bytes, 'pngjs')).toEqual(viaSharp);
  });

  it('files libpng accepts but pngjs rejects still decode, through sharp', async () => {
    const cases: Record<string, Uint8Array> = {
      'more image data than needed': png(6, chunk('IDAT', deflateSync(Buffer.concat([scanlines(4), scanlines(4)])))),
      'palette index past PLTE': png(3, palette, chunk('IDAT', deflateSync(scanlines(1)))),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      const e = await rejection(decodeImage(bytes, 'Content/T.png', { pngDecoder: 'pngjs' }));
      expect([name, e.code]).toEqual([name, 'IMAGE_INVALID']);
      const viaSharp = await decodeWith(bytes, 'sharp');
      expect(Buffer.isBuffer(viaSharp)).toBe(true);
      expect(await decodeWith(bytes)).toEqual(viaSharp);
    }
  });
});
