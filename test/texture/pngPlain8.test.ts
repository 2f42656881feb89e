/**
 * The direct decode of plain 8-bit PNGs (decodePlainPng8) must give exactly pngjs's bytes, or give
 * nothing and leave the file to pngjs: never accept a file pngjs rejects, never read one otherwise.
 * Checked on the whole PngSuite, on random scanlines under every filter type and colour type, and on
 * every byte of small PNGs changed (with and without its CRC fixed), cut short or followed by more.
 */
import fs from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodePlainPng8, decodePngWithPngjs } from '../../cook/texture/decodePngWithPngjs.js';
import { readImageHeader } from '../../cook/texture/imageHeader.js';
import { noiseAlbedo, paletteChecker } from '../../samples/generate/images.js';
import { encodePng, pngChunk } from '../../samples/generate/png.js';
import { Random } from '../../samples/generate/random.js';
import { PNGSUITE_DIR, withCrcFixed } from './helpers.js';

const pngDir = path.join(PNGSUITE_DIR, 'png');
const suite = fs.readdirSync(pngDir).filter((f) => f.endsWith('.png')).sort();
const read = (f: string) => new Uint8Array(fs.readFileSync(path.join(pngDir, f)));

/** pngjs's result (no direct decode), or its error. */
function viaPngjs(png: Uint8Array): Uint8Array | Error {
  try {
    return decodePngWithPngjs(png, { direct: false }).data;
  } catch (e) {
    return e as Error;
  }
}

/** Where the cook would use the direct decode (a file that passed the header check), it agrees with pngjs. Returns whether it decoded. */
function agrees(png: Uint8Array, what: string): boolean {
  try {
    readImageHeader(png, 'T.png');
  } catch {
    return false;
  }
  const direct = decodePlainPng8(png);
  if (direct === null) return false;
  const ref = viaPngjs(png);
  expect(ref instanceof Error ? `pngjs throws ${ref.message}` : 'pngjs decodes', what).toBe('pngjs decodes');
  expect(Buffer.from(direct.data).equals(Buffer.from(ref as Uint8Array)), `${what}: same RGBA8 as pngjs`).toBe(true);
  expect([direct.width, direct.height]).toEqual([new DataView(png.buffer, png.byteOffset).getUint32(16), new DataView(png.buffer, png.byteOffset).getUint32(20)]);
  return true;
}

/** A PNG of random scanlines, each with a random filter type: every filter over every kind of byte. */
function randomPng(rnd: Random, colorType: number, width: number, height: number, palette?: Uint8Array, trns?: Uint8Array): Uint8Array {
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colorType]!;
  const row = 1 + width * channels;
  const lines = new Uint8Array(row * height);
  for (let i = 0; i < lines.length; i++) lines[i] = i % row === 0 ? Math.floor(rnd.next() * 5) : Math.floor(rnd.next() * 256);
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  ihdr[8] = 8;
  ihdr[9] = colorType;
  const sig = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
  const chunks = [sig, pngChunk('IHDR', ihdr)];
  if (palette) chunks.push(pngChunk('PLTE', palette));
  if (trns) chunks.push(pngChunk('tRNS', trns));
  chunks.push(pngChunk('IDAT', deflateSync(lines)), pngChunk('IEND', new Uint8Array(0)));
  return new Uint8Array(Buffer.concat(chunks));
}

describe('direct decode of plain 8-bit PNGs', () => {
  it('gives pngjs bytes for every PngSuite image it takes, and takes every plain 8-bit non-interlaced one', () => {
    const taken = suite.filter((f) => agrees(read(f), f));
    // The suite's plain 8-bit non-interlaced images, colour key (tRNS on grey or RGB) aside.
    const expected = suite.filter((f) => /^[^x].{3}n[0-6][a-z]08\.png$/.test(f) && !['tbrn2c08.png'].includes(f) && !f.startsWith('cs') && f !== 'PngSuite.png');
    expect(taken.length).toBeGreaterThanOrEqual(30);
    expect(expected.filter((f) => !taken.includes(f))).toEqual([]);
    // None of the corrupt ones.
    expect(taken.filter((f) => f.startsWith('x'))).toEqual([]);
  });

  it('gives pngjs bytes for random scanlines under every filter, colour type and size', () => {
    const rnd = new Random(15);
    const full = new Uint8Array(768).map((_, i) => (i * 7) & 255);
    let taken = 0;
    for (const [w, h] of [[1, 1], [1, 7], [3, 5], [16, 16], [17, 9], [33, 2]]) {
      for (const ct of [0, 2, 4, 6]) if (agrees(randomPng(rnd, ct, w, h), `ct${ct} ${w}x${h}`)) taken++;
      // A full palette: every index is in it; with and without a tRNS shorter than it.
      if (agrees(randomPng(rnd, 3, w, h, full), `palette ${w}x${h}`)) taken++;
      if (agrees(randomPng(rnd, 3, w, h, full, new Uint8Array(100).map((_, i) => i * 2)), `palette+tRNS ${w}x${h}`)) taken++;
    }
    expect(taken).toBe(6 * 6);
    // A short palette: random indices run past it, where pngjs fails; the direct decode gives nothing.
    const short = randomPng(rnd, 3, 16, 16, new Uint8Array(12));
    expect(decodePlainPng8(short)).toBeNull();
    expect(viaPngjs(short)).toBeInstanceOf(Error);
  });

  it('never takes a file pngjs rejects or reads otherwise: every byte changed (with and without its CRC fixed), cut short, or followed by more', () => {
    const rnd = new Random(16);
    const pngs: Array<[string, Uint8Array]> = ['basn0g08', 'basn2c08', 'basn4a08', 'basn6a08', 'tbbn3p08', 'f04n2c08'].map((n) => [n, read(`${n}.png`)]);
    pngs.push(['albedo', encodePng(noiseAlbedo(8, rnd, [40, 30, 20], [200, 170, 140], 3))]);
    pngs.push(['palette', encodePng(paletteChecker(8, [[10, 20, 30], [200, 100, 50], [0, 255, 0]], 2))]);
    pngs.push(['random rgba', randomPng(rnd, 6, 5, 4)]);
    let mutants = 0;
    let taken = 0;
    for (const [name, png] of pngs) {
      expect(agrees(png, name), `${name} itself`).toBe(true);
      for (let at = 8; at < png.length; at++) {
        for (const delta of [1, 0x80]) {
          const changed = new Uint8Array(png);
          changed[at] ^= delta;
          for (const m of [changed, withCrcFixed(changed, at)]) {
            mutants++;
            if (agrees(m, `${name}: byte ${at} ^ ${delta}`)) taken++;
          }
        }
      }
      for (const len of [png.length - 1, png.length - 12, 40]) agrees(png.subarray(0, len), `${name} cut to ${len}`);
      expect(decodePlainPng8(new Uint8Array(Buffer.concat([png, Uint8Array.of(0)])))).toBeNull();
    }
    // Most changes are refused; some (a changed pixel with its CRC fixed) decode, the same as pngjs.
    expect(mutants).toBeGreaterThan(1000);
    expect(taken).toBeGreaterThan(0);
  });
});
