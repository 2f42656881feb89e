/**
 * JPEG decode: baseline and progressive files made with sharp (mozjpeg) from known pixels.
 * JPEG is lossy, so pixels are compared with a tolerance; the marker scan proves the
 * progressive file really is progressive (SOF2) and the baseline one is not.
 */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeImage } from '../../cook/texture/index.js';
import { maxDiff } from './helpers.js';

const W = 40;
const H = 24;

function gradient(): Uint8Array {
  const px = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const o = (y * W + x) * 3;
      px[o] = Math.round((x / (W - 1)) * 255);
      px[o + 1] = Math.round((y / (H - 1)) * 255);
      px[o + 2] = 128;
    }
  }
  return px;
}

/** The SOFn markers present before the first scan. */
function frameMarkers(b: Uint8Array): number[] {
  const found: number[] = [];
  let o = 2;
  while (o + 4 <= b.length && b[o] === 0xff) {
    const m = b[o + 1];
    if (m === 0xda) break;
    if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) found.push(m);
    o += 2 + ((b[o + 2] << 8) | b[o + 3]);
  }
  return found;
}

/** A one-channel JPEG when `grey`: the red channel of the gradient as the grey value. */
async function jpeg(progressive: boolean, grey = false): Promise<Uint8Array> {
  const src = gradient();
  const img = grey
    ? sharp(Buffer.from(src.filter((_, i) => i % 3 === 0)), { raw: { width: W, height: H, channels: 1 } })
    : sharp(Buffer.from(src), { raw: { width: W, height: H, channels: 3 } });
  return new Uint8Array(await img.jpeg({ quality: 95, progressive, chromaSubsampling: '4:4:4', mozjpeg: false }).toBuffer());
}

function expectedRgba(grey: boolean): Uint8Array {
  const src = gradient();
  const out = new Uint8Array(W * H * 4);
  for (let p = 0; p < W * H; p++) {
    const [r, g, b] = [src[p * 3], src[p * 3 + 1], src[p * 3 + 2]];
    out.set(grey ? [r, r, r, 255] : [r, g, b, 255], p * 4);
  }
  return out;
}

describe('JPEG', () => {
  it.each([
    { name: 'baseline', progressive: false, sof: 0xc0 },
    { name: 'progressive', progressive: true, sof: 0xc2 },
  ])('$name decodes close to the known pixels', async ({ progressive, sof }) => {
    const bytes = await jpeg(progressive);
    expect(frameMarkers(bytes)).toEqual([sof]);
    const got = await decodeImage(bytes, 'Content/Photo.jpg');
    expect({ source: got.source, width: got.width, height: got.height }).toEqual({ source: 'jpeg', width: W, height: H });
    const want = expectedRgba(false);
    expect(maxDiff(got.data, want)).toBeLessThanOrEqual(8);
    for (let i = 3; i < got.data.length; i += 4) expect(got.data[i]).toBe(255);
  });

  it('expands a greyscale JPEG to R = G = B with alpha 255', async () => {
    const got = await decodeImage(await jpeg(false, true), 'Content/Grey.jpg');
    for (let i = 0; i < got.data.length; i += 4) {
      expect(got.data[i + 1]).toBe(got.data[i]);
      expect(got.data[i + 2]).toBe(got.data[i]);
      expect(got.data[i + 3]).toBe(255);
    }
    expect(maxDiff(got.data, expectedRgba(true))).toBeLessThanOrEqual(8);
  });
});
