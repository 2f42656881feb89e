/**
 * Bounding the memory textures take. Before a source is decoded, its header gives the pixel
 * count, and from it the peak bytes its cook will hold: the decoded RGBA8, the float mip chain
 * or the encoder input, and the basisu process's own working set. Textures in flight share one
 * budget (config `textures.maxMemoryMiB`); one that alone needs more than the budget fails with
 * IMAGE_TOO_LARGE naming the file and its size, before any pixel is decoded.
 *
 * Peak bytes per source pixel, measured on 2048x2048 and 4096x4096 sources (process max RSS):
 * RGBA8 with mips ~34 (float level 0, the horizontal pass and the concatenated chain); basisu
 * -max_threads 1 with mips ~51 for ETC1S and ~20 for UASTC, plus our 8 (RGBA8 + the TGA input).
 */
import { errors } from '../../src/errors.js';
import { Semaphore } from '../../src/util/semaphore.js';
import type { TextureFormat } from './textureSettings.js';

const BYTES_PER_PIXEL: Record<TextureFormat, { mips: number; single: number }> = {
  RGBA8: { mips: 40, single: 8 },
  KTX2_ETC1S: { mips: 64, single: 48 },
  KTX2_UASTC: { mips: 32, single: 28 },
};

/** Default of `textures.maxMemoryMiB`. */
export const DEFAULT_TEXTURE_MEMORY_MIB = 4096;

/** Estimated peak bytes of cooking a width x height source into `format`. */
export function textureMemoryEstimate(width: number, height: number, format: TextureFormat, generateMips: boolean): number {
  const per = BYTES_PER_PIXEL[format];
  return width * height * (generateMips ? per.mips : per.single);
}

const budgets = new Map<number, Semaphore>();

/** The process-wide budget for `mib` MiB (in KiB units), shared by every cook in this process that uses the same limit. */
export function textureMemoryBudget(mib: number = DEFAULT_TEXTURE_MEMORY_MIB): Semaphore {
  let b = budgets.get(mib);
  if (!b) {
    b = new Semaphore(mib * 1024);
    budgets.set(mib, b);
  }
  return b;
}

/**
 * Hold the memory a texture needs while `fn` runs; fail at once when it alone needs more than
 * the whole budget. `what` names the image for the error ("PNG is 16384x16384 pixels").
 */
export async function withTextureMemory<T>(
  budget: Semaphore,
  bytes: number,
  file: string,
  what: string,
  fn: () => Promise<T>,
): Promise<T> {
  const kib = Math.max(1, Math.ceil(bytes / 1024));
  if (kib > budget.capacity) {
    const need = Math.ceil(bytes / 2 ** 20);
    throw errors.imageTooLarge(file, `${what}; cooking it needs about ${need} MiB, more than the ${budget.capacity / 1024} MiB textures may use at once`, 'textures.maxMemoryMiB');
  }
  return budget.with(kib, fn);
}
