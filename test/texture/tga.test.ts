/**
 * TGA decode: small files written here from known pixels (every image type the engine accepts:
 * true-colour 24/32, grey 8 and grey+alpha 16, colour-mapped with 24- and 32-bit maps, each
 * raw and RLE, both origins), then the public TGA suite shipped with the codec against its PNGs.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeImage } from '../../cook/texture/index.js';
import { TGASUITE_DIR, rejection } from './helpers.js';

type Kind = 'true24' | 'true32' | 'grey8' | 'grey16' | 'cmap24' | 'cmap32';

const W = 7;
const H = 5;

/** Known RGBA pixels: the first three of each row repeat (so RLE has runs), the rest vary. */
function knownPixels(): Uint8Array {
  const px = new Uint8Array(W * H * 4);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const o = (y * W + x) * 4;
      const v = x < 3 ? 40 * y + 10 : 40 * y + 15 * x;
      px[o] = v;
      px[o + 1] = 255 - v;
      px[o + 2] = (v * 7) & 0xff;
      px[o + 3] = x < 3 ? 255 : 60 + 20 * x + y;
    }
  }
  return px;
}

/** The RGBA8 the decoder must return for `kind` built from `known`. */
function expectedFor(kind: Kind, known: Uint8Array): Uint8Array {
  const out = new Uint8Array(known.length);
  for (let i = 0; i < known.length; i += 4) {
    const grey = kind === 'grey8' || kind === 'grey16';
    out[i] = known[i];
    out[i + 1] = grey ? known[i] : known[i + 1];
    out[i + 2] = grey ? known[i] : known[i + 2];
    out[i + 3] = kind === 'true32' || kind === 'grey16' || kind === 'cmap32' ? known[i + 3] : 255;
  }
  return out;
}

/** Bytes of one pixel as stored, and the optional colour map. */
function pixelCodec(kind: Kind, known: Uint8Array): { bpp: number; map?: { entries: Uint8Array; depth: number }; pixel: (p: number) => number[] } {
  const rgba = (p: number) => [known[p * 4], known[p * 4 + 1], known[p * 4 + 2], known[p * 4 + 3]];
  switch (kind) {
    case 'true24':
      return { bpp: 24, pixel: (p) => { const [r, g, b] = rgba(p); return [b, g, r]; } };
    case 'true32':
      return { bpp: 32, pixel: (p) => { const [r, g, b, a] = rgba(p); return [b, g, r, a]; } };
    case 'grey8':
      return { bpp: 8, pixel: (p) => [known[p * 4]] };
    case 'grey16':
      return { bpp: 16, pixel: (p) => [known[p * 4], known[p * 4 + 3]] };
    case 'cmap24':
    case 'cmap32': {
      const withAlpha = kind === 'cmap32';
      const keys: string[] = [];
      for (let p = 0; p < W * H; p++) {
        const k = rgba(p).slice(0, withAlpha ? 4 : 3).join(',');
        if (!keys.includes(k)) keys.push(k);
      }
      const size = withAlpha ? 4 : 3;
      const entries = new Uint8Array(keys.length * size);
      keys.forEach((k, i) => {
        const [r, g, b, a] = k.split(',').map(Number);
        entries.set(withAlpha ? [b, g, r, a] : [b, g, r], i * size);
      });
      return {
        bpp: 8,
        map: { entries, depth: withAlpha ? 32 : 24 },
        pixel: (p) => [keys.indexOf(rgba(p).slice(0, withAlpha ? 4 : 3).join(','))],
      };
    }
  }
}

