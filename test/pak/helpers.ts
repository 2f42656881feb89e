/** Shared fixtures for the pak tests: temp folders and deterministic data. */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { Random } from '../../samples/generate/random.js';

export async function tempDir(prefix = 'lumina-pak-'): Promise<string> {
  return fsp.mkdtemp(path.join(os.tmpdir(), prefix));
}

/** A fresh temp folder for each test of the calling file (given to `use`), removed after the test. */
export function tempDirEach(use: (dir: string) => void): void {
  let dir: string | undefined;
  beforeEach(async () => {
    dir = await tempDir();
    use(dir);
  });
  afterEach(async () => {
    if (dir) await fsp.rm(dir, { recursive: true, force: true });
  });
}

/** Deterministic bytes: text-like runs (compressible) mixed with noise, from a seed. */
export function mixedBytes(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  const rnd = new Random(seed);
  const next = (): number => rnd.nextU32();
  const words = ['Material', '/Game/Maps/', 'vertex ', '0.5000 ', 'Texture2D', 'SourceData'];
  let i = 0;
  while (i < n) {
    const r = next();
    if (r % 3 === 0) {
      const len = Math.min(n - i, 8 + (r >>> 8) % 56);
      for (let k = 0; k < len; k++) out[i++] = next() & 0xff;
    } else {
      const w = words[(r >>> 4) % words.length];
      for (let k = 0; k < w.length && i < n; k++) out[i++] = w.charCodeAt(k);
    }
  }
  return out;
}

/** Incompressible bytes from a seed. */
export function noiseBytes(n: number, seed = 7): Uint8Array {
  const out = new Uint8Array(n);
  const rnd = new Random(seed);
  for (let i = 0; i < n; i++) out[i] = rnd.nextU32() & 0xff;
  return out;
}

/** Run `f` and return the LuminaError-like object it throws (fails the test if it does not). */
export async function caught(f: () => unknown): Promise<{ code: string; message: string; field?: string; offset?: number; file?: string }> {
  try {
    await f();
  } catch (e) {
    return e as { code: string; message: string };
  }
  throw new Error('expected a throw');
}

/**
 * Byte equality that stays fast on megabytes (vitest's deep equality walks typed arrays element
 * by element). On mismatch it reports the lengths and the first differing offset.
 */
export function bytesDiff(actual: Uint8Array, expected: Uint8Array): string {
  if (Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength))) return 'same';
  let i = 0;
  while (i < actual.byteLength && i < expected.byteLength && actual[i] === expected[i]) i++;
  return `length ${actual.byteLength} vs ${expected.byteLength}, first difference at ${i}`;
}
