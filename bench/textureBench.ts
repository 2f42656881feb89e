/**
 * Textures, each against a baseline in the same run:
 * - decode: 2048x2048 PNG sources through the normalization (decode + check + mips) against the
 *   decoder alone;
 * - throughput: the cook's texture path with the default `basis` encoder (cookTexture: decode,
 *   check, basisu through the batcher, KTX2 check) on a set of images, against basisu's own
 *   command line on the same PNG files with the same flags and the same total threads (the
 *   faster of one `-parallel -max_threads N` process per settings group and N single-threaded
 *   processes splitting the files): ratio = our wall time / the CLI's;
 * - levels (`texture-levels`): basisu's quality and effort levels on the same images, time, size
 *   and PSNR, so the defaults in config/defaults.ts are chosen from numbers.
 * Run directly: `npx tsx bench/textureBench.ts [count]`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import PQueue from 'p-queue';
import sharp from 'sharp';
import { DEFAULT_BASISU_SETTINGS, basisuArgs, basisuEnv, type BasisuSettings, type Ktx2Encoding } from '../cook/texture/basisu.js';
import { TEXTURES_IN_FLIGHT, cookTexture, decodeImage, findBasisu, resolveTextureEncoding } from '../cook/texture/index.js';
import type { TextureSettings } from '../cook/texture/index.js';
import { greyMask, leafCutout, noiseAlbedo, normalMap, planksAlbedo } from '../samples/generate/images.js';
import { encodePng } from '../samples/generate/png.js';
import { Random } from '../samples/generate/random.js';
import { runChild } from '../src/util/runChild.js';
import { procCpuMs } from './procCpu.js';

const SIZE = 2048;
const LABEL = 54;
const CORES = Math.max(1, os.availableParallelism());
/** The cook's basis texture assets in flight (cook.concurrency 0). */
const IN_FLIGHT = TEXTURES_IN_FLIGHT;

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

// ---- the image set the throughput and levels runs share ----

interface BenchImage {
  name: string;
  png: Uint8Array;
  settings: TextureSettings;
}

const DEFAULT_TEX: TextureSettings = { srgb: true, generateMips: true, compression: 'ETextureCompression::Default' };
const NORMAL_TEX: TextureSettings = { srgb: false, generateMips: true, compression: 'ETextureCompression::Normalmap' };
const MASK_TEX: TextureSettings = { srgb: false, generateMips: true, compression: 'ETextureCompression::Masks' };

/**
 * `count` distinct game-like sources of `size` pixels: 60% albedo (noise, planks, leaf cutouts
 * with alpha; ETC1S sRGB), 25% normal maps and 15% masks (UASTC, linear), all with mips.
 */
export function gameImages(count: number, size: number, seed: number): BenchImage[] {
  const out: BenchImage[] = [];
  for (let i = 0; i < count; i++) {
    const rnd = new Random(seed * 1_000_003 + i);
    const kind = i % 20;
    let png: Uint8Array;
    let settings: TextureSettings;
    if (kind < 12) {
      const dark = [40 + (i % 50), 30 + (i % 40), 20 + (i % 30)] as const;
      const light = [150 + (i % 90), 120 + (i % 100), 90 + (i % 110)] as const;
      png = encodePng(kind === 10 ? leafCutout(size, rnd) : kind === 11 ? planksAlbedo(size, rnd, Math.max(1, Math.min(4, size / 4))) : noiseAlbedo(size, rnd, dark, light, 2 + (i % 6)));
      settings = DEFAULT_TEX;
    } else if (kind < 17) {
      png = encodePng(normalMap(size, rnd, 1 + (i % 4), 2 + (i % 5)));
      settings = NORMAL_TEX;
    } else {
      png = encodePng(greyMask(size, rnd, 2 + (i % 6)));
      settings = MASK_TEX;
    }
    out.push({ name: `t${String(i).padStart(5, '0')}`, png, settings });
  }
  return out;
}

function encodingOf(s: TextureSettings): Ktx2Encoding {
  const e = resolveTextureEncoding(s, 'bench');
  return { format: e.format as Ktx2Encoding['format'], srgb: e.srgb, normalMap: e.normalMap, generateMips: s.generateMips };
}

/** The flags our cook passes, with the thread count the CLI run gets instead of our 1. */
function cliArgs(s: TextureSettings, levels: BasisuSettings, threads: number, parallel: boolean): string[] {
  const args = basisuArgs(encodingOf(s), levels);
  args[args.indexOf('-max_threads') + 1] = String(threads);
  if (parallel) args.push('-parallel');
  return args;
}

