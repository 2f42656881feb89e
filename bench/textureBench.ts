/**
 * Texture throughput: textures per second for the full normalization of 2048x2048 PNG sources
 * (decode + length check + mips + encode) against the decoder alone, in the same run so the
 * ratio is meaningful on whatever machine runs it. Run directly: `npx tsx bench/textureBench.ts`.
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { cookTexture, decodeImage, findBasisu } from '../cook/texture/index.js';
import type { TextureSettings } from '../cook/texture/index.js';

const SIZE = 2048;
const LABEL = 54;

/** Deterministic PNG source i: smooth gradients plus seeded noise, RGBA. */
async function makeSource(i: number): Promise<Uint8Array> {
  let seed = 0x9e3779b9 ^ (i * 0x85ebca6b);
  const rand = () => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const px = Buffer.alloc(SIZE * SIZE * 4);
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      const o = (y * SIZE + x) * 4;
      const n = (rand() - 0.5) * 24;
      px[o] = clamp((x / SIZE) * 255 + n);
      px[o + 1] = clamp((y / SIZE) * 255 + n);
      px[o + 2] = clamp(128 + 100 * Math.sin((x + y + i * 97) / 90) + n);
      px[o + 3] = 255;
    }
  }
  return new Uint8Array(await sharp(px, { raw: { width: SIZE, height: SIZE, channels: 4 } }).png().toBuffer());
}

function clamp(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
}

async function timeEach(sources: Uint8Array[], work: (src: Uint8Array, i: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < sources.length; i++) await work(sources[i], i);
  return (performance.now() - start) / 1000;
}

/** Run the benchmark; `count` 2048x2048 sources (default 4). Returns the report lines. */
export async function runTextureBench(opts: { count?: number } = {}): Promise<{ lines: string[] }> {
  const count = opts.count ?? 4;
  const sources: Uint8Array[] = [];
  for (let i = 0; i < count; i++) sources.push(await makeSource(i));
  const mib = sources.reduce((n, s) => n + s.byteLength, 0) / 2 ** 20;
  const lines = [`texture: ${count} x ${SIZE}x${SIZE} RGBA PNG sources (${mib.toFixed(1)} MiB)`];
  const rate = (s: number) => `${(count / s).toFixed(2)} textures/s (${((s / count) * 1000).toFixed(0)} ms each)`;

  await decodeImage(sources[0], 'warmup.png');
  const decode = await timeEach(sources, (src, i) => decodeImage(src, `bench/${i}.png`));
  lines.push(`${'texture decode only (PNG → RGBA8):'.padEnd(LABEL)}${rate(decode)}`);

  const run = (settings: TextureSettings) => timeEach(sources, (src, i) => cookTexture(src, `bench/${i}.png`, settings));
  const rgba8 = await run({ srgb: true, generateMips: true, compression: 'ETextureCompression::UserInterface' });
  lines.push(`${'texture cook RGBA8 (decode+check+sRGB mips):'.padEnd(LABEL)}${rate(rgba8)}, ${(rgba8 / decode).toFixed(2)}x the decode time`);

  if (findBasisu().path) {
    const etc1s = await run({ srgb: true, generateMips: true, compression: 'ETextureCompression::Default' });
    lines.push(`${'texture cook KTX2_ETC1S (decode+check+mips+basisu):'.padEnd(LABEL)}${rate(etc1s)}, ${(etc1s / decode).toFixed(2)}x the decode time`);
  } else {
    lines.push('texture cook KTX2_ETC1S: skipped, no basisu binary for this platform');
  }
  return { lines };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const count = Number(process.argv[2] ?? 4);
  const { lines } = await runTextureBench({ count });
  for (const line of lines) console.log(line);
}
