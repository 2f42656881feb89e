/**
 * Mip chain generation: a box filter from each level to the next, down to 1x1.
 *
 * Colour in an SRGB texture is averaged in linear light (decode through a 256-entry table,
 * average, encode with exact rounding); averaging the encoded values instead darkens every
 * mip of a high-contrast texture. Alpha, and every channel of a linear texture, is averaged
 * as stored. Colour is not weighted by alpha.
 *
 * Sizes: each level is max(1, floor(n / 2)) of the previous one per side. For an odd side the
 * box is the exact area the output pixel covers (e.g. 3 → 1 weights the three source pixels
 * equally, 5 → 2 weights them 1, 1, 0.5 | 0.5, 1, 1), so no source row or column is dropped.
 * Each level is filtered from the previous level kept in float, not from its 8-bit rounding.
 */

export interface MipLevel {
  width: number;
  height: number;
  /** RGBA8, top row first. */
  data: Uint8Array;
}

export interface MipOptions {
  /** The colour channels are sRGB-encoded: filter them in linear light. */
  srgb: boolean;
}

/** Number of levels in a full chain for a width x height image: floor(log2(max side)) + 1. */
export function mipCountFor(width: number, height: number): number {
  return Math.floor(Math.log2(Math.max(width, height, 1))) + 1;
}

const SRGB_TO_LINEAR = new Float32Array(256);
/** LINEAR_THRESHOLDS[k] is the linear value halfway (in sRGB space) between codes k and k + 1. */
const LINEAR_THRESHOLDS = new Float64Array(255);

function srgbToLinear(v: number): number {
  return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
}

for (let i = 0; i < 256; i++) SRGB_TO_LINEAR[i] = srgbToLinear(i / 255);
for (let k = 0; k < 255; k++) LINEAR_THRESHOLDS[k] = srgbToLinear((k + 0.5) / 255);

/**
 * Linear [0, 1] → 8-bit sRGB code, equal to round(encode(v) * 255): a binary search over the
 * 255 decision thresholds, exact and cheaper than a pow per sample.
 */
export function linearToSrgb8(v: number): number {
  let lo = 0;
  let hi = 255;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (v >= LINEAR_THRESHOLDS[mid]) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** 8-bit sRGB code → linear [0, 1]. */
export function srgb8ToLinear(code: number): number {
  return SRGB_TO_LINEAR[code];
}

/**
 * The full mip chain of an RGBA8 image, level 0 first (level 0 is `rgba` itself, not a copy).
 * Throws RangeError when `rgba` is not width * height * 4 bytes (callers check earlier with a
 * typed error naming the asset; this guards programming mistakes).
 */
export function generateMips(rgba: Uint8Array, width: number, height: number, opts: MipOptions): MipLevel[] {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`generateMips: bad size ${width}x${height}`);
  }
  if (rgba.byteLength !== width * height * 4) {
    throw new RangeError(`generateMips: ${rgba.byteLength} bytes for ${width}x${height} RGBA8`);
  }
  const levels: MipLevel[] = [{ width, height, data: rgba }];
  if (width === 1 && height === 1) return levels;

  let current = toFloat(rgba, opts.srgb);
  let w = width;
  let h = height;
  while (w > 1 || h > 1) {
    const nw = Math.max(1, w >> 1);
    const nh = Math.max(1, h >> 1);
    current = downsample(current, w, h, nw, nh);
    w = nw;
    h = nh;
    levels.push({ width: w, height: h, data: toBytes(current, opts.srgb) });
  }
  return levels;
}

/**
 * RGBA8 → float RGBA. sRGB colour becomes linear 0..1; alpha and linear colour stay on the
 * 0..255 scale, where the power-of-two box weights are exact in float32, so an even-sized 2x2
 * average rounds exactly like integer (a + b + c + d) / 4.
 */