/** The cook's texture path over all images, `IN_FLIGHT` at a time as the cook does. */
async function cookAll(images: BenchImage[]): Promise<void> {
  const q = new PQueue({ concurrency: IN_FLIGHT });
  for (const img of images) {
    void q.add(async () => {
      const t = await cookTexture(img.png, `bench/${img.name}.lasset`, img.settings);
      if (t.format === 'RGBA8') throw new Error(`bench: ${img.name} fell back to RGBA8 (${t.fallbackReason})`);
    });
  }
  await q.onIdle();
}

/** Group images by their flags, as files in `dir`. */
function writeGroups(images: BenchImage[], dir: string): Array<{ settings: TextureSettings; files: string[] }> {
  const groups = new Map<string, { settings: TextureSettings; files: string[] }>();
  for (const img of images) {
    const key = JSON.stringify(img.settings);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { settings: img.settings, files: [] }));
    const file = path.join(dir, `${img.name}.png`);
    fs.writeFileSync(file, img.png);
    g.files.push(file);
  }
  return [...groups.values()];
}

async function basisu(exe: string, args: string[], out: string, env?: NodeJS.ProcessEnv): Promise<void> {
  const run = await runChild(exe, [...args, '-output_path', out], { timeoutMs: 3_600_000, slots: null, env });
  if (run.code !== 0) throw new Error(`basisu CLI failed: ${run.output.slice(-300)}`);
}

/**
 * basisu's CLI over the same files: the faster of its two ways to use `CORES` threads. `env`: run
 * it in this environment (the cook's malloc settings, see basisuEnv) instead of ours.
 */
async function cliAll(exe: string, groups: Array<{ settings: TextureSettings; files: string[] }>, out: string, env?: NodeJS.ProcessEnv): Promise<{ wall: number; cpu: number; how: string }> {
  // One process per group, the files encoded in parallel by basisu's own thread pool.
  const parallel = await measure(async () => {
    for (const g of groups) await basisu(exe, [...g.files, ...cliArgs(g.settings, DEFAULT_BASISU_SETTINGS, CORES, true)], out, env);
  });
  // CORES single-threaded processes at a time, each with an equal share of a group's files.
  const split = await measure(async () => {
    const q = new PQueue({ concurrency: CORES });
    for (const g of groups) {
      const per = Math.ceil(g.files.length / CORES);
      for (let i = 0; i < g.files.length; i += per) void q.add(() => basisu(exe, [...g.files.slice(i, i + per), ...cliArgs(g.settings, DEFAULT_BASISU_SETTINGS, 1, false)], out, env));
    }
    await q.onIdle();
  });
  return parallel.wall <= split.wall ? { ...parallel, how: `-parallel -max_threads ${CORES}` } : { ...split, how: `${CORES} processes x -max_threads 1` };
}

/** CPU seconds of this process and its reaped children so far (NaN without /proc). */
function cpuSeconds(): number {
  const c = procCpuMs();
  return c ? (c.self + c.children) / 1000 : NaN;
}

/** CPU seconds of this process's reaped children so far (NaN without /proc). */
function childCpuSeconds(): number {
  const c = procCpuMs();
  return c ? c.children / 1000 : NaN;
}

