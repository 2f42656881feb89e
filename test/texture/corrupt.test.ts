/**
 * Broken sources: every one is a typed IMAGE_INVALID naming the asset, with the size limits
 * applied from the header before any pixel is decoded (IMAGE_TOO_LARGE; see limits.test.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeImage, readImageHeader } from '../../cook/texture/index.js';
import { pngChunk } from '../../samples/generate/png.js';
import { PNGSUITE_DIR, rejection } from './helpers.js';

const FILE = 'Content/Textures/T_Broken.lasset';
const png = new Uint8Array(fs.readFileSync(path.join(PNGSUITE_DIR, 'png', 'basn6a08.png')));

/** A minimal valid-structure PNG with any IHDR size (the IDAT need not match). */
function pngWithSize(width: number, height: number): Uint8Array {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk('IHDR', ihdr),
      pngChunk('IDAT', deflateSync(Buffer.alloc(16))),
      pngChunk('IEND', new Uint8Array(0)),
    ]),
  );
}

async function expectInvalid(bytes: Uint8Array, message: string | RegExp): Promise<void> {
  const e = await rejection(decodeImage(bytes, FILE));
  expect(e.code).toBe('IMAGE_INVALID');
  expect(e.file).toBe(FILE);
  if (typeof message === 'string') expect(e.message).toBe(message);
  else expect(e.message).toMatch(message);
}

describe('corrupt and out-of-range sources', () => {
  it('empty SourceData', () => expectInvalid(new Uint8Array(0), 'SourceData is empty'));

  it('bytes that are no image', () => expectInvalid(new TextEncoder().encode('hello, this is not an image at all'), 'not a PNG, JPEG or TGA image'));

  it('PNG cut inside its data', () =>
    expectInvalid(png.subarray(0, 100), /^PNG is truncated: chunk "IDAT" at offset \d+ needs \d+ bytes but the file ends at 100$/));

  it('PNG missing only its IEND chunk (libpng alone would accept it)', () =>
    expectInvalid(png.subarray(0, png.length - 12), `PNG is truncated: no IEND chunk before the end of the file at offset ${png.length - 12}`));

  it('PNG with a flipped byte in the compressed data', async () => {
    const bad = png.slice();
    bad[60] ^= 0xff;
    await expectInvalid(bad, /^PNG is corrupt: /);
  });

  it('PNG whose header is beyond the size limit fails before decoding, as IMAGE_TOO_LARGE', async () => {
    const huge = pngWithSize(20000, 64);
    expect(huge.length).toBeLessThan(100);
    const e = await rejection(decodeImage(huge, FILE));
    expect({ code: e.code, file: e.file, field: e.field, message: e.message }).toEqual({
      code: 'IMAGE_TOO_LARGE',
      file: FILE,
      field: 'textures.maxSize',
      message: 'PNG is 20000x64 pixels; the limit is 16384 on a side',
    });
  });

  it('PNG of zero width', () => expectInvalid(pngWithSize(0, 5), 'PNG is 0x5 pixels; both sides must be at least 1'));

  it('header at the limit passes the header check', () => {
    expect(readImageHeader(pngWithSize(16384, 1), FILE)).toEqual({ source: 'png', width: 16384, height: 1 });
  });

  it('JPEG cut in its scan data', async () => {
    const jpg = new Uint8Array(await sharp({ create: { width: 32, height: 32, channels: 3, background: '#336699' } }).jpeg().toBuffer());
    await expectInvalid(jpg.subarray(0, Math.floor(jpg.length * 0.8)), /^JPEG is corrupt: .*premature end of JPEG image/i);
  });

  it('JPEG cut before its frame header', () =>
    expectInvalid(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46]), 'JPEG is truncated: the file ends at 8 before its frame header'));

  it('errors never carry a decoder stack in the message', async () => {
    const bad = png.slice();
    bad[60] ^= 0xff;
    const e = await rejection(decodeImage(bad, FILE));
    expect(e.message).not.toContain('\n');
    expect(e.cause).toBeDefined();
  });
});
