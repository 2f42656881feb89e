/**
 * Size and memory limits, applied from the image header before any pixel is decoded: a 16384x16384
 * PNG that is a few hundred KiB on disk, and an RLE TGA of the same size, fail at once with
 * IMAGE_TOO_LARGE naming the file, the size and the config key, instead of decoding gigabytes. The
 * memory budget keeps textures whose estimates together exceed it from being in flight at once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../config/defaults.js';
import { cookTextureOptions } from '../../cook/textureExport.js';
import { cookTexture, findBasisu, textureMemoryEstimate } from '../../cook/texture/index.js';
import { pngChunk } from '../../samples/generate/png.js';
import { Semaphore } from '../../src/util/semaphore.js';
import { rejection } from './helpers.js';

const FILE = 'Content/Textures/T_Huge.lasset';
const DEFAULT_OPTIONS = cookTextureOptions({ ...DEFAULTS.textures });

/** A real, valid 8-bit grey PNG of width x height, all black: tiny on disk, huge decoded. */
function blackPng(width: number, height: number): Uint8Array {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // depth
  ihdr[9] = 0; // grey
  // Each row: filter byte 0 + width zero samples.
  const raw = Buffer.alloc((width + 1) * height);
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk('IHDR', ihdr),
      pngChunk('IDAT', deflateSync(raw, { level: 9 })),
      pngChunk('IEND', new Uint8Array(0)),
    ]),
  );
}

/** An RLE true-colour TGA of one colour: 128-pixel run packets, ~10 MiB at 16384x16384. */
function rleTga(width: number, height: number): Uint8Array {
  const packets = Math.ceil((width * height) / 128);
  const out = Buffer.alloc(18 + packets * 5);
  out[2] = 10; // RLE true-colour
  out.writeUInt16LE(width, 12);
  out.writeUInt16LE(height, 14);
  out[16] = 32;
  out[17] = 0x28;
  for (let p = 0, o = 18; p < packets; p++, o += 5) {
    out[o] = 0x80 | 127;
    out[o + 1] = 40;
    out[o + 2] = 80;
    out[o + 3] = 120;
    out[o + 4] = 255;
  }
  return new Uint8Array(out);
}

let huge: Uint8Array;
beforeAll(() => {
  huge = blackPng(16384, 16384);
});

describe('texture size and memory limits', () => {
  it('a 16384x16384 PNG of a few hundred KiB fails from its header: IMAGE_TOO_LARGE naming file, size and key', async () => {
    expect(huge.byteLength).toBeLessThan(1 << 20);
    const rssBefore = process.memoryUsage().rss;
    const e = await rejection(cookTexture(huge, FILE, { srgb: true, generateMips: true, compression: 'ETextureCompression::Default' }, DEFAULT_OPTIONS));
    expect({ code: e.code, file: e.file, field: e.field, message: e.message }).toEqual({
      code: 'IMAGE_TOO_LARGE',
      file: FILE,
      field: 'textures.maxSize',
      message: 'PNG is 16384x16384 pixels; the limit is 8192 on a side',
    });
    // Nothing was decoded: 16384x16384 RGBA8 alone is 1 GiB.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(128 * 2 ** 20);
  });

  it('a 10 MiB RLE TGA of 16384x16384 fails the same way', async () => {
    const tga = rleTga(16384, 16384);
    const e = await rejection(cookTexture(tga, FILE, { srgb: true, generateMips: false, compression: 'ETextureCompression::UserInterface' }, DEFAULT_OPTIONS));
    expect({ code: e.code, field: e.field, message: e.message }).toEqual({
      code: 'IMAGE_TOO_LARGE',
      field: 'textures.maxSize',
      message: 'TGA is 16384x16384 pixels; the limit is 8192 on a side',
    });
  });

  it('with maxSize raised, the memory budget still refuses what would take 16 GiB', async () => {
    const e = await rejection(
      cookTexture(huge, FILE, { srgb: true, generateMips: true, compression: 'ETextureCompression::Default' }, { ...DEFAULT_OPTIONS, maxSize: 16384 }),
    );
    expect({ code: e.code, file: e.file, field: e.field, message: e.message }).toEqual({
      code: 'IMAGE_TOO_LARGE',
      file: FILE,
      field: 'textures.maxMemoryMiB',
      message: 'PNG is 16384x16384 pixels; cooking it needs about 16384 MiB, more than the 4096 MiB textures may use at once',
    });
  });

  it('the estimate covers the decoded pixels, the mip chain and the encoder', () => {
    expect(textureMemoryEstimate(1024, 1024, 'RGBA8', false)).toBe(8 * 2 ** 20);
    expect(textureMemoryEstimate(1024, 1024, 'RGBA8', true)).toBe(40 * 2 ** 20);
    expect(textureMemoryEstimate(1024, 1024, 'KTX2_ETC1S', true)).toBe(64 * 2 ** 20);
  });

  it('weighted slots are taken first come, first served', async () => {
    const s = new Semaphore(10);
    const order: string[] = [];
    const big = await s.acquire(8);
    const waiting = [s.acquire(6).then(() => order.push('six')), s.acquire(1).then(() => order.push('one'))];
    // The small request does not overtake the big one queued before it, though it would fit.
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    s.release(big);
    await Promise.all(waiting);
    expect(order).toEqual(['six', 'one']);
  });
});

describe.skipIf(findBasisu().path === null)('the memory budget on real encodes', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lumina-budget-'));
  });
  afterAll(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('two textures that together exceed the budget are never encoded at once', async () => {
    // 384x384 ETC1S with mips is estimated at 9 MiB: two do not fit in 16 MiB.
    const log = path.join(tmp, 'runs.log');
    const exe = path.join(tmp, 'logging-basisu');
    fs.writeFileSync(exe, `#!/bin/sh\necho start >> '${log}'\n'${findBasisu().path}' "$@"\nrc=$?\necho end >> '${log}'\nexit $rc\n`, { mode: 0o755 });
    const png = (shade: number) => {
      const ihdr = Buffer.alloc(13);
      ihdr.writeUInt32BE(384, 0);
      ihdr.writeUInt32BE(384, 4);
      ihdr[8] = 8;
      const rows = Buffer.alloc(385 * 384, shade);
      for (let y = 0; y < 384; y++) rows[y * 385] = 0;
      return new Uint8Array(Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(rows)), pngChunk('IEND', new Uint8Array(0))]));
    };
    const options = { ...DEFAULT_OPTIONS, basisu: exe, maxMemoryMiB: 16 };
    const settings = { srgb: true, generateMips: true, compression: 'ETextureCompression::Default' };
    const out = await Promise.all([cookTexture(png(60), 'Content/T_A.lasset', settings, options), cookTexture(png(200), 'Content/T_B.lasset', settings, options)]);
    expect(out.map((t) => t.format)).toEqual(['KTX2_ETC1S', 'KTX2_ETC1S']);
    expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toEqual(['start', 'end', 'start', 'end']);
  });
});
