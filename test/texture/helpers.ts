/**
 * Shared test data: where the public conformance corpora live, and an independent reference
 * decoder (fast-png, pure JS, no libpng) normalized to RGBA8 by the same stated rules.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, expect } from 'vitest';
import { LuminaError } from '../../src/errors.js';
import { crc32 } from '../../samples/generate/png.js';

const tgaCodecDir = path.dirname(createRequire(import.meta.url).resolve('@lunapaint/tga-codec/package.json'));

/**
 * The classic PngSuite (Willem van Schaik, 2017jul19) with reference RGBA pixel dumps in JSON,
 * and a TGA suite with PNG references; both ship in the pinned @lunapaint/tga-codec npm package
 * (its fixtures/ folder), so nothing is vendored here.
 */
export const PNGSUITE_DIR = path.join(tgaCodecDir, 'fixtures', 'pngsuite');
export const TGASUITE_DIR = path.join(tgaCodecDir, 'fixtures', 'tga-test-suite');

/**
 * pngjs decode (pure JS, no libpng) → RGBA8 by the pipeline's rules: 16-bit keeps the high
 * byte, low-depth grey scales by 255 / (2^depth - 1), grey expands, missing alpha is 255,
 * palette and tRNS become RGBA. pngjs blanks the colour of pixels made transparent by a grey or
 * RGB tRNS key (libpng keeps it), so compare such pixels by alpha only: {@link sameVisiblePixels}.
 */
export function referencePngRgba8(bytes: Uint8Array): { width: number; height: number; data: Uint8Array } {
  const png = PNG.sync.read(Buffer.from(bytes), { skipRescale: true }) as PNG & { depth: number; colorType: number };
  const { width, height, depth, colorType } = png;
  const src = png.data as unknown as ArrayLike<number>;
  const max = (1 << depth) - 1;
  const to8 = (v: number) => (depth === 16 ? v >> 8 : depth < 8 && colorType !== 3 ? (v * 255) / max : v);
  const out = new Uint8Array(width * height * 4);
  for (let i = 0; i < out.length; i++) out[i] = to8(src[i]);
  return { width, height, data: out };
}

/** Equal RGBA8, except that colour is not compared where both alphas are 0. */
export function sameVisiblePixels(actual: Uint8Array, expected: Uint8Array): boolean {
  if (actual.length !== expected.length) return false;
  for (let i = 0; i < actual.length; i += 4) {
    if (actual[i + 3] !== expected[i + 3]) return false;
    if (actual[i + 3] === 0) continue;
    if (actual[i] !== expected[i] || actual[i + 1] !== expected[i + 1] || actual[i + 2] !== expected[i + 2]) return false;
  }
  return true;
}

/** Await `p`, expecting a LuminaError; returns it for exact assertions. */
export async function rejection(p: Promise<unknown>): Promise<LuminaError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(LuminaError);
    return e as LuminaError;
  }
  throw new Error('expected a rejection');
}

/** Largest per-sample difference between two equal-length byte arrays. */
export function maxDiff(a: Uint8Array, b: Uint8Array): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/**
 * A temp folder for the calling file's tests (made before them, removed after) and a maker of
 * executable shell scripts in it: the stand-in encoders the batching tests run.
 */
export function scriptFolder(prefix: string): { dir: () => string; script: (name: string, body: string) => string } {
  let tmp = '';
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterAll(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  return {
    dir: () => tmp,
    script(name, body) {
      const file = path.join(tmp, name);
      fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
      return file;
    },
  };
}

/** `png` with the CRC of the chunk holding byte `at` recomputed, so the data itself is what is wrong. */
export function withCrcFixed(png: Uint8Array, at: number): Uint8Array {
  const out = new Uint8Array(png);
  const view = new DataView(out.buffer);
  for (let o = 8; o + 12 <= out.length; ) {
    const end = o + 12 + view.getUint32(o);
    if (at >= o + 8 && at < end - 4 && end <= out.length) view.setUint32(end - 4, crc32(out.subarray(o + 4, end - 4)));
    if (end <= o) break;
    o = end;
  }
  return out;
}