function toFloat(rgba: Uint8Array, srgb: boolean): Float32Array {
  const out = new Float32Array(rgba.length);
  for (let i = 0; i < rgba.length; i += 4) {
    if (srgb) {
      out[i] = SRGB_TO_LINEAR[rgba[i]];
      out[i + 1] = SRGB_TO_LINEAR[rgba[i + 1]];
      out[i + 2] = SRGB_TO_LINEAR[rgba[i + 2]];
    } else {
      out[i] = rgba[i];
      out[i + 1] = rgba[i + 1];
      out[i + 2] = rgba[i + 2];
    }
    out[i + 3] = rgba[i + 3];
  }
  return out;
}

function toBytes(f: Float32Array, srgb: boolean): Uint8Array {
  const out = new Uint8Array(f.length);
  for (let i = 0; i < f.length; i += 4) {
    if (srgb) {
      out[i] = linearToSrgb8(f[i]);
      out[i + 1] = linearToSrgb8(f[i + 1]);
      out[i + 2] = linearToSrgb8(f[i + 2]);
    } else {
      out[i] = Math.round(f[i]);
      out[i + 1] = Math.round(f[i + 1]);
      out[i + 2] = Math.round(f[i + 2]);
    }
    out[i + 3] = Math.round(f[i + 3]);
  }
  return out;
}

interface Taps {
  /** For output i: source indices start[i] .. start[i] + count[i] - 1 with weights. */
  start: Int32Array;
  count: Int32Array;
  weights: Float32Array[];
}

/** Exact box-filter taps mapping n source samples onto m outputs (m = floor(n/2) or 1). */
function boxTaps(n: number, m: number): Taps {
  const start = new Int32Array(m);
  const count = new Int32Array(m);
  const weights: Float32Array[] = [];
  const scale = n / m;
  for (let i = 0; i < m; i++) {
    const lo = i * scale;
    const hi = (i + 1) * scale;
    const first = Math.floor(lo);
    const last = Math.min(n - 1, Math.ceil(hi) - 1);
    const w = new Float32Array(last - first + 1);
    for (let s = first; s <= last; s++) w[s - first] = (Math.min(hi, s + 1) - Math.max(lo, s)) / scale;
    start[i] = first;
    count[i] = w.length;
    weights.push(w);
  }
  return { start, count, weights };
}

/** Separable box filter: horizontal pass into a temp, then vertical. */
function downsample(src: Float32Array, w: number, h: number, nw: number, nh: number): Float32Array {
  let horizontal: Float32Array;
  if (nw === w) horizontal = src;
  else {
    const taps = boxTaps(w, nw);
    horizontal = new Float32Array(nw * h * 4);
    for (let y = 0; y < h; y++) {
      const row = y * w * 4;
      const outRow = y * nw * 4;
      for (let x = 0; x < nw; x++) {
        const s0 = taps.start[x];
        const wt = taps.weights[x];
        let r = 0, g = 0, b = 0, a = 0;
        for (let k = 0; k < wt.length; k++) {
          const p = row + (s0 + k) * 4;
          const q = wt[k];
          r += src[p] * q;
          g += src[p + 1] * q;
          b += src[p + 2] * q;
          a += src[p + 3] * q;
        }
        const o = outRow + x * 4;
        horizontal[o] = r;
        horizontal[o + 1] = g;
        horizontal[o + 2] = b;
        horizontal[o + 3] = a;
      }
    }
  }
  if (nh === h) return horizontal;
  const taps = boxTaps(h, nh);
  const stride = nw * 4;
  const out = new Float32Array(nw * nh * 4);
  for (let y = 0; y < nh; y++) {
    const s0 = taps.start[y];
    const wt = taps.weights[y];
    const outRow = y * stride;
    for (let k = 0; k < wt.length; k++) {
      const q = wt[k];
      const inRow = (s0 + k) * stride;
      for (let i = 0; i < stride; i++) out[outRow + i] += horizontal[inRow + i] * q;
    }
  }
  return out;
}