/** A TGA file holding `known` as `kind`, optionally RLE (packets never cross a row). */
function writeTga(kind: Kind, known: Uint8Array, rle: boolean, origin: 'top-left' | 'bottom-left'): Uint8Array {
  const codec = pixelCodec(kind, known);
  const baseType = kind.startsWith('cmap') ? 1 : kind.startsWith('grey') ? 3 : 2;
  const alphaBits = kind === 'true32' || kind === 'grey16' ? 8 : 0;
  const header = new Uint8Array(18);
  const view = new DataView(header.buffer);
  header[1] = codec.map ? 1 : 0;
  header[2] = baseType + (rle ? 8 : 0);
  if (codec.map) {
    view.setUint16(5, codec.map.entries.length / (codec.map.depth / 8), true);
    header[7] = codec.map.depth;
  }
  view.setUint16(12, W, true);
  view.setUint16(14, H, true);
  header[16] = codec.bpp;
  header[17] = alphaBits | (origin === 'top-left' ? 0x20 : 0);
  const body: number[] = [];
  for (let row = 0; row < H; row++) {
    const y = origin === 'top-left' ? row : H - 1 - row;
    const pixels = Array.from({ length: W }, (_, x) => codec.pixel(y * W + x));
    if (!rle) {
      for (const p of pixels) body.push(...p);
      continue;
    }
    let x = 0;
    while (x < W) {
      let run = 1;
      while (x + run < W && run < 128 && pixels[x + run].join() === pixels[x].join()) run++;
      if (run >= 2) {
        body.push(0x80 | (run - 1), ...pixels[x]);
        x += run;
        continue;
      }
      let raw = 1;
      while (x + raw < W && raw < 128 && pixels[x + raw].join() !== pixels[x + raw - 1].join()) raw++;
      if (x + raw < W && raw > 1) raw--; // leave the first pixel of the next run to the run packet
      body.push(raw - 1);
      for (let k = 0; k < raw; k++) body.push(...pixels[x + k]);
      x += raw;
    }
  }
  const map = codec.map ? codec.map.entries : new Uint8Array(0);
  return new Uint8Array([...header, ...map, ...body]);
}

const kinds: Kind[] = ['true24', 'true32', 'grey8', 'grey16', 'cmap24', 'cmap32'];
const cases = kinds.flatMap((kind) =>
  [false, true].flatMap((rle) => (['top-left', 'bottom-left'] as const).map((origin) => ({ kind, rle, origin }))),
);

describe('TGA from known pixels', () => {
  it.each(cases)('$kind rle=$rle $origin', async ({ kind, rle, origin }) => {
    const known = knownPixels();
    const bytes = writeTga(kind, known, rle, origin);
    expect(bytes[2] >= 9).toBe(rle);
    const got = await decodeImage(bytes, 'Content/T.tga');
    expect({ source: got.source, width: got.width, height: got.height }).toEqual({ source: 'tga', width: W, height: H });
    expect(Array.from(got.data)).toEqual(Array.from(expectedFor(kind, known)));
  });

  it('rejects a TGA whose pixel data is cut short, naming the asset', async () => {
    const bytes = writeTga('true32', knownPixels(), false, 'top-left');
    const e = await rejection(decodeImage(bytes.subarray(0, bytes.length - 10), 'Content/Cut.tga'));
    expect(e.code).toBe('IMAGE_INVALID');
    expect(e.file).toBe('Content/Cut.tga');
    expect(e.message).toMatch(/^TGA is corrupt: /);
  });

  it('rejects a TGA of 0 pixels before decoding', async () => {
    const bytes = writeTga('true24', knownPixels(), false, 'top-left');
    bytes[12] = 0;
    bytes[13] = 0;
    const e = await rejection(decodeImage(bytes, 'Content/Zero.tga'));
    expect({ code: e.code, message: e.message }).toEqual({
      code: 'IMAGE_INVALID',
      message: 'TGA is 0x5 pixels; both sides must be at least 1',
    });
  });
});

describe('public TGA suite (ftrvxmtrx set) against its PNG references', () => {
  const dir = path.join(TGASUITE_DIR, 'ftrvxmtrx');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.tga')).sort();

  it('has grey, true-colour, colour-mapped, RLE and both origins', () => {
    for (const want of ['monochrome8_bottom_left_rle', 'monochrome16_top_left', 'rgb24_top_left_colormap', 'rgb32_top_left_rle_colormap', 'rgb32_bottom_left']) {
      expect(files).toContain(`${want}.tga`);
    }
  });

  it.each(files)('%s', async (f) => {
    const got = await decodeImage(fs.readFileSync(path.join(dir, f)), f);
    const ref = await sharp(fs.readFileSync(path.join(dir, f.replace(/\.tga$/, '.png'))))
      .toColourspace('srgb')
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([got.width, got.height]).toEqual([ref.info.width, ref.info.height]);
    expect(Buffer.from(got.data).equals(ref.data)).toBe(true);
  });
});