/** Wall and CPU seconds of `work`; `own` is this process's part of `cpu` (the rest: its child processes). */
async function measure(work: () => Promise<unknown>): Promise<{ wall: number; cpu: number; own: number }> {
  const cpu0 = cpuSeconds();
  const kids0 = childCpuSeconds();
  const t0 = performance.now();
  await work();
  const cpu = cpuSeconds() - cpu0;
  return { wall: (performance.now() - t0) / 1000, cpu, own: cpu - (childCpuSeconds() - kids0) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * Ours against the CLI, alternating `rounds` times; the median of each. The CLI runs as a user
 * would run it (the target's baseline), and again with the malloc settings the cook gives basisu
 * (basisuEnv), so the cook's own overhead shows apart from that.
 */
export async function throughput(label: string, images: BenchImage[], rounds: number): Promise<string> {
  const exe = findBasisu().path!;
  // On tmpfs when there is one, as the cook's encoder temp files are: the CLI gets the same disk.
  const dir = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'lumina-texbench-'));
  try {
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const groups = writeGroups(images, dir);
    await cookAll(images.slice(0, Math.min(8, images.length))); // warm: module loads, sharp
    const ours: Array<{ wall: number; cpu: number; own: number }> = [];
    const cli: Array<{ wall: number; cpu: number }> = [];
    const tuned: Array<{ wall: number; cpu: number }> = [];
    let how = '';
    let tunedHow = '';
    for (let r = 0; r < rounds; r++) {
      ours.push(await measure(() => cookAll(images)));
      const c = await cliAll(exe, groups, out);
      cli.push(c);
      how = c.how;
      const t = await cliAll(exe, groups, out, basisuEnv());
      tuned.push(t);
      tunedHow = t.how;
    }
    const o = median(ours.map((x) => x.wall));
    const c = median(cli.map((x) => x.wall));
    const oc = median(ours.map((x) => x.cpu));
    const own = median(ours.map((x) => x.own));
    const cc = median(cli.map((x) => x.cpu));
    const t = median(tuned.map((x) => x.wall));
    const tc = median(tuned.map((x) => x.cpu));
    return (
      `${`texture ${label} (cook path vs basisu CLI):`.padEnd(LABEL)}${(images.length / o).toFixed(1)} textures/s, CLI (${how}) ${(images.length / c).toFixed(1)}/s: ` +
      `${(o / c).toFixed(2)}x the CLI's time, ${(oc / cc).toFixed(2)}x its CPU (${oc.toFixed(2)} s, of which the cook's own process ${own.toFixed(2)} s, vs ${cc.toFixed(2)} s); ` +
      `the CLI with the cook's malloc settings (${tunedHow}) ${(images.length / t).toFixed(1)}/s: ${(o / t).toFixed(2)}x its time, ${(oc / tc).toFixed(2)}x its CPU (${tc.toFixed(2)} s); ` +
      `medians of ${rounds} interleaved, load average ${os.loadavg()[0].toFixed(1)}`
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Run the benchmark; `count` 2048x2048 sources (default 4). Returns the report lines. */
export async function runTextureBench(opts: { count?: number; quick?: boolean } = {}): Promise<{ lines: string[] }> {
  const count = opts.count ?? 4;
  const sources: Uint8Array[] = [];
  for (let i = 0; i < count; i++) sources.push(await makeSource(i));
  const mib = sources.reduce((n, s) => n + s.byteLength, 0) / 2 ** 20;
  const lines = [`texture: ${count} x ${SIZE}x${SIZE} RGBA PNG sources (${mib.toFixed(1)} MiB), ${CORES} cores`];
  const rate = (s: number) => `${(count / s).toFixed(2)} textures/s (${((s / count) * 1000).toFixed(0)} ms each)`;

  await decodeImage(sources[0], 'warmup.png');
  const decode = await timeEach(sources, (src, i) => decodeImage(src, `bench/${i}.png`));
  lines.push(`${'texture decode only (PNG → RGBA8):'.padEnd(LABEL)}${rate(decode)}`);

  const run = (settings: TextureSettings) => timeEach(sources, (src, i) => cookTexture(src, `bench/${i}.png`, settings));
  const rgba8 = await run({ srgb: true, generateMips: true, compression: 'ETextureCompression::UserInterface' });
  lines.push(`${'texture cook RGBA8 (decode+check+sRGB mips):'.padEnd(LABEL)}${rate(rgba8)}, ${(rgba8 / decode).toFixed(2)}x the decode time`);

  if (!findBasisu().path) {
    lines.push('texture cook KTX2: skipped, no basisu binary for this platform');
    return { lines };
  }
  const etc1s = await run(DEFAULT_TEX);
  lines.push(`${'texture cook KTX2_ETC1S one at a time (2048, mips):'.padEnd(LABEL)}${rate(etc1s)}, ${(etc1s / decode).toFixed(2)}x the decode time`);

  const quick = opts.quick ?? false;
  lines.push(await throughput(quick ? '300 x 16x16' : '1500 x 16x16', gameImages(quick ? 300 : 1500, 16, 1), quick ? 1 : 3));
  lines.push(await throughput(quick ? '4 x 512x512' : '12 x 512x512', gameImages(quick ? 4 : 12, 512, 2), quick ? 1 : 3));
  return { lines };
}

// ---- quality and effort levels ----

interface LevelRow {
  label: string;
  seconds: number;
  bytes: number;
  psnr: number;
}

/**
 * One basisu CLI run over `files` with `args` (single-threaded, as the cook runs it): its CPU
 * seconds (not wall time, so other load on the machine does not reorder the levels), KTX2 bytes,
 * mean RGB PSNR.
 */
async function levelRun(exe: string, files: string[], args: string[], out: string): Promise<Omit<LevelRow, 'label'>> {
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out);
  const cpu0 = childCpuSeconds();
  await basisu(exe, [...files, ...args], out);
  const seconds = childCpuSeconds() - cpu0;
  const bytes = fs.readdirSync(out).reduce((n, f) => n + fs.statSync(path.join(out, f)).size, 0);
  // Quality from a second run with -stats (it adds a transcode and a compare per file).
  const stats = await runChild(exe, [...files, ...args, '-stats', '-output_path', out], { timeoutMs: 3_600_000, slots: null, maxStdoutBytes: 64 << 20 });
  const psnrs = [...stats.stdout.toString().matchAll(/^\.basis RGB Avg:.*PSNR:\s*([\d.]+)/gm)].map((m) => Number(m[1]));
  const psnr = psnrs.length ? psnrs.reduce((a, b) => a + b, 0) / psnrs.length : NaN;
  return { seconds, bytes, psnr };
}

/** basisu's levels on 512x512 game-like images: time, size, PSNR per setting. */
export async function runTextureLevelsBench(opts: { quick?: boolean } = {}): Promise<{ lines: string[] }> {
  const exe = findBasisu().path;
  if (!exe) return { lines: ['texture levels: skipped, no basisu binary for this platform'] };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lumina-texlevels-'));
  const lines: string[] = [];
  try {
    const images = gameImages(opts.quick ? 20 : 40, opts.quick ? 256 : 512, 3);
    const groups = writeGroups(images, dir);
    // Each kind the set has: noise albedo (t00000, t00001), a leaf cutout with alpha (t00010),
    // planks (t00011); normal maps (t00012, t00013); masks (t00017, t00018).
    const pick = (s: TextureSettings, names: string[]) => groups.find((g) => g.settings === s)!.files.filter((f) => names.some((n) => f.endsWith(`${n}.png`)));
    const albedo = pick(DEFAULT_TEX, ['t00000', 't00001', 't00010', 't00011']);
    const normals = pick(NORMAL_TEX, ['t00012', 't00013']);
    const masks = pick(MASK_TEX, ['t00017', 't00018']);
    const out = path.join(dir, 'out');
    const px = opts.quick ? 256 : 512;
    lines.push(`texture levels: basisu -max_threads 1, ${albedo.length} albedo (ETC1S), ${normals.length} normal maps and ${masks.length} masks (UASTC) of ${px}x${px} with mips`);
    lines.push(`${'  setting'.padEnd(30)}${'CPU s'.padStart(8)}${'KiB'.padStart(9)}${'PSNR dB'.padStart(9)}`);
    const row = (label: string, r: Omit<LevelRow, 'label'>) =>
      `${`  ${label}`.padEnd(30)}${r.seconds.toFixed(2).padStart(8)}${(r.bytes / 1024).toFixed(1).padStart(9)}${r.psnr.toFixed(2).padStart(9)}`;
    for (const q of [64, 128, 192, 255]) {
      for (const effort of [0, 1, 2]) {
        const levels = { ...DEFAULT_BASISU_SETTINGS, etc1sQuality: q, etc1sEffort: effort };
        lines.push(row(`ETC1S q ${q} effort ${effort}`, await levelRun(exe, albedo, cliArgs(DEFAULT_TEX, levels, 1, false), out)));
      }
    }
    for (const level of [0, 1, 2, 3]) {
      const levels = { ...DEFAULT_BASISU_SETTINGS, uastcLevel: level };
      lines.push(row(`UASTC level ${level} normals`, await levelRun(exe, normals, cliArgs(NORMAL_TEX, levels, 1, false), out)));
      lines.push(row(`UASTC level ${level} masks`, await levelRun(exe, masks, cliArgs(MASK_TEX, levels, 1, false), out)));
    }
    const d = DEFAULT_BASISU_SETTINGS;
    lines.push(`  defaults: etc1sQuality ${d.etc1sQuality}, etc1sEffort ${d.etc1sEffort}, uastcLevel ${d.uastcLevel}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { lines };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const count = Number(process.argv[2] ?? 4);
  const { lines } = await runTextureBench({ count, quick: Boolean(process.env.BENCH_QUICK) });
  for (const line of lines) console.log(line);
}
