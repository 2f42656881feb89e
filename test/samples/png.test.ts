import { describe, expect, it } from 'vitest';
import { PNG } from 'pngjs';
import sharp from 'sharp';
import { crc32, encodePng, type PngImage } from '../../samples/generate/png.js';
import { greyMask, leafCutout, noiseAlbedo, paletteChecker, uiButton } from '../../samples/generate/images.js';
import { Random } from '../../samples/generate/random.js';
import { pngHeader } from './helpers.js';

describe('crc32', () => {
  it('matches the standard check value', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
  });
});

/** The image's pixels expanded to RGBA8, as a decoder should return them. */
function expectedRgba(img: PngImage): Uint8Array {
  const out = new Uint8Array(img.width * img.height * 4);
  for (let i = 0; i < img.width * img.height; i++) {
    let px: number[];
    if (img.color === 'grey') px = [img.data[i], img.data[i], img.data[i], 255];
    else if (img.color === 'rgb') px = [img.data[i * 3], img.data[i * 3 + 1], img.data[i * 3 + 2], 255];
    else if (img.color === 'rgba') px = Array.from(img.data.subarray(i * 4, i * 4 + 4));
    else {
      const k = img.data[i];
      px = [img.palette![k * 3], img.palette![k * 3 + 1], img.palette![k * 3 + 2], img.paletteAlpha?.[k] ?? 255];
    }
    out.set(px, i * 4);
  }
  return out;
}

describe('encodePng', () => {
  const rnd = () => new Random(5);
  const cases: Array<[string, PngImage, number]> = [
    ['grey', greyMask(16, rnd()), 0],
    ['rgb, paeth filter', noiseAlbedo(24, rnd(), [0, 0, 0], [255, 200, 100]), 2],
    ['palette', paletteChecker(20, [[1, 2, 3], [200, 100, 50], [9, 99, 199]], 3), 3],
    ['palette with tRNS', { ...paletteChecker(8, [[10, 20, 30], [40, 50, 60]], 2), paletteAlpha: Uint8Array.of(0, 255) }, 3],
    ['rgba, sub filter', leafCutout(16, rnd()), 6],
    ['rgba, no filter, not square', uiButton(30, 7, [10, 20, 30], [200, 210, 220]), 6],
    ['rgb, up filter', { ...noiseAlbedo(9, rnd(), [5, 5, 5], [250, 250, 250]), filter: 'up' }, 2],
  ];

  it.each(cases)('%s decodes to the same pixels with pngjs and sharp', async (_name, img, colorType) => {
    const png = encodePng(img);
    const h = pngHeader(png);
    expect(h).toEqual({ width: img.width, height: img.height, bitDepth: 8, colorType });
    const want = expectedRgba(img);

    const decoded = PNG.sync.read(Buffer.from(png)); // pngjs checks every chunk CRC
    expect(new Uint8Array(decoded.data)).toEqual(want);

    const s = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    expect([s.info.width, s.info.height, s.info.channels]).toEqual([img.width, img.height, 4]);
    expect(new Uint8Array(s.data)).toEqual(want);
  });

  it('is a pure function of its input', () => {
    const img = noiseAlbedo(16, new Random(9), [0, 0, 0], [255, 255, 255]);
    expect(Buffer.from(encodePng(img)).equals(Buffer.from(encodePng(img)))).toBe(true);
  });

  it('rejects data of the wrong length and out-of-range palette indices', () => {
    expect(() => encodePng({ width: 2, height: 2, color: 'rgb', data: new Uint8Array(11) })).toThrow(RangeError);
    expect(() => encodePng({ width: 1, height: 1, color: 'palette', data: Uint8Array.of(2), palette: Uint8Array.of(1, 2, 3) })).toThrow(RangeError);
  });
});
