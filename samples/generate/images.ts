/**
 * Procedural source images for sample textures: colour noise, planks, normal maps, masks, UI art.
 * Everything is drawn from a `Random`, so a seed gives the same pixels everywhere.
 */
import { Random } from './random.js';
import type { PngImage } from './png.js';

type Rgb = readonly [number, number, number];

/**
 * Tileable value noise in [0, 1]: a random lattice of `cells` x `cells` values, smoothly
 * interpolated, with a second octave at twice the frequency for detail.
 */
export function valueNoise(size: number, rnd: Random, cells = 4): Float32Array {
  const out = new Float32Array(size * size);
  let weight = 0;
  for (let octave = 0, n = cells, amp = 1; octave < 2; octave++, n *= 2, amp *= 0.5) {
    const lattice = new Float32Array(n * n);
    for (let i = 0; i < lattice.length; i++) lattice[i] = rnd.next();
    for (let y = 0; y < size; y++) {
      const fy = (y / size) * n;
      const y0 = Math.floor(fy);
      const ty = smooth(fy - y0);
      for (let x = 0; x < size; x++) {
        const fx = (x / size) * n;
        const x0 = Math.floor(fx);
        const tx = smooth(fx - x0);
        const at = (cx: number, cy: number) => lattice[(cy % n) * n + (cx % n)];
        const top = lerp(at(x0, y0), at(x0 + 1, y0), tx);
        const bottom = lerp(at(x0, y0 + 1), at(x0 + 1, y0 + 1), tx);
        out[y * size + x] += amp * lerp(top, bottom, ty);
      }
    }
    weight += amp;
  }
  for (let i = 0; i < out.length; i++) out[i] /= weight;
  return out;
}

/** An RGB image tinted between two colours by noise: rock, dirt, bark, grass. */
export function noiseAlbedo(size: number, rnd: Random, dark: Rgb, light: Rgb, cells = 4): PngImage {
  const n = valueNoise(size, rnd, cells);
  const data = new Uint8Array(size * size * 3);
  for (let i = 0; i < n.length; i++) {
    const t = n[i];
    for (let c = 0; c < 3; c++) data[i * 3 + c] = Math.round(lerp(dark[c], light[c], t));
  }
  return { width: size, height: size, color: 'rgb', data, filter: 'paeth' };
}

/** Wooden planks with dark seams and grain: the crate texture. */
export function planksAlbedo(size: number, rnd: Random, planks = 4): PngImage {
  const grain = valueNoise(size, rnd, 8);
  const data = new Uint8Array(size * size * 3);
  const plank = size / planks;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const i = y * size + x;
      const seam = y % plank < Math.max(1, plank / 16) || x < Math.max(1, size / 32) || x >= size - Math.max(1, size / 32);
      const shade = seam ? 0.35 : 0.75 + 0.25 * grain[i];
      const band = Math.floor(y / plank) % 2 === 0 ? 1 : 0.9;
      data[i * 3] = Math.round(176 * shade * band);
      data[i * 3 + 1] = Math.round(124 * shade * band);
      data[i * 3 + 2] = Math.round(72 * shade * band);
    }
  }
  return { width: size, height: size, color: 'rgb', data, filter: 'up' };
}

/** A tangent-space normal map (RGB, linear) from the gradient of a noise height field. */
export function normalMap(size: number, rnd: Random, strength = 2, cells = 4): PngImage {
  const h = valueNoise(size, rnd, cells);
  const data = new Uint8Array(size * size * 3);
  const at = (x: number, y: number) => h[((y + size) % size) * size + ((x + size) % size)];
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const dx = (at(x + 1, y) - at(x - 1, y)) * strength;
      const dy = (at(x, y + 1) - at(x, y - 1)) * strength;
      const len = Math.hypot(dx, dy, 1);
      const i = (y * size + x) * 3;
      data[i] = Math.round(((-dx / len) * 0.5 + 0.5) * 255);
      data[i + 1] = Math.round(((-dy / len) * 0.5 + 0.5) * 255);
      data[i + 2] = Math.round(((1 / len) * 0.5 + 0.5) * 255);
    }
  }
  return { width: size, height: size, color: 'rgb', data, filter: 'sub' };
}

/** A single-channel mask (grey PNG): roughness, ambient occlusion. */
export function greyMask(size: number, rnd: Random, cells = 4): PngImage {
  const n = valueNoise(size, rnd, cells);
  const data = new Uint8Array(size * size);
  for (let i = 0; i < n.length; i++) data[i] = Math.round(n[i] * 255);
  return { width: size, height: size, color: 'grey', data, filter: 'paeth' };
}

/** Leaves on a transparent background (RGBA), so the alpha channel carries a real cutout. */
export function leafCutout(size: number, rnd: Random): PngImage {
  const n = valueNoise(size, rnd, 6);
  const data = new Uint8Array(size * size * 4);
  for (let i = 0; i < n.length; i++) {
    const t = n[i];
    data[i * 4] = Math.round(lerp(30, 90, t));
    data[i * 4 + 1] = Math.round(lerp(80, 170, t));
    data[i * 4 + 2] = Math.round(lerp(20, 60, t));
    data[i * 4 + 3] = t > 0.5 ? 255 : 0;
  }
  return { width: size, height: size, color: 'rgba', data, filter: 'sub' };
}

/** A rounded UI button with a vertical gradient and soft alpha edge (RGBA). */
export function uiButton(width: number, height: number, top: Rgb, bottom: Rgb): PngImage {
  const data = new Uint8Array(width * height * 4);
  const r = Math.min(width, height) / 4;
  for (let y = 0; y < height; y++) {
    const t = height === 1 ? 0 : y / (height - 1);
    for (let x = 0; x < width; x++) {
      // Distance outside the rounded rectangle decides the alpha ramp.
      const cx = Math.max(r - x - 0.5, 0, x + 0.5 - (width - r));
      const cy = Math.max(r - y - 0.5, 0, y + 0.5 - (height - r));
      const outside = Math.hypot(cx, cy) - r;
      const alpha = outside <= -1 ? 1 : outside >= 0 ? 0 : -outside;
      const i = (y * width + x) * 4;
      for (let c = 0; c < 3; c++) data[i + c] = Math.round(lerp(top[c], bottom[c], t));
      data[i + 3] = Math.round(alpha * 255);
    }
  }
  return { width, height, color: 'rgba', data, filter: 'none' };
}

/** A palette image (PNG colour type 3): a checker of `palette` entries, for decoders' sake. */
export function paletteChecker(size: number, palette: readonly Rgb[], cell = 4): PngImage {
  const data = new Uint8Array(size * size);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) data[y * size + x] = (Math.floor(x / cell) + Math.floor(y / cell)) % palette.length;
  }
  return { width: size, height: size, color: 'palette', data, palette: Uint8Array.from(palette.flat()), filter: 'none' };
}

/** A thumbnail (RGBA8, the package thumbnail layout) showing a two-colour diagonal gradient. */
export function thumbnailGradient(size: number, a: Rgb, b: Rgb): { width: number; height: number; data: Uint8Array } {
  const data = new Uint8Array(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const t = (x + y) / Math.max(1, 2 * (size - 1));
      const i = (y * size + x) * 4;
      for (let c = 0; c < 3; c++) data[i + c] = Math.round(lerp(a[c], b[c], t));
      data[i + 3] = 255;
    }
  }
  return { width: size, height: size, data };
}

function lerp(a: number, b: number, t: number): number {
  return a + (b - a) * t;
}

function smooth(t: number): number {
  return t * t * (3 - 2 * t);
}
